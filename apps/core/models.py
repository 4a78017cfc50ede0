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
