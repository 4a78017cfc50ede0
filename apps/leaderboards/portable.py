"""The leaderboards as portable configuration (apps/core/portable.py)."""

from apps.core.portable import CollectionKind, register
from apps.leaderboards.models import Leaderboard
from apps.leaderboards.views import LeaderboardCollection

register(
    CollectionKind(
        "leaderboard",
        "leaderboard",
        60,
        LeaderboardCollection(),
        model=Leaderboard,
        refs={"breakdownAttributes": ("breakdownAttributes", "attribute")},
        archived={"status": "inactive"},
    )
)
