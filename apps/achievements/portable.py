"""The achievements as portable configuration (apps/core/portable.py). An achievement is named
by its key, or by its name when it has none (only API-triggered achievements need one)."""

from apps.achievements.models import Achievement
from apps.achievements.views import AchievementCollection
from apps.core.portable import CollectionKind, register

register(
    CollectionKind(
        "achievement",
        "achievement",
        40,
        AchievementCollection(),
        model=Achievement,
        key_of=lambda achievement: achievement.key or achievement.name,
        refs={"achievementIds": ("achievements", "achievement")},
        archived={"status": "inactive"},
    )
)
