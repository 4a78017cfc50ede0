"""Writes of points configuration (admin API and dashboard): systems, levels, boosts,
triggers, each in its module; `archive` holds the archived-system rule that all of them apply.
Every change bumps the tenant's configuration version. Callers import from this package."""

from apps.points.configuration.archive import points_system_archive, system_writable
from apps.points.configuration.boosts import (
    points_boost_create,
    points_boost_delete,
    points_boost_update,
)
from apps.points.configuration.levels import (
    levels_recompute,
    points_level_create,
    points_level_delete,
    points_level_update,
)
from apps.points.configuration.systems import (
    points_system_create,
    points_system_update,
)
from apps.points.configuration.triggers import (
    points_trigger_create,
    points_trigger_delete,
    points_trigger_update,
)

__all__ = [
    "levels_recompute",
    "points_boost_create",
    "points_boost_delete",
    "points_boost_update",
    "points_level_create",
    "points_level_delete",
    "points_level_update",
    "points_system_archive",
    "points_system_create",
    "points_system_update",
    "points_trigger_create",
    "points_trigger_delete",
    "points_trigger_update",
    "system_writable",
]
