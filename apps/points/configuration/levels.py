"""Writes of a points system's levels; every change re-derives the stored levels."""

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import UNSET, Unset, given
from apps.points.configuration.archive import system_writable
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsLevel, PointsSystem, PointsTotal


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
    description: str = "",
    badge_url: str | None = None,
) -> PointsLevel:
    system_writable(system)
    if PointsLevel.objects.filter(system=system, key=key).exists():
        raise PointsConfigInvalidError("Key already in use by another level")
    level = PointsLevel(
        system=system,
        key=key,
        name=name,
        points=points,
        description=description,
        badge_url=badge_url,
    )
    level.save()
    levels_recompute(system)
    tenant_config_changed(tenant)
    return level


def points_level_update(
    tenant: Tenant,
    level: PointsLevel,
    *,
    name: str | Unset = UNSET,
    points: int | Unset = UNSET,
    description: str | Unset = UNSET,
    badge_url: str | Unset | None = UNSET,
) -> PointsLevel:
    changes = given(name=name, points=points, description=description, badge_url=badge_url)
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
