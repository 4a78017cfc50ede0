from django.db import models


class Verdict(models.TextChoices):
    """What an Impact Score says (analytics.domain.difference_estimate)."""

    SIGNIFICANT = "significant"
    NOT_SIGNIFICANT = "notSignificant"  # the interval contains 0
    TOO_FEW_USERS = "tooFewUsers"  # a group is below MIN_GROUP_USERS (or empty)
    NO_USERS = "noUsers"  # nobody in either group has reached day 14
