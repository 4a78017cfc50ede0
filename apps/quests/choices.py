from django.db import models


class Status(models.TextChoices):
    INACTIVE = "inactive"
    ACTIVE = "active"
    ARCHIVED = "archived"


class Cadence(models.TextChoices):
    """A quest's period, in the user's local calendar (the streaks' periods,
    apps/streaks/domain.py), or one span of dates (`once`)."""

    DAILY = "daily"
    WEEKLY = "weekly"  # Sunday to Saturday, as streaks
    MONTHLY = "monthly"
    ONCE = "once"  # from startsOn to endsOn, both included


class PoolCadence(models.TextChoices):
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"


class PoolStatus(models.TextChoices):
    ACTIVE = "active"
    INACTIVE = "inactive"


class GoalKind(models.TextChoices):
    METRIC = "metric"  # the metric's values sent in the period sum to at least `target`
    ACTIVE_DAYS = "active_days"  # events on at least `target` distinct local days
    STREAK = "streak"  # the streak extended (at least `target` times) in the period
    POINTS = "points"  # at least `target` points of the system gained in the period
    ACHIEVEMENT = "achievement"  # the achievement completed in the period
