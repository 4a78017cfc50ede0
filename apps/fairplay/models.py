"""Fair play's tables: the tenants' anomaly rules, what each user did in a rule's current
window, and the flags a rule raised (README, "Fair play"). An exclusion itself is on the user
row (apps/users/models.py)."""

import uuid

from django.db import models
from django.db.models import Q

from apps.accounts.models import Tenant
from apps.core.models import TimestampedModel
from apps.fairplay.choices import FlagStatus, RuleKind, RuleStatus
from apps.metrics.models import Metric, amount_field
from apps.points.models import PointsSystem
from apps.users.models import EndUser


class AnomalyRule(TimestampedModel):
    """More than `threshold` (points of a system, value of a metric, or events) for one user
    within one window of `window_minutes`: the user is flagged, once a window."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="anomaly_rules")
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=255)
    kind = models.CharField(max_length=8, choices=RuleKind.choices)
    metric = models.ForeignKey(
        Metric, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    points_system = models.ForeignKey(
        PointsSystem, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    threshold = amount_field()
    window_minutes = models.PositiveIntegerField()
    status = models.CharField(max_length=8, choices=RuleStatus.choices, default=RuleStatus.ACTIVE)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="anomaly_rule_key_unique"),
            models.CheckConstraint(
                condition=Q(window_minutes__gte=1) & Q(window_minutes__lte=10080),
                name="anomaly_rule_window_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.key})"


class AnomalyCount(models.Model):
    """What one user did in one window of one rule (its start): written by the event path, one
    statement per rule that counts the event."""

    rule = models.ForeignKey(AnomalyRule, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    window_start = models.DateTimeField()
    total = amount_field(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "user", "window_start"], name="anomaly_count_unique"
            ),
        ]
        indexes = [models.Index(fields=["window_start"], name="anomaly_count_window_idx")]

    def __str__(self) -> str:
        return f"{self.rule_id}:{self.user_id}@{self.window_start}={self.total}"


class UserFlag(models.Model):
    """A user a rule matched in one window, with the evidence: at most one per rule, user and
    window. Flagged, not blocked: staff exclude the user (apps/fairplay/services.py) or dismiss
    the flag."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    rule = models.ForeignKey(AnomalyRule, on_delete=models.CASCADE, related_name="flags")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    observed = amount_field()  # the user's total in the window when it passed the threshold
    threshold = amount_field()  # the rule's, then
    flagged_at = models.DateTimeField()
    status = models.CharField(max_length=9, choices=FlagStatus.choices, default=FlagStatus.OPEN)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "user", "window_start"], name="user_flag_once_a_window"
            ),
        ]
        indexes = [
            models.Index(fields=["tenant", "status", "-flagged_at"], name="user_flag_open_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} by {self.rule_id} at {self.window_start}"
