"""Writes of points systems, with the levels, boosts and triggers given along."""

from typing import Any

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import UNSET, Unset, given
from apps.points.configuration.archive import system_writable
from apps.points.configuration.boosts import points_boost_create
from apps.points.configuration.levels import points_level_create
from apps.points.configuration.triggers import points_trigger_create
from apps.points.domain import PointsTriggerSettings
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
    # Each item: the keyword arguments of points_level_create, points_boost_create or
    # points_trigger_create.
    levels: list[dict[str, Any]] | None = None,
    boosts: list[dict[str, Any]] | None = None,
    triggers: list[dict[str, Any]] | None = None,
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
        nested["triggers"] = [
            points_trigger_create(tenant, system, PointsTriggerSettings(**item))
            for item in triggers
        ]
    tenant_config_changed(tenant)
    return system, nested


def points_system_update(
    tenant: Tenant,
    system: PointsSystem,
    *,
    name: str | Unset = UNSET,
    description: str | Unset = UNSET,
    badge_url: str | Unset | None = UNSET,
    max_points: int | Unset | None = UNSET,
) -> PointsSystem:
    changes = given(name=name, description=description, badge_url=badge_url, max_points=max_points)
    system_writable(system)
    for name, value in changes.items():
        setattr(system, name, value)
    system.save()
    tenant_config_changed(tenant)
    return system
