from django.db import models


class Status(models.TextChoices):
    INACTIVE = "inactive"
    ACTIVE = "active"
    ARCHIVED = "archived"


class ScoreBy(models.TextChoices):
    METRIC = "metric"  # the metric's values sent during the week
    POINTS = "points"  # the points of a system earned during the week


class Weekday(models.TextChoices):
    # In the order of datetime.date.weekday() (Monday is 0).
    MONDAY = "monday"
    TUESDAY = "tuesday"
    WEDNESDAY = "wednesday"
    THURSDAY = "thursday"
    FRIDAY = "friday"
    SATURDAY = "saturday"
    SUNDAY = "sunday"


class ZoneUnit(models.TextChoices):
    COUNT = "count"  # promote/demote so many places
    PERCENT = "percent"  # of the cohort's members, rounded down


class Idle(models.TextChoices):
    """What happens to a member who took part in a week but scored nothing (0 or less)."""

    DEMOTE = "demote"  # ranked as usual, and goes down a tier even outside the demotion zone
    LEAVE = "leave"  # leaves the league: joins again, when they come back, in the lowest tier


class Absent(models.TextChoices):
    """What a member who skipped one or more weeks finds when they come back."""

    KEEP = "keep"  # the tier they had earned
    DEMOTE = "demote"  # one tier lower


class Zone(models.TextChoices):
    PROMOTION = "promotion"
    SAFE = "safe"
    DEMOTION = "demotion"


class WeekStatus(models.TextChoices):
    OPEN = "open"
    FINISHED = "finished"
