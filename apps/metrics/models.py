import uuid
from typing import Any

from django.db import models
from django.db.models import Q

from apps.accounts.models import Tenant
from apps.core.models import TimestampedModel
from apps.metrics.choices import UnitType
from apps.users.models import EndUser


def amount_field(**kwargs: Any) -> models.DecimalField:
    """Values and totals are exact decimals: 18 integer digits and 6 decimal places. Floats
    would make 0.1 + 0.2 != 0.3 and drift over millions of events."""
    return models.DecimalField(max_digits=24, decimal_places=6, **kwargs)


class Metric(TimestampedModel):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="metrics")
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=255)
    unit_type = models.CharField(max_length=16, choices=UnitType.choices, default=UnitType.NUMBER)
    units = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="metric_key_unique"),
        ]

    def __str__(self) -> str:
        # Names first, keys second: how the dashboard names it in titles and pickers.
        return f"{self.name} ({self.key})"


class MetricEvent(models.Model):
    """One recorded event. Append-only."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="events")
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="events")
    value = amount_field()
    # The user's total of this metric after this event: history without re-summing.
    total_after = amount_field()
    attributes = models.JSONField(default=dict, blank=True)
    idempotency_key = models.CharField(max_length=255, null=True, blank=True)
    occurred_at = models.DateTimeField()
    # The user's local date at the time of the event, in the time zone the user had then.
    local_date = models.DateField()

    class Meta:
        constraints = [
            # The arbiter of idempotency (reference §4.1: scope is user + metric + key).
            models.UniqueConstraint(
                fields=["tenant", "user", "metric", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="metric_event_idempotency_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["user", "metric", "occurred_at"], name="metric_event_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.metric_id}:{self.user_id}:{self.value}"


class MetricTotal(models.Model):
    """A user's running total of one metric."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="metric_totals")
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="totals")
    total = amount_field(default=0)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "metric"], name="metric_total_unique"),
        ]
        indexes = [models.Index(fields=["metric", "total"], name="metric_total_rank_idx")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.metric_id}={self.total}"


class MetricDailyChange(models.Model):
    """Per user, metric and local date: the net change that day (the daily rollup)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="+")
    date = models.DateField()
    change = amount_field(default=0)
    events = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "metric", "date"], name="metric_daily_change_unique"
            ),
        ]
        # Tenant-wide series by day (dashboard analytics, home page).
        indexes = [models.Index(fields=["tenant", "date"], name="metric_daily_tenant_date_idx")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.metric_id}@{self.date}={self.change}"


class UndoneEvent(models.Model):
    """An event undone by an administrator (apps/pipeline/undo.py): the event row stays (its
    idempotency key still answers a retry, which then counts nothing) and this row marks it,
    with who undid it and why. Reads that sum events skip marked ones; totals, rollups and
    what the steps derived were set right when it was written."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    event = models.OneToOneField(MetricEvent, on_delete=models.CASCADE, related_name="undone")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    # One undo of one user's events (one transaction) shares it.
    undo_id = models.UUIDField(default=uuid.uuid4)
    reason = models.CharField(max_length=500)
    revoke_achievements = models.BooleanField(default=False)
    actor_kind = models.CharField(max_length=16)  # staff, api_key, command, system
    actor = models.CharField(max_length=255)
    staff_id = models.IntegerField(null=True, blank=True)
    api_key_id = models.IntegerField(null=True, blank=True)
    undone_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["tenant", "undone_at"], name="undone_event_tenant_idx")]

    def __str__(self) -> str:
        return f"undone {self.event_id}"
