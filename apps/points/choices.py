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
