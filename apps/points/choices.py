from django.db import models


class SystemStatus(models.TextChoices):
    ACTIVE = "active"
    ARCHIVED = "archived"


class TriggerType(models.TextChoices):
    METRIC = "metric"
    STREAK = "streak"
    ACHIEVEMENT = "achievement"
    TIME = "time"
    USER_CREATION = "user_creation"


class ExtensionTriggerType(models.TextChoices):
    """Trigger types that only gamify's extensions fire. None is configured as a points trigger
    (Trophy's five are the only ones its API and documents know): each names what paid a
    triggerless award, as the type of the award's trigger snapshot, which the dashboard's
    ledger and the points analytics by trigger type show. The application API's award leaves
    such a trigger out, as Trophy's documents describe no such type."""

    QUEST = "quest"  # a quest's reward (apps/pipeline/quests.py)


class TriggerStatus(models.TextChoices):
    ACTIVE = "active"
    INACTIVE = "inactive"


class TimeUnit(models.TextChoices):
    # The admin API spells them hours/days, the application API hour/day (reference §6.3).
    HOURS = "hours"
    DAYS = "days"


class Rounding(models.TextChoices):
    DOWN = "down"
    UP = "up"
    NEAREST = "nearest"


class BoostStatus(models.TextChoices):
    SCHEDULED = "scheduled"
    ACTIVE = "active"
    FINISHED = "finished"
