from django.db import models


class RuleKind(models.TextChoices):
    POINTS = "points", "Points of a system"
    METRIC = "metric", "Value of a metric"
    EVENTS = "events", "Events (any metric)"


class RuleStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    INACTIVE = "inactive", "Inactive"


class FlagStatus(models.TextChoices):
    OPEN = "open", "Open"
    DISMISSED = "dismissed", "Dismissed"
    EXCLUDED = "excluded", "Excluded"
