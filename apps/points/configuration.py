"""Writes of points configuration (admin API and dashboard): systems, levels, boosts,
triggers. Every change bumps the tenant's configuration version."""

from typing import Any

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.achievements.models import Achievement
from apps.metrics.models import Metric
from apps.points.choices import SystemStatus, TriggerStatus, TriggerType
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import (
    PointsBoost,
    PointsLevel,
    PointsSystem,
    PointsTotal,
    PointsTrigger,
    PointsTriggerMark,
)
from apps.users.choices import AttributeType
from apps.users.models import EndUser
from apps.users.services import attribute_refs_check

TRIGGER_FIELDS = {
    TriggerType.METRIC: ("metricId", "metricThreshold", "eventAttributes"),
    TriggerType.ACHIEVEMENT: ("achievementId",),
    TriggerType.STREAK: ("streakLength",),
    TriggerType.TIME: ("timeUnit", "timeInterval"),
    TriggerType.USER_CREATION: (),
}
REQUIRED = {
    TriggerType.METRIC: ("metricId", "metricThreshold"),
    TriggerType.ACHIEVEMENT: ("achievementId",),
    TriggerType.STREAK: ("streakLength",),
    TriggerType.TIME: ("timeUnit", "timeInterval"),
    TriggerType.USER_CREATION: (),
}


def _badge(data: dict[str, Any], obj: Any) -> None:
    if "badge" in data:
        obj.badge_url = data["badge"]["url"] if data["badge"] else None


# --- systems --------------------------------------------------------------------------------


def system_create(tenant: Tenant, data: dict[str, Any]) -> tuple[PointsSystem, dict[str, list]]:
    if PointsSystem.objects.filter(tenant=tenant, key=data["key"]).exists():
        raise PointsConfigInvalidError("Key already in use by another points system")
    system = PointsSystem(
        tenant=tenant,
        key=data["key"],
        name=data["name"],
        description=data.get("description", ""),
        max_points=data.get("maxPoints"),
    )
    _badge(data, system)
    system.save()
    nested: dict[str, list] = {}
    if "levels" in data:
        nested["levels"] = [level_create(tenant, system, item) for item in data["levels"]]
    if "boosts" in data:
        nested["boosts"] = [boost_create(tenant, system, item) for item in data["boosts"]]
    if "triggers" in data:
        nested["triggers"] = [trigger_create(tenant, system, item) for item in data["triggers"]]
    tenant_config_changed(tenant)
    return system, nested


def system_update(tenant: Tenant, system: PointsSystem, data: dict[str, Any]) -> PointsSystem:
    for wire, attr in (
        ("name", "name"),
        ("description", "description"),
        ("maxPoints", "max_points"),
    ):
        if wire in data:
            setattr(system, attr, data[wire])
    _badge(data, system)
    system.save()
    tenant_config_changed(tenant)
    return system


def system_archive(tenant: Tenant, system: PointsSystem) -> None:
    """Deleting a system archives it: its ledger is kept (points are often currency) but it
    no longer awards and the application API no longer shows it."""
    system.status = SystemStatus.ARCHIVED
    system.save(update_fields=["status", "updated"])
    tenant_config_changed(tenant)


# --- levels ---------------------------------------------------------------------------------


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


def level_create(tenant: Tenant, system: PointsSystem, data: dict[str, Any]) -> PointsLevel:
    if PointsLevel.objects.filter(system=system, key=data["key"]).exists():
        raise PointsConfigInvalidError("Key already in use by another level")
    level = PointsLevel(
        system=system,
        key=data["key"],
        name=data["name"],
        points=data["points"],
        description=data.get("description", ""),
    )
    _badge(data, level)
    level.save()
    levels_recompute(system)
    tenant_config_changed(tenant)
    return level


def level_update(tenant: Tenant, level: PointsLevel, data: dict[str, Any]) -> PointsLevel:
    for wire in ("name", "points", "description"):
        if wire in data:
            setattr(level, wire, data[wire])
    _badge(data, level)
    level.save()
    levels_recompute(level.system)
    tenant_config_changed(tenant)
    return level


def level_delete(tenant: Tenant, level: PointsLevel) -> None:
    system = level.system
    level.delete()
    levels_recompute(system)
    tenant_config_changed(tenant)


# --- boosts ---------------------------------------------------------------------------------


def boost_create(tenant: Tenant, system: PointsSystem, data: dict[str, Any]) -> PointsBoost:
    boost = PointsBoost(
        system=system,
        name=data["name"],
        start=data["start"],
        end=data.get("end"),
        multiplier=data["multiplier"],
        rounding=data.get("rounding", "down"),
    )
    if data.get("userId"):
        user = EndUser.objects.filter(tenant=tenant, external_id=data["userId"]).first()
        if user is None:
            raise PointsConfigInvalidError("User does not exist")
        boost.user = user
    boost.user_attributes = attribute_refs_check(
        tenant, data.get("userAttributes"), AttributeType.USER
    )
    boost.save()
    tenant_config_changed(tenant)
    return boost


