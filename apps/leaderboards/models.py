import uuid

from django.db import models
from django.db.models import Q

from apps.accounts.models import Tenant
from apps.core.models import TimestampedModel
from apps.leaderboards.choices import RankBy, RunUnit, Status
from apps.metrics.models import Metric, amount_field
from apps.points.models import PointsSystem
from apps.users.models import EndUser


class Leaderboard(TimestampedModel):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="leaderboards")
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=255)
    description = models.TextField(null=True, blank=True)
    rank_by = models.CharField(max_length=8, choices=RankBy.choices)
    metric = models.ForeignKey(
        Metric, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    points_system = models.ForeignKey(
        PointsSystem, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.INACTIVE)
    max_participants = models.PositiveIntegerField(default=1000)
    start = models.DateField()
    end = models.DateField(null=True, blank=True)
    start_time = models.TimeField(null=True, blank=True)
    end_time = models.TimeField(null=True, blank=True)
    run_unit = models.CharField(max_length=5, choices=RunUnit.choices, null=True, blank=True)
    run_interval = models.PositiveIntegerField(null=True, blank=True)
    breakdown_attributes = models.JSONField(default=list, blank=True)  # user attribute ids
    user_attributes = models.JSONField(default=list, blank=True)  # participation filter refs

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="leaderboard_key_unique"),
            models.CheckConstraint(
                # The API allows up to LEADERBOARD_MAX_PARTICIPANTS (at most 10,000,000).
                condition=Q(max_participants__gte=1) & Q(max_participants__lte=10_000_000),
                name="leaderboard_max_participants_range",
            ),
        ]

    def __str__(self) -> str:
        # Names first, keys second: how the dashboard names it in titles and pickers.
        return f"{self.name} ({self.key})"


class LeaderboardEntry(models.Model):
    """A participant's value in one run (and breakdown group) of a board. Ranks are derived, in
    the order of leaderboards.domain.RANK_ORDER (whose leading keys the rank index serves)."""

    leaderboard = models.ForeignKey(Leaderboard, on_delete=models.CASCADE, related_name="entries")
    run_start = models.DateField()
    group = models.CharField(max_length=1000, blank=True, default="")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    value = amount_field(default=0)
    reached_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "leaderboard entries"
        constraints = [
            models.UniqueConstraint(
                fields=["leaderboard", "run_start", "group", "user"],
                name="leaderboard_entry_unique",
            ),
        ]
        indexes = [
            models.Index(
                fields=["leaderboard", "run_start", "group", "-value", "reached_at"],
                name="leaderboard_rank_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.leaderboard_id}@{self.run_start}:{self.user_id}={self.value}"


class LeaderboardSnapshot(models.Model):
    """A participant's rank and value at the end of one local day (the user history)."""

    leaderboard = models.ForeignKey(Leaderboard, on_delete=models.CASCADE, related_name="snapshots")
    run_start = models.DateField()
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    date = models.DateField()
    rank = models.PositiveIntegerField(null=True, blank=True)
    value = amount_field(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["leaderboard", "run_start", "user", "date"],
                name="leaderboard_snapshot_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.leaderboard_id}:{self.user_id}@{self.date}#{self.rank}"
