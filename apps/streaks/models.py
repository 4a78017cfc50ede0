import uuid

from django.db import models
from django.db.models import Q

from apps.accounts.models import Tenant
from apps.metrics.models import Metric, amount_field
from apps.streaks.choices import EvaluationMode, Frequency, PauseStatus
from apps.users.models import EndUser


class StreakSettings(models.Model):
    """A tenant's streak configuration (admin API GET/PATCH /streaks/settings)."""

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, related_name="streak_settings")
    frequency = models.CharField(max_length=8, choices=Frequency.choices, default=Frequency.DAILY)
    evaluation_mode = models.CharField(
        max_length=3, choices=EvaluationMode.choices, default=EvaluationMode.AND
    )
    customization_enabled = models.BooleanField(default=False)
    days_off = models.JSONField(default=list, blank=True)  # 0 = Sunday; daily only
    freezes_enabled = models.BooleanField(default=False)
    freeze_start_count = models.PositiveIntegerField(default=0)
    freeze_max_count = models.PositiveIntegerField(default=0)
    freeze_auto_earn_interval = models.PositiveIntegerField(null=True, blank=True)  # days
    freeze_auto_earn_amount = models.PositiveIntegerField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "streak settings"
        constraints = [
            models.CheckConstraint(
                condition=Q(freeze_max_count__gte=models.F("freeze_start_count")),
                name="streak_freeze_max_at_least_start",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tenant} ({self.frequency})"


class StreakCondition(models.Model):
    """One metric of the streak conditions, with the minimum change required per period."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="+")
    threshold = amount_field()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "metric"], name="streak_condition_unique"),
            models.CheckConstraint(condition=Q(threshold__gt=0), name="streak_threshold_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.metric_id} >= {self.threshold}"


class StreakState(models.Model):
    """A user's current streak: the stored state the domain rules derive everything from."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.OneToOneField(EndUser, on_delete=models.CASCADE, related_name="streak")
    frequency = models.CharField(max_length=8, choices=Frequency.choices)
    length = models.PositiveIntegerField(default=0)
    started = models.DateField(null=True, blank=True)
    settled_through = models.DateField(null=True, blank=True)
    extended_at = models.DateTimeField(null=True, blank=True)
    # The time zone of the user's last extension (see domain.current_period).
    tz = models.CharField(max_length=64, null=True, blank=True)
    # When a whole period will have been missed (local midnight, as an instant): the freeze job
    # settles exactly the live streaks that are due, at their local midnight.
    due_at = models.DateTimeField(null=True, blank=True)
    freezes = models.PositiveIntegerField(default=0)
    freezes_earned_on = models.DateField(null=True, blank=True)
    # Personalization (PATCH /users/{id}/preferences, streak part); null = tenant setting.
    enabled = models.BooleanField(default=True)
    pref_mode = models.CharField(
        max_length=3, choices=EvaluationMode.choices, null=True, blank=True
    )
    pref_thresholds = models.JSONField(null=True, blank=True)  # {metric key: threshold}
    pref_days_off = models.JSONField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["due_at"], condition=Q(length__gt=0), name="streak_state_due_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.length}"


class StreakPeriod(models.Model):
    """What happened in one period of a user's streak: extended, kept by a freeze or a pause,
    or reset. Periods without a row were either days off or missed."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="streak_periods")
    frequency = models.CharField(max_length=8, choices=Frequency.choices)
    period_start = models.DateField()
    period_end = models.DateField()
    length = models.PositiveIntegerField(default=0)  # the streak's length at the period's end
    extended = models.BooleanField(default=False)
    used_freeze = models.BooleanField(default=False)
    used_pause = models.BooleanField(default=False)
    reset_at = models.DateTimeField(null=True, blank=True)
    # A restore carried the streak through this period (services.streak_restore): its length
    # is the restored one, and a reset before the restore no longer stands (a reset after it
    # clears this).
    restored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "frequency", "period_start"], name="streak_period_unique"
            ),
        ]
        # Active streaks over time (dashboard analytics).
        indexes = [
            models.Index(
                fields=["tenant", "frequency", "period_start"], name="streak_period_tenant_idx"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.period_start}: {self.length}"

    @property
    def reset_stands(self) -> bool:
        """Reset, and not restored since: the period ended at 0."""
        return self.reset_at is not None and self.restored_at is None


class StreakPause(models.Model):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="streak_pauses")
    start = models.DateField()
    end = models.DateField()
    status = models.CharField(max_length=8, choices=PauseStatus.choices, default=PauseStatus.ACTIVE)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(end__gte=models.F("start")), name="streak_pause_end_after_start"
            ),
        ]
        indexes = [models.Index(fields=["user", "status", "end"], name="streak_pause_user_idx")]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.start}..{self.end}"


class StreakLoss(models.Model):
    """A streak that was lost: its length and the moment the period that broke it ended, as
    the settlement that found it wrote it (an event, the settle job, or an admin operation
    settling first). Support lists the recent ones and restores them; a restore marks the
    losses it made good."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="streak_losses")
    frequency = models.CharField(max_length=8, choices=Frequency.choices)
    length = models.PositiveIntegerField()
    # The first period nothing kept (the user's calendar), and the instant it ended.
    missed_period = models.DateField()
    lost_at = models.DateTimeField()
    restored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "streak lost"
        verbose_name_plural = "streaks lost"
        constraints = [
            # A settled loss is settled once: a repeated settlement writes nothing new.
            models.UniqueConstraint(
                fields=["user", "frequency", "missed_period"], name="streak_loss_unique"
            ),
        ]
        indexes = [
            # The support list: a tenant's losses of the last days, newest first.
            models.Index(fields=["tenant", "lost_at"], name="streak_loss_recent_idx"),
            # The purge of old ones (apps/streaks/jobs.py), across tenants.
            models.Index(fields=["lost_at"], name="streak_loss_purge_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.length} lost {self.missed_period}"
