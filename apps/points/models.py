import uuid

from django.db import models
from django.db.models import Q

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from apps.core.models import TimestampedModel
from apps.metrics.models import Metric
from apps.points.choices import Rounding, SystemStatus, TimeUnit, TriggerStatus, TriggerType
from apps.users.models import EndUser


class PointsSystem(TimestampedModel):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="points_systems")
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=255)
    description = models.TextField(blank=True, default="")
    badge_url = models.URLField(max_length=2000, null=True, blank=True)
    max_points = models.PositiveBigIntegerField(null=True, blank=True)
    status = models.CharField(
        max_length=8, choices=SystemStatus.choices, default=SystemStatus.ACTIVE
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="points_system_key_unique"),
        ]

    def __str__(self) -> str:
        # Names first, keys second: how the dashboard names it in titles and pickers.
        return f"{self.name} ({self.key})"


class PointsLevel(models.Model):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    system = models.ForeignKey(PointsSystem, on_delete=models.CASCADE, related_name="levels")
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=255)
    description = models.TextField(blank=True, default="")
    badge_url = models.URLField(max_length=2000, null=True, blank=True)
    points = models.PositiveBigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["system", "key"], name="points_level_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.key}, {self.points})"


class PointsBoost(TimestampedModel):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    system = models.ForeignKey(PointsSystem, on_delete=models.CASCADE, related_name="boosts")
    name = models.CharField(max_length=255)
    start = models.DateField()
    end = models.DateField(null=True, blank=True)  # inclusive; None = open-ended
    multiplier = models.DecimalField(max_digits=8, decimal_places=4)
    rounding = models.CharField(max_length=8, choices=Rounding.choices, default=Rounding.DOWN)
    user = models.ForeignKey(
        EndUser, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    user_attributes = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(multiplier__gt=0) & Q(multiplier__lt=100) & ~Q(multiplier=1),
                name="points_boost_multiplier_range",
            ),
            models.CheckConstraint(
                condition=Q(end__isnull=True) | Q(end__gte=models.F("start")),
                name="points_boost_end_after_start",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} x{self.multiplier}"


class PointsTrigger(TimestampedModel):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    system = models.ForeignKey(PointsSystem, on_delete=models.CASCADE, related_name="triggers")
    type = models.CharField(max_length=16, choices=TriggerType.choices)
    points = models.BigIntegerField()
    status = models.CharField(
        max_length=8, choices=TriggerStatus.choices, default=TriggerStatus.INACTIVE
    )
    user_attributes = models.JSONField(default=list, blank=True)
    metric = models.ForeignKey(
        Metric, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    metric_threshold = models.PositiveBigIntegerField(null=True, blank=True)
    event_attributes = models.JSONField(default=list, blank=True)
    achievement = models.ForeignKey(
        Achievement, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    streak_length = models.PositiveIntegerField(null=True, blank=True)
    time_unit = models.CharField(max_length=5, choices=TimeUnit.choices, null=True, blank=True)
    time_interval = models.PositiveIntegerField(null=True, blank=True)
    block_if_out_of_points = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(points=0), name="points_trigger_points_nonzero"),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.points:+d}"


class PointsTotal(models.Model):
    """A user's balance in one system and current level. Changes only together with a ledger
    row, under the user's lock."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="points_totals")
    system = models.ForeignKey(PointsSystem, on_delete=models.CASCADE, related_name="totals")
    total = models.BigIntegerField(default=0)
    level = models.ForeignKey(
        PointsLevel, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # First activity for time triggers ("every N hours since the user's first activity").
    first_activity_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "system"], name="points_total_unique"),
        ]
        indexes = [models.Index(fields=["system", "total"], name="points_total_rank_idx")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.system_id}={self.total}"


class PointsAward(models.Model):
    """The append-only ledger. `dedupe_key` makes each award exactly-once: a replayed event or
    a job run twice computes the same key and the unique constraint refuses the second row."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="points_awards")
    system = models.ForeignKey(PointsSystem, on_delete=models.CASCADE, related_name="awards")
    trigger = models.ForeignKey(
        PointsTrigger, on_delete=models.SET_NULL, null=True, blank=True, related_name="awards"
    )
    trigger_snapshot = models.JSONField(default=dict)  # the trigger as it was, for history
    awarded = models.BigIntegerField()
    total_after = models.BigIntegerField()
    boosts = models.JSONField(default=list, blank=True)  # the boosts applied, as rendered
    dedupe_key = models.CharField(max_length=200)
    created = models.DateTimeField()
    local_date = models.DateField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["system", "user", "dedupe_key"], name="points_award_once"
            ),
        ]
        indexes = [
            models.Index(fields=["user", "system", "created"], name="points_award_user_idx"),
            # Tenant-wide series by day (dashboard analytics).
            models.Index(fields=["tenant", "local_date"], name="points_award_tenant_date_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.system_id}{self.awarded:+d}"


class PointsTriggerMark(models.Model):
    """Per user and trigger, how far a repeating trigger has paid: the highest metric multiple
    or streak multiple, or the number of time intervals."""

    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    trigger = models.ForeignKey(PointsTrigger, on_delete=models.CASCADE, related_name="marks")
    mark = models.BigIntegerField(default=0)
    # Time triggers: when the next interval completes, so the job reads only users due.
    due_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "trigger"], name="points_trigger_mark_unique"),
        ]
        indexes = [models.Index(fields=["trigger", "due_at"], name="points_mark_due_idx")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.trigger_id}@{self.mark}"


class PointsDailyChange(models.Model):
    """Per user, system and local date: the net points change (for event summaries)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    system = models.ForeignKey(PointsSystem, on_delete=models.CASCADE, related_name="+")
    date = models.DateField()
    change = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "system", "date"], name="points_daily_change_unique"
            ),
        ]
        # A system's changes over a period, across users (wrapped percentiles).
        indexes = [models.Index(fields=["system", "date"], name="points_daily_system_date_idx")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.system_id}@{self.date}={self.change}"
