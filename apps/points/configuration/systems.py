"""Writes of points systems, with the levels, boosts and triggers given along."""

from typing import Any, TypedDict, Unpack

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import arguments_check
from apps.points.configuration.archive import system_writable
from apps.points.configuration.boosts import BoostFields, points_boost_create
from apps.points.configuration.levels import LevelFields, points_level_create
from apps.points.configuration.triggers import TriggerFields, points_trigger_create
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsSystem


def points_system_create(
    tenant: Tenant,
    *,
    key: str,
    name: str,
    description: str = "",
    badge_url: str | None = None,
    max_points: int | None = None,
    levels: list[LevelFields] | None = None,
    boosts: list[BoostFields] | None = None,
    triggers: list[TriggerFields] | None = None,
) -> tuple[PointsSystem, dict[str, list[Any]]]:
    """A new system, with the levels, boosts and triggers given along; returns it and those
    it created, by kind (only the kinds given)."""
    if PointsSystem.objects.filter(tenant=tenant, key=key).exists():
        raise PointsConfigInvalidError("Key already in use by another points system")
    system = PointsSystem.objects.create(
        tenant=tenant,
        key=key,
        name=name,
        description=description,
        max_points=max_points,
        badge_url=badge_url,
    )
    nested: dict[str, list[Any]] = {}
    if levels is not None:
        nested["levels"] = [points_level_create(tenant, system, **item) for item in levels]
    if boosts is not None:
        nested["boosts"] = [points_boost_create(tenant, system, **item) for item in boosts]
    if triggers is not None:
        nested["triggers"] = [points_trigger_create(tenant, system, **item) for item in triggers]
    tenant_config_changed(tenant)
    return system, nested


class SystemChanges(TypedDict, total=False):
    name: str
    description: str
    badge_url: str | None
    max_points: int | None


def points_system_update(
    tenant: Tenant, system: PointsSystem, **changes: Unpack[SystemChanges]
) -> PointsSystem:
    arguments_check("points_system_update", changes, SystemChanges)
    system_writable(system)
    for name, value in changes.items():
        setattr(system, name, value)
    system.save()
    tenant_config_changed(tenant)
    return system
