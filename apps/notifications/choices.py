from django.db import models


class NotificationType(models.TextChoices):
    ACHIEVEMENT_COMPLETED = "achievement_completed", "Achievement completed"
    RECAP = "recap", "Recap"
    REACTIVATION = "reactivation", "Reactivation"
    STREAK_REMINDER = "streak_reminder", "Streak reminder"
    # gamify's own (README, "Leagues"): not in Trophy's preferences.
    LEAGUE_RESULT = "league_result", "League result"
    LEAGUE_AT_RISK = "league_at_risk", "League at risk"
    # gamify's own (README, "Quests").
    QUEST_REMINDER = "quest_reminder", "Quest reminder"


# Trophy's types: those its preferences body (GET/PATCH /users/{id}/preferences) knows.
TROPHY_TYPES = (
    NotificationType.ACHIEVEMENT_COMPLETED,
    NotificationType.RECAP,
    NotificationType.REACTIVATION,
    NotificationType.STREAK_REMINDER,
)
LEAGUE_TYPES = (NotificationType.LEAGUE_RESULT, NotificationType.LEAGUE_AT_RISK)
QUEST_TYPES = (NotificationType.QUEST_REMINDER,)


class Channel(models.TextChoices):
    EMAIL = "email", "Email"
    PUSH = "push", "Push"


class TemplateMode(models.TextChoices):
    """How an email template is written: typed blocks (its HTML and text are generated from
    them) or raw Jinja2 (the advanced mode every template had before blocks)."""

    ADVANCED = "advanced", "Advanced (Jinja2)"
    BLOCKS = "blocks", "Blocks"


class TemplateStatus(models.TextChoices):
    INACTIVE = "inactive", "Inactive"
    ACTIVE = "active", "Active"


class MessageStatus(models.TextChoices):
    QUEUED = "queued", "Queued"  # waiting for its send time, or for a worker
    SENDING = "sending", "Sending"  # claimed by a worker
    SENT = "sent", "Sent"
    RETRYING = "retrying", "Retrying"  # a temporary failure; tried again at send_at
    FAILED = "failed", "Failed"  # a permanent failure, or out of attempts
    SKIPPED = "skipped", "Skipped"  # no longer wanted when its time came (reason in `error`)


class PushKind(models.TextChoices):
    APNS = "apns", "Apple Push Notification service"
    FCM = "fcm", "Firebase Cloud Messaging"
    EXPO = "expo", "Expo"


class PushChannelStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    INACTIVE = "inactive", "Inactive"
