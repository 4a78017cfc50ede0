from django.db import models


class AttributeType(models.TextChoices):
    USER = "user"
    EVENT = "event"