def boost_update(tenant: Tenant, boost: PointsBoost, data: dict[str, Any]) -> PointsBoost:
    for wire in ("name", "start", "end", "multiplier", "rounding"):
        if wire in data:
            setattr(boost, wire, data[wire])
    if "userAttributes" in data:
        if boost.user_id is not None and data["userAttributes"]:
            raise PointsConfigInvalidError("userAttributes do not apply to a user's boost")
        boost.user_attributes = attribute_refs_check(
            tenant, data["userAttributes"], AttributeType.USER
        )
    if boost.end is not None and boost.end < boost.start:
        raise PointsConfigInvalidError("end must not be before start")
    boost.save()
    tenant_config_changed(tenant)
    return boost


def boost_delete(tenant: Tenant, boost: PointsBoost) -> None:
    boost.delete()
    tenant_config_changed(tenant)


# --- triggers -------------------------------------------------------------------------------


def _trigger_apply(
    tenant: Tenant, trigger: PointsTrigger, data: dict[str, Any], creating: bool
) -> None:
    new_type = data.get("type", trigger.type)
    if not creating and new_type != trigger.type and trigger.status != TriggerStatus.INACTIVE:
        raise PointsConfigInvalidError("type can only change while the trigger is inactive")
    for other, fields in TRIGGER_FIELDS.items():
        if other != new_type:
            given = [f for f in fields if data.get(f) not in (None, [])]
            if given:
                raise PointsConfigInvalidError(f"{', '.join(given)} only apply to {other} triggers")
    if creating or new_type != trigger.type:
        missing = [f for f in REQUIRED[new_type] if data.get(f) is None]
        if missing:
            raise PointsConfigInvalidError(f"{new_type} triggers need {', '.join(missing)}")
        trigger.metric = trigger.achievement = None
        trigger.metric_threshold = trigger.streak_length = trigger.time_interval = None
        trigger.time_unit = None
        trigger.event_attributes = []
    trigger.type = new_type
    for wire, attr in (
        ("points", "points"),
        ("status", "status"),
        ("metricThreshold", "metric_threshold"),
        ("streakLength", "streak_length"),
        ("timeUnit", "time_unit"),
        ("timeInterval", "time_interval"),
        ("blockIfOutOfPoints", "block_if_out_of_points"),
    ):
        if data.get(wire) is not None:
            setattr(trigger, attr, data[wire])
    if data.get("metricId") is not None:
        metric = Metric.objects.filter(tenant=tenant, public_id=data["metricId"]).first()
        if metric is None:
            raise PointsConfigInvalidError("metricId: Metric not found by ID")
        trigger.metric = metric
    if data.get("achievementId") is not None:
        achievement = Achievement.objects.filter(
            tenant=tenant, public_id=data["achievementId"]
        ).first()
        if achievement is None:
            raise PointsConfigInvalidError("achievementId: Achievement not found by ID")
        trigger.achievement = achievement
    if "userAttributes" in data:
        trigger.user_attributes = attribute_refs_check(
            tenant, data["userAttributes"], AttributeType.USER
        )
    if "eventAttributes" in data:
        trigger.event_attributes = attribute_refs_check(
            tenant, data["eventAttributes"], AttributeType.EVENT
        )


def trigger_create(tenant: Tenant, system: PointsSystem, data: dict[str, Any]) -> PointsTrigger:
    trigger = PointsTrigger(system=system, type=data["type"], points=data["points"])
    _trigger_apply(tenant, trigger, data, creating=True)
    trigger.save()
    tenant_config_changed(tenant)
    return trigger


def _counted(trigger: PointsTrigger) -> tuple[Any, ...]:
    """What a trigger counts (its users' marks measure progress towards it)."""
    return (
        trigger.type,
        trigger.metric_id,
        trigger.metric_threshold,
        trigger.streak_length,
        trigger.time_unit,
        trigger.time_interval,
        trigger.event_attributes,
    )


def trigger_update(tenant: Tenant, trigger: PointsTrigger, data: dict[str, Any]) -> PointsTrigger:
    counted = _counted(trigger)
    _trigger_apply(tenant, trigger, data, creating=False)
    trigger.save()
    if counted != _counted(trigger):
        # What the trigger counts changed: progress towards it starts from scratch.
        PointsTriggerMark.objects.filter(trigger=trigger).delete()
    tenant_config_changed(tenant)
    return trigger


def trigger_delete(tenant: Tenant, trigger: PointsTrigger) -> None:
    trigger.delete()  # its awards keep their trigger snapshot
    tenant_config_changed(tenant)
