from django.db import models

# The labels say what each value does: they are what the dashboard offers, and they keep each
# set apart from the other apps' sets of the same values in the OpenAPI documents' enums.


class Status(models.TextChoices):
    INACTIVE = "inactive", "Inactive: nothing counts"
    ACTIVE = "active", "Active: events count"
    ARCHIVED = "archived", "Archived: hidden, nothing counts"


class Cadence(models.TextChoices):
    """A quest's period, in the user's local calendar (the streaks' periods,
    apps/streaks/domain.py), or one span of dates (`once`)."""

    DAILY = "daily"
    WEEKLY = "weekly"  # Sunday to Saturday, as streaks
    MONTHLY = "monthly"
    ONCE = "once"  # from startsOn to endsOn, both included


class PoolCadence(models.TextChoices):
    DAILY = "daily", "Daily quests"
    WEEKLY = "weekly", "Weekly quests"
    MONTHLY = "monthly", "Monthly quests"


class PoolStatus(models.TextChoices):
    ACTIVE = "active", "Active: hands out its quests"
    INACTIVE = "inactive", "Inactive: its quests are nobody's"


class GoalKind(models.TextChoices):
    METRIC = "metric"  # the metric's values sent in the period sum to at least `target`
    ACTIVE_DAYS = "active_days"  # events on at least `target` distinct local days
    STREAK = "streak"  # the streak extended (at least `target` times) in the period
    POINTS = "points"  # at least `target` points of the system gained in the period
    ACHIEVEMENT = "achievement"  # the achievement completed in the period
