from django.db import models


class UnitType(models.TextChoices):
    NUMBER = "number"
    CURRENCY = "currency"


class Aggregation(models.TextChoices):
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
