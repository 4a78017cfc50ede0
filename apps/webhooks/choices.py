from django.db import models


class EventType(models.TextChoices):
    """Trophy's 18 webhook event types (reference §3.9), then gamify's own (README,
    "Leagues", "Quests", "Fair play")."""

    ACHIEVEMENT_COMPLETED = "achievement.completed"
    STREAK_STARTED = "streak.started"
    STREAK_EXTENDED = "streak.extended"
    STREAK_LOST = "streak.lost"
    STREAK_FREEZE_CONSUMED = "streak.freeze_consumed"
    STREAK_FREEZE_EARNED = "streak.freeze_earned"
    POINTS_CHANGED = "points.changed"
    POINTS_LEVEL_CHANGED = "points.level_changed"
    POINTS_BOOST_STARTED = "points.boost_started"
    POINTS_BOOST_FINISHED = "points.boost_finished"
    LEADERBOARD_STARTED = "leaderboard.started"
    LEADERBOARD_CHANGED = "leaderboard.changed"
    LEADERBOARD_FINISHED = "leaderboard.finished"
    LEADERBOARD_RANK_CHANGED = "leaderboard.rank_changed"
    EMAILS_RECAP_DUE = "emails.recap_due"
    EMAILS_REACTIVATION_DUE = "emails.reactivation_due"
    EMAILS_STREAK_REMINDER_DUE = "emails.streak_reminder_due"
    EMAILS_ACHIEVEMENT_DUE = "emails.achievement_due"
    LEAGUE_JOINED = "league.joined"
    LEAGUE_RANK_CHANGED = "league.rank_changed"
    LEAGUE_FINISHED = "league.finished"
    QUEST_PROGRESSED = "quest.progressed"
    QUEST_COMPLETED = "quest.completed"
    QUESTS_RENEWED = "quests.renewed"
    USER_EXCLUDED = "user.excluded"
    USER_REINSTATED = "user.reinstated"
    USER_FLAGGED = "user.flagged"


class EndpointStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    DISABLED = "disabled", "Disabled"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # waiting for its first attempt or its next retry
    DELIVERING = "delivering", "Delivering"  # claimed by a worker
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"  # out of retries, or the endpoint answered 410
