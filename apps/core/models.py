from django.db import models


class TimestampedModel(models.Model):
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class PeriodicJobRun(models.Model):
    """When each periodic job last started. A conditional update on this row is how a job is
    claimed, so two schedulers (beat and a cron `run_periodic_jobs`) never run it twice."""

    name = models.CharField(max_length=100, unique=True)
    last_started_at = models.DateTimeField(null=True, blank=True)
    last_finished_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return self.name


class OutboxTask(models.Model):
    """A piece of background work a write needs (backdating, a batch, a delivery run), recorded
    in the write's own transaction: the work exists exactly when the write does. apps/core/outbox
    sends it after commit and its sweep sends it again until a run succeeds (then the row goes)."""

    task = models.CharField(max_length=200)  # the Celery task's name, also its import path
    args = models.JSONField(default=list)
    key = models.CharField(max_length=300, db_index=True)  # task and args: equal keys, same work
    created = models.DateTimeField()
    available_at = models.DateTimeField(db_index=True)  # the sweep sends it (again) from then on
    locked_until = models.DateTimeField(null=True, blank=True)  # a run holds it until then
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    # Set after apps/core/outbox.MAX_ATTEMPTS failed runs: the sweep leaves the row alone.
    failed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.key
