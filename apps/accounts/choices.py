from django.db import models


class TenantStatus(models.TextChoices):
    ACTIVE = "active"
    ARCHIVED = "archived"


class ApiKeyKind(models.TextChoices):
    ADMIN = "admin"
    APPLICATION = "application"


class AggregationPeriod(models.TextChoices):
    WEEKLY = "weekly"
    MONTHLY = "monthly"


class FontFamily(models.TextChoices):
    MODERN_SANS = "MODERN_SANS"
    BOOK_SANS = "BOOK_SANS"
    ORGANIC_SANS = "ORGANIC_SANS"
    GEOMETRIC_SANS = "GEOMETRIC_SANS"
    HEAVY_SANS = "HEAVY_SANS"
    ROUNDED_SANS = "ROUNDED_SANS"
    MODERN_SERIF = "MODERN_SERIF"
    BOOK_SERIF = "BOOK_SERIF"
    MONOSPACE = "MONOSPACE"
