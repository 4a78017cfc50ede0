from django.db import models


class RankBy(models.TextChoices):
    METRIC = "metric"
    POINTS = "points"
    STREAK = "streak"


class Status(models.TextChoices):
    INACTIVE = "inactive"
    SCHEDULED = "scheduled"
    ACTIVE = "active"
    FINISHED = "finished"


class RunUnit(models.TextChoices):
    DAY = "day"
    MONTH = "month"
    YEAR = "year"
