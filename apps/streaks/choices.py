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
