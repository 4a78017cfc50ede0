"""Writes of a points system's levels; every change re-derives the stored levels."""

from apps.accounts.history import recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values, required_check
from apps.points import domain
from apps.points.configuration.archive import system_writable
from apps.points.domain import PointsLevelSettings
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


@recorded("points_level")
def points_level_create(
    tenant: Tenant, system: PointsSystem, settings: PointsLevelSettings
) -> PointsLevel:
    system_writable(system)
    required_check(settings, PointsConfigInvalidError)
    values = given_values(settings)
    if PointsLevel.objects.filter(system=system, key=values["key"]).exists():
        raise PointsConfigInvalidError("Key already in use by another level")
    level = PointsLevel(system=system, **values)
    level.save()
    levels_recompute(system)
    tenant_config_changed(tenant)
    return level


@recorded("points_level")
def points_level_update(
    tenant: Tenant, level: PointsLevel, changes: PointsLevelSettings
) -> PointsLevel:
    """Change the given settings; the others are kept."""
    values = given_values(changes)
    system_writable(level.system)
    if values.pop("key", level.key) != level.key:
        raise domain.set_for_good_problem("key")
    for name, value in values.items():
        setattr(level, name, value)
    level.save()
    levels_recompute(level.system)
    tenant_config_changed(tenant)
    return level


@recorded("points_level")
def points_level_delete(tenant: Tenant, level: PointsLevel) -> None:
    system = level.system
    system_writable(system)
    level.delete()
    levels_recompute(system)
    tenant_config_changed(tenant)
