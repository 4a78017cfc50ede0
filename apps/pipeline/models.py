import uuid

from django.db import models

from apps.accounts.models import Tenant


class QueuedEventStatus(models.TextChoices):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class QueuedEvent(models.Model):
    """An event accepted by the admin batch endpoint, waiting to go through the pipeline.

    Rows are processed one user at a time, in `seq` order, and marked done in the same
    transaction as their pipeline runs, so a crash either processes an event and marks it
    done, or neither.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    batch_id = models.UUIDField(default=uuid.uuid4, db_index=True)
    seq = models.PositiveIntegerField()
    payload = models.JSONField()
    status = models.CharField(
        max_length=8, choices=QueuedEventStatus.choices, default=QueuedEventStatus.PENDING
    )
    error = models.TextField(blank=True, default="")
    accepted_at = models.DateTimeField()
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["batch_id", "seq"], name="queued_event_seq_unique"),
        ]
        indexes = [
            # The purge job looks for old processed rows.
            models.Index(fields=["status", "accepted_at"], name="queued_event_pending_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.batch_id}#{self.seq} ({self.status})"


class BatchRequest(models.Model):
    """A batch sent with an Idempotency-Key header: a replay of the key answers the original
    `accepted` and stores nothing. Purged with the batch's processed rows."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    idempotency_key = models.CharField(max_length=255)
    batch_id = models.UUIDField()
    accepted = models.PositiveIntegerField()
    created = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "idempotency_key"], name="batch_request_key_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.idempotency_key} -> {self.batch_id}"
