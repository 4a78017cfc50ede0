"""What the quest tests share."""

from typing import Any

from apps.accounts.models import Tenant
from apps.points.configuration.systems import points_system_create
from apps.points.domain import PointsSystemSettings, PointsTriggerSettings
from apps.points.models import PointsSystem
from apps.quests.choices import Status
from apps.quests.configuration import quest_create
from apps.quests.domain import QuestSettings
from apps.quests.models import Quest


def quest(tenant: Tenant, key: str, goals: list[dict[str, Any]], **settings: Any) -> Quest:
    """An active daily quest `key` with these goals, unless `settings` say otherwise."""
    values: dict[str, Any] = {
        "name": key.title(),
        "key": key,
        "cadence": "daily",
        "goals": goals,
        "status": Status.ACTIVE,
        **settings,
    }
    return quest_create(tenant, QuestSettings(**values))


def system(tenant: Tenant, key: str, **trigger: Any) -> PointsSystem:
    """An active points system; with `trigger`, one active trigger of those settings."""
    triggers = [PointsTriggerSettings(status="active", **trigger)] if trigger else None
    made, _ = points_system_create(
        tenant, PointsSystemSettings(key=key, name=key.upper()), triggers=triggers
    )
    return made
