"""Writes of points systems, with the levels, boosts and triggers given along."""

from collections.abc import Sequence
from typing import Any

from apps.accounts.history import recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values, required_check
from apps.points import domain
from apps.points.configuration.archive import system_writable
from apps.points.configuration.boosts import points_boost_create
from apps.points.configuration.levels import points_level_create
from apps.points.configuration.triggers import points_trigger_create
from apps.points.domain import (
    PointsBoostSettings,
    PointsLevelSettings,
    PointsSystemSettings,
    PointsTriggerSettings,
)
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsSystem


@recorded("points_system")
def points_system_create(
    tenant: Tenant,
    settings: PointsSystemSettings,
    *,
    levels: Sequence[PointsLevelSettings] | None = None,
    boosts: Sequence[PointsBoostSettings] | None = None,
    triggers: Sequence[PointsTriggerSettings] | None = None,
) -> tuple[PointsSystem, dict[str, list[Any]]]:
    """A new system, with the levels, boosts and triggers given along; returns it and those
    it created, by kind (only the kinds given, even empty)."""
    required_check(settings, PointsConfigInvalidError)
    values = given_values(settings)
    if PointsSystem.objects.filter(tenant=tenant, key=values["key"]).exists():
        raise PointsConfigInvalidError("Key already in use by another points system")
    system = PointsSystem.objects.create(tenant=tenant, **values)
    nested: dict[str, list[Any]] = {}
    if levels is not None:
        nested["levels"] = [points_level_create(tenant, system, item) for item in levels]
    if boosts is not None:
        nested["boosts"] = [points_boost_create(tenant, system, item) for item in boosts]
    if triggers is not None:
        nested["triggers"] = [points_trigger_create(tenant, system, item) for item in triggers]
    tenant_config_changed(tenant)
    return system, nested


@recorded("points_system")
def points_system_update(
    tenant: Tenant, system: PointsSystem, changes: PointsSystemSettings
) -> PointsSystem:
    """Change the given settings; the others are kept."""
    values = given_values(changes)
    system_writable(system)
    if values.pop("key", system.key) != system.key:
        raise domain.set_for_good_problem("key")
    for name, value in values.items():
        setattr(system, name, value)
    system.save()
    tenant_config_changed(tenant)
    return system
