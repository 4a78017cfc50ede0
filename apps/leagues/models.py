"""Leagues: weekly cohorts with tiers (README, "Leagues").

A week is one span of absolute time for the whole league ([week_start, week_end)); each user
who takes part in it has one `LeagueEntry`, in one `LeagueCohort` of their tier. The entries
are also the history: the week-end job writes each one's placement, zone and next tier."""

import uuid

from django.db import models
from django.db.models import F, Q

from apps.accounts.models import Tenant
from apps.core.models import TimestampedModel
from apps.leagues.choices import Absent, Idle, ScoreBy, Status, Weekday, Zone, ZoneUnit
from apps.metrics.models import Metric, amount_field
from apps.points.models import PointsSystem
from apps.users.models import EndUser


class League(TimestampedModel):
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="leagues")
    key = models.CharField(max_length=100)
    name = models.CharField(max_length=255)
    description = models.TextField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.INACTIVE)
    score_by = models.CharField(max_length=8, choices=ScoreBy.choices)
    metric = models.ForeignKey(
        Metric, on_delete=models.RESTRICT, null=True, blank=True, related_name="+"
    )
    points_system = models.ForeignKey(
        PointsSystem, on_delete=models.RESTRICT, null=True, blank=True, related_name="+"
    )
    week_ends_on = models.CharField(max_length=9, choices=Weekday.choices, default=Weekday.SUNDAY)
    # Minutes after the local midnight that starts `week_ends_on`: 1440 is 24:00.
    week_ends_at = models.PositiveSmallIntegerField(default=1440)
    cohort_size = models.PositiveSmallIntegerField(default=30)
    # [{"name", "promote", "demote"}], lowest tier first.
    tiers = models.JSONField(default=list)
    zone_unit = models.CharField(max_length=7, choices=ZoneUnit.choices, default=ZoneUnit.COUNT)
    idle = models.CharField(max_length=6, choices=Idle.choices, default=Idle.DEMOTE)
    absent = models.CharField(max_length=6, choices=Absent.choices, default=Absent.KEEP)
    # [{"from_place", "to_place", "tier", "points", "points_system_id", "achievement_id"}]
    rewards = models.JSONField(default=list, blank=True)
    user_attributes = models.JSONField(default=list, blank=True)  # participation filter refs

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="league_key_unique"),
            models.CheckConstraint(
                condition=Q(cohort_size__gte=5) & Q(cohort_size__lte=100),
                name="league_cohort_size_range",
            ),
            models.CheckConstraint(
                condition=Q(week_ends_at__lte=1440), name="league_week_ends_at_range"
            ),
        ]

    def __str__(self) -> str:
        # Names first, keys second: how the dashboard names it in titles and pickers.
        return f"{self.name} ({self.key})"


class LeagueCohort(models.Model):
    """Up to `capacity` users of one tier competing in one week. Exactly one cohort per week
    and tier is open (the partial unique constraint): joiners fill it in join order, and the
    one who fills it closes it."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    league = models.ForeignKey(League, on_delete=models.CASCADE, related_name="cohorts")
    week_start = models.DateTimeField()
    week_end = models.DateTimeField()
    tier = models.PositiveSmallIntegerField()  # index into League.tiers, 0 the lowest
    number = models.PositiveIntegerField()  # 1, 2, ... within the week and tier
    capacity = models.PositiveSmallIntegerField()
    members = models.PositiveSmallIntegerField(default=0)
    open = models.BooleanField(default=True)
    finished_at = models.DateTimeField(null=True, blank=True)  # the week-end job's results

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["league", "week_start", "tier", "number"], name="league_cohort_unique"
            ),
            models.UniqueConstraint(
                fields=["league", "week_start", "tier"],
                condition=Q(open=True),
                name="league_cohort_one_open",
            ),
            models.CheckConstraint(
                condition=Q(members__lte=F("capacity")), name="league_cohort_not_over"
            ),
        ]
        indexes = [
            # The week-end job's look-up of cohorts to finish.
            models.Index(
                fields=["week_end"],
                condition=Q(finished_at__isnull=True),
                name="league_cohort_unfinished_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.league_id}@{self.week_start:%Y-%m-%d}#{self.tier}.{self.number}"


class LeagueEntry(models.Model):
    """A user's week in a league: their cohort, score and, once the week is finished, its
    result. At most one per user, league and week (the unique constraint: never in two
    cohorts of one week)."""

    cohort = models.ForeignKey(LeagueCohort, on_delete=models.CASCADE, related_name="entries")
    league = models.ForeignKey(League, on_delete=models.CASCADE, related_name="+")
    week_start = models.DateTimeField()
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    tier = models.PositiveSmallIntegerField()
    score = amount_field(default=0)
    reached_at = models.DateTimeField()  # when the score was reached: ties go to the earlier
    # The moment before the last change (the webhooks' previous rank): written by the same
    # statement, which reads the row's old values.
    previous_reached_at = models.DateTimeField(null=True, blank=True)
    joined_at = models.DateTimeField()
    # The result, written once by the week-end job.
    placement = models.PositiveSmallIntegerField(null=True, blank=True)
    zone = models.CharField(max_length=9, choices=Zone.choices, null=True, blank=True)
    next_tier = models.PositiveSmallIntegerField(null=True, blank=True)
    left = models.BooleanField(default=False)  # scored nothing, and the league says leave
    rewards = models.JSONField(default=list, blank=True)  # what the placement earned
    rewards_due = models.BooleanField(default=False)  # earned, not yet paid (the job pays)

    class Meta:
        verbose_name_plural = "league entries"
        constraints = [
            models.UniqueConstraint(
                fields=["league", "user", "week_start"], name="league_entry_once_a_week"
            ),
        ]
        indexes = [
            models.Index(
                fields=["cohort", "-score", "reached_at"], name="league_entry_standing_idx"
            ),
            models.Index(
                fields=["cohort"], condition=Q(rewards_due=True), name="league_entry_due_idx"
            ),
            # A week's entries (the dashboard's weeks in numbers, the week-end's analytics).
            models.Index(fields=["league", "week_start"], name="league_entry_week_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.cohort_id}:{self.user_id}={self.score}"
