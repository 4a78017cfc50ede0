"""The leagues as portable configuration (apps/core/portable.py)."""

from apps.core.portable import CollectionKind, register
from apps.leagues.models import League
from apps.leagues.views import LeagueCollection

register(
    CollectionKind(
        "league",
        "league",
        70,
        LeagueCollection(),
        model=League,
        archived={"status": "archived"},
    )
)
