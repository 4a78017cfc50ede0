import uuid

from django.db import models
from django.db.models import Q

from apps.accounts.models import Tenant
from apps.achievements.choices import Status, Trigger
from apps.core.models import TimestampedModel
from apps.metrics.models import Metric, amount_field
from apps.users.models import EndUser


class Achievement(TimestampedModel):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="achievements")
    name = models.CharField(max_length=255)
    description = models.TextField(null=True, blank=True)
    badge_url = models.URLField(max_length=2000, null=True, blank=True)
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.INACTIVE)
    key = models.CharField(max_length=100, null=True, blank=True)  # api trigger
    metric = models.ForeignKey(
        Metric, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    metric_value = amount_field(null=True, blank=True)
    streak_length = models.PositiveIntegerField(null=True, blank=True)
    anniversary_years = models.PositiveIntegerField(null=True, blank=True)
    prerequisites = models.ManyToManyField(
        "self",
        symmetrical=False,
        blank=True,
        related_name="required_by",
        through="AchievementPrerequisite",
        through_fields=("composite", "prerequisite"),
    )
    # [{"attributeId": uuid, "attributeValue": str}], as the admin API speaks them.
    user_attributes = models.JSONField(default=list, blank=True)
    event_attributes = models.JSONField(default=list, blank=True)  # metric trigger only

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "key"],
                condition=Q(key__isnull=False),
                name="achievement_key_unique",
            ),
        ]

    def __str__(self) -> str:
        # Names first, keys second (an achievement's key is optional).
        return f"{self.name} ({self.key})" if self.key else self.name


class AchievementPrerequisite(models.Model):
    """A composite requires a prerequisite. PROTECT: a prerequisite cannot disappear under a
    composite, not even through a cascade (deleting the metric it counts); the composite
    would otherwise complete with fewer requirements than configured."""

    composite = models.ForeignKey(Achievement, on_delete=models.CASCADE, related_name="+")
    prerequisite = models.ForeignKey(Achievement, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["composite", "prerequisite"], name="achievement_prerequisite_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.composite_id} needs {self.prerequisite_id}"


class AchievementCompletion(models.Model):
    """A user completed an achievement. The unique constraint, not a check, guarantees it
    happens at most once, also under concurrency and replays."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    achievement = models.ForeignKey(
        Achievement, on_delete=models.CASCADE, related_name="completions"
    )
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="achievements")
    completed_at = models.DateTimeField()
    # Completed by backdating (activation or edit): silent, no notification nor webhook.
    backdated = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["achievement", "user"], name="achievement_completion_once"
            ),
        ]
        indexes = [
            models.Index(fields=["user", "completed_at"], name="completion_user_idx"),
            # Completions per day across the tenant (dashboard analytics).
            models.Index(fields=["tenant", "completed_at"], name="completion_tenant_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.achievement_id}"
