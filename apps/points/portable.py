"""Points systems, with their levels, boosts and triggers, as portable configuration
(apps/core/portable.py). Levels, boosts and triggers are named within their system
("xp/gold"): a level by its key, a boost by its name, a trigger by what fires it (its type and
metric, achievement, streak length or time interval), since triggers have no key of their own.
A boost for one user is that user's, not configuration: it stays out."""

from typing import Any

from apps.core.portable import CollectionKind, Context, register
from apps.points import selectors
from apps.points.choices import TriggerType
from apps.points.models import PointsBoost, PointsLevel, PointsSystem, PointsTrigger
from apps.points.views.admin_api import (
    BoostCollection,
    LevelCollection,
    SystemCollection,
    TriggerCollection,
)


def _systems(ctx: Context) -> list[Any]:
    return list(selectors.points_systems_active(ctx.tenant).order_by("created", "id"))


def trigger_key(trigger: Any) -> str:
    match trigger.type:
        case TriggerType.METRIC:
            what = f"{trigger.metric.key if trigger.metric else '?'}:{trigger.metric_threshold}"
        case TriggerType.ACHIEVEMENT:
            achievement = trigger.achievement
            what = (achievement.key or achievement.name) if achievement else "?"
        case TriggerType.STREAK:
            what = str(trigger.streak_length)
        case TriggerType.TIME:
            what = f"{trigger.time_interval}{trigger.time_unit}"
        case _:
            what = str(trigger.public_id)
    return f"{trigger.type}:{what}"


# Removing a system archives it (its admin API's delete): it keeps its ledger, out of reach.
register(
    CollectionKind(
        "points_system",
        "points system",
        50,
        SystemCollection(),
        model=PointsSystem,
        deletion_archives=True,
    )
)
register(
    CollectionKind(
        "points_level",
        "points level",
        51,
        LevelCollection(),
        model=PointsLevel,
        parent_kind="points_system",
        parents=_systems,
    )
)
register(
    CollectionKind(
        "points_boost",
        "points boost",
        52,
        BoostCollection(),
        model=PointsBoost,
        key_of=lambda boost: boost.name,
        drop=frozenset({"status", "userId"}),  # status: the date's, not a setting
        parent_kind="points_system",
        parents=_systems,
        include=lambda boost: boost.user_id is None,
    )
)
register(
    CollectionKind(
        "points_trigger",
        "points trigger",
        53,
        TriggerCollection(),
        model=PointsTrigger,
        key_of=trigger_key,
        parent_kind="points_system",
        parents=_systems,
        archived={"status": "inactive"},
    )
)
