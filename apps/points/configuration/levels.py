"""Writes of a points system's levels; every change re-derives the stored levels."""

from typing import Required, TypedDict, Unpack

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import arguments_check
from apps.points.configuration.archive import system_writable
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsLevel, PointsSystem, PointsTotal


class LevelSettings(TypedDict, total=False):
    description: str
    badge_url: str | None


class LevelChanges(LevelSettings, total=False):
    name: str
    points: int


class LevelFields(LevelSettings, total=False):
    """A level given with its system (POST /points with levels)."""

    key: Required[str]
    name: Required[str]
    points: Required[int]


def levels_recompute(system: PointsSystem) -> None:
    """Re-derive every stored level of the system after its levels changed: one update per
    level band (the stored level serves to detect changes in event responses)."""
    levels = list(PointsLevel.objects.filter(system=system).order_by("points", "id"))
    lowest = levels[0].points if levels else None
    below = PointsTotal.objects.filter(system=system)
    if lowest is not None:
        below = below.filter(total__lt=lowest)
    below.exclude(level=None).update(level=None)
    for index, level in enumerate(levels):
        band = PointsTotal.objects.filter(system=system, total__gte=level.points)
        if index + 1 < len(levels):
            band = band.filter(total__lt=levels[index + 1].points)
        band.exclude(level=level).update(level=level)


def points_level_create(
    tenant: Tenant,
    system: PointsSystem,
    *,
    key: str,
    name: str,
    points: int,
    **settings: Unpack[LevelSettings],
) -> PointsLevel:
    arguments_check("points_level_create", settings, LevelSettings)
    system_writable(system)
    if PointsLevel.objects.filter(system=system, key=key).exists():
        raise PointsConfigInvalidError("Key already in use by another level")
    level = PointsLevel(system=system, key=key, name=name, points=points)
    for setting, value in settings.items():
        setattr(level, setting, value)
    level.save()
    levels_recompute(system)
    tenant_config_changed(tenant)
    return level


def points_level_update(
    tenant: Tenant, level: PointsLevel, **changes: Unpack[LevelChanges]
) -> PointsLevel:
    arguments_check("points_level_update", changes, LevelChanges)
    system_writable(level.system)
    for name, value in changes.items():
        setattr(level, name, value)
    level.save()
    levels_recompute(level.system)
    tenant_config_changed(tenant)
    return level


def points_level_delete(tenant: Tenant, level: PointsLevel) -> None:
    system = level.system
    system_writable(system)
    level.delete()
    levels_recompute(system)
    tenant_config_changed(tenant)
