from django.db import models


class Frequency(models.TextChoices):
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"


class EvaluationMode(models.TextChoices):
    AND = "AND"
    OR = "OR"


class PauseStatus(models.TextChoices):
    ACTIVE = "active"
    ARCHIVED = "archived"


class Weekday(models.IntegerChoices):
    # The numbering of `daysOff` (reference §3.2): 0 is Sunday.
    SUNDAY = 0
    MONDAY = 1
    TUESDAY = 2
    WEDNESDAY = 3
    THURSDAY = 4
    FRIDAY = 5
    SATURDAY = 6
