from django.db import models


class Trigger(models.TextChoices):
    METRIC = "metric"
    STREAK = "streak"
    API = "api"
    ACHIEVEMENT = "achievement"  # composite: all prerequisites completed
    ANNIVERSARY = "anniversary"


class Status(models.TextChoices):
    INACTIVE = "inactive"  # invisible, cannot be completed
    ACTIVE = "active"
    LOCKED = "locked"  # no new completions; shown only to users who completed it
