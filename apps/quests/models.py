"""Quests: goals per period with a reward (README, "Quests").

A `Quest` is a definition; a `QuestPool` hands each user some of its quests per period. A
user's progress in one quest and period is one `QuestProgress` row, written by the event
pipeline's quests step; the unique constraint makes a completion (and its reward) once per
user, quest and period. The rows are also the history."""

import uuid

from django.db import models
from django.db.models import Q

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from apps.core.models import TimestampedModel
from apps.points.models import PointsSystem
from apps.quests.choices import Cadence, PoolCadence, PoolStatus, Status
from apps.users.models import EndUser


class Quest(TimestampedModel):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="quests")
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=255)
    description = models.TextField(null=True, blank=True)
    badge_url = models.URLField(max_length=2000, null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.INACTIVE)
    # The last time it became active: progress counts from then (README, "Quests").
    activated_at = models.DateTimeField(null=True, blank=True)
    cadence = models.CharField(max_length=8, choices=Cadence.choices)
    starts_on = models.DateField(null=True, blank=True)  # once quests
    ends_on = models.DateField(null=True, blank=True)
    # [{"kind", "target", "metric_id", "points_system_id", "achievement_id"}], public ids
    goals = models.JSONField(default=list)
    reward_points = models.BigIntegerField(default=0)
    reward_points_system = models.ForeignKey(
        PointsSystem, on_delete=models.RESTRICT, null=True, blank=True, related_name="+"
    )
    reward_achievement = models.ForeignKey(
        Achievement, on_delete=models.RESTRICT, null=True, blank=True, related_name="+"
    )
    user_attributes = models.JSONField(default=list, blank=True)  # filter refs

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="quest_key_unique"),
            models.CheckConstraint(condition=Q(reward_points__gte=0), name="quest_reward_points"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.key})"


class QuestPool(TimestampedModel):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="quest_pools")
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=255)
    status = models.CharField(max_length=8, choices=PoolStatus.choices, default=PoolStatus.ACTIVE)
    cadence = models.CharField(max_length=7, choices=PoolCadence.choices)
    size = models.PositiveSmallIntegerField()
    # [{"quest_id", "weight", "added_at"}]: added_at keeps a quest added mid-period out of the
    # users' current sets (domain.candidates_at).
    members = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="quest_pool_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.key})"


class QuestProgress(models.Model):
    """A user's progress in one quest and period. `completed_at` is set once, by the event
    that met the last goal, which pays the reward (the points ledger's dedupe key names this
    row's quest, user and period)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    quest = models.ForeignKey(Quest, on_delete=models.CASCADE, related_name="progress")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    period_first = models.DateField()  # the period's first local date
    period_last = models.DateField()
    period_end = models.DateTimeField()  # the moment it ends (exclusive)
    goals = models.JSONField(default=list)  # [{"value", "last"?}], as the quest's goals
    started_at = models.DateTimeField()  # the first event that counted
    updated_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)
    reward_points = models.BigIntegerField(default=0)  # what the completion paid

    class Meta:
        verbose_name_plural = "quest progress"
        constraints = [
            models.UniqueConstraint(
                fields=["quest", "user", "period_first"], name="quest_progress_once"
            ),
        ]
        indexes = [
            models.Index(fields=["user", "period_end"], name="quest_progress_user_idx"),
            models.Index(fields=["quest", "period_first"], name="quest_progress_period_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.quest_id}:{self.user_id}@{self.period_first}"
