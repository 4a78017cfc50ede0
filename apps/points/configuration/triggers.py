"""Writes of a points system's triggers: the settings of each type, and progress that starts
again when what a trigger counts changes."""

from typing import Any, Required, TypedDict, Unpack

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.achievements.models import Achievement
from apps.core.arguments import arguments_check, kind_problem
from apps.metrics.models import Metric
from apps.points import domain
from apps.points.choices import TriggerStatus, TriggerType
from apps.points.configuration.archive import system_writable
from apps.points.configuration.boosts import Refs
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsSystem, PointsTrigger, PointsTriggerMark
from apps.users.choices import AttributeType
from apps.users.services import attribute_refs_check


class TriggerSettings(TypedDict, total=False):
    status: str
    user_attributes: Refs
    block_if_out_of_points: bool
    metric_id: str | None  # public ids
    metric_threshold: int | None
    event_attributes: Refs
    achievement_id: str | None
    streak_length: int | None
    time_unit: str | None
    time_interval: int | None


class TriggerChanges(TriggerSettings, total=False):
    type: str
    points: int


class TriggerFields(TriggerSettings, total=False):
    type: Required[str]
    points: Required[int]


# The settings that belong to each type of trigger, and those it needs.
TRIGGER_FIELDS = {
    TriggerType.METRIC: ("metric_id", "metric_threshold", "event_attributes"),
    TriggerType.ACHIEVEMENT: ("achievement_id",),
    TriggerType.STREAK: ("streak_length",),
    TriggerType.TIME: ("time_unit", "time_interval"),
    TriggerType.USER_CREATION: (),
}
REQUIRED = {
    TriggerType.METRIC: ("metric_id", "metric_threshold"),
    TriggerType.ACHIEVEMENT: ("achievement_id",),
    TriggerType.STREAK: ("streak_length",),
    TriggerType.TIME: ("time_unit", "time_interval"),
    TriggerType.USER_CREATION: (),
}
# The admin API's names of the trigger settings, which messages use.
WIRE_NAMES = {
    "metric_id": "metricId",
    "metric_threshold": "metricThreshold",
    "event_attributes": "eventAttributes",
    "achievement_id": "achievementId",
    "streak_length": "streakLength",
    "time_unit": "timeUnit",
    "time_interval": "timeInterval",
}
_TRIGGER_PLAIN = (
    "points",
    "status",
    "metric_threshold",
    "streak_length",
    "time_unit",
    "time_interval",
    "block_if_out_of_points",
)


def _trigger_apply(
    tenant: Tenant, trigger: PointsTrigger, values: dict[str, Any], creating: bool
) -> None:
    new_type = values.get("type", trigger.type)
    if not creating and new_type != trigger.type and trigger.status != TriggerStatus.INACTIVE:
        raise PointsConfigInvalidError("type can only change while the trigger is inactive")
    new = creating or new_type != trigger.type
    problem = kind_problem(
        new_type,
        values,
        TRIGGER_FIELDS,
        REQUIRED,
        WIRE_NAMES,
        noun="triggers",
        new=new,
        unset=(None, []),  # an empty filter list is no filter
    )
    if problem is not None:
        raise PointsConfigInvalidError(problem)
    if new:
        trigger.metric = trigger.achievement = None
        trigger.metric_threshold = trigger.streak_length = trigger.time_interval = None
        trigger.time_unit = None
        trigger.event_attributes = []
    trigger.type = new_type
    for name in _TRIGGER_PLAIN:
        if values.get(name) is not None:
            setattr(trigger, name, values[name])
    if values.get("metric_id") is not None:
        metric = Metric.objects.filter(tenant=tenant, public_id=values["metric_id"]).first()
        if metric is None:
            raise PointsConfigInvalidError("metricId: Metric not found by ID")
        trigger.metric = metric
    if values.get("achievement_id") is not None:
        achievement = Achievement.objects.filter(
            tenant=tenant, public_id=values["achievement_id"]
        ).first()
        if achievement is None:
            raise PointsConfigInvalidError("achievementId: Achievement not found by ID")
        trigger.achievement = achievement
    if "user_attributes" in values:
        trigger.user_attributes = attribute_refs_check(
            tenant, values["user_attributes"], AttributeType.USER
        )
    if "event_attributes" in values:
        trigger.event_attributes = attribute_refs_check(
            tenant, values["event_attributes"], AttributeType.EVENT
        )


def _points_check(points: int | None) -> None:
    if points is not None and (problem := domain.trigger_points_problem(points)):
        raise PointsConfigInvalidError(f"points: {problem}")


def points_trigger_create(
    tenant: Tenant,
    system: PointsSystem,
    *,
    type: str,
    points: int,
    **settings: Unpack[TriggerSettings],
) -> PointsTrigger:
    """A trigger of `type` with that type's settings; inactive unless `status` says
    otherwise."""
    arguments_check("points_trigger_create", settings, TriggerSettings)
    system_writable(system)
    _points_check(points)
    trigger = PointsTrigger(system=system, type=type, points=points)
    _trigger_apply(tenant, trigger, {**settings, "type": type, "points": points}, creating=True)
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


def points_trigger_update(
    tenant: Tenant, trigger: PointsTrigger, **changes: Unpack[TriggerChanges]
) -> PointsTrigger:
    """Change the given settings. A trigger changes type only while inactive; when what it
    counts changes, progress towards it starts from scratch."""
    arguments_check("points_trigger_update", changes, TriggerChanges)
    system_writable(trigger.system)
    _points_check(changes.get("points"))
    counted = _counted(trigger)
    _trigger_apply(tenant, trigger, dict(changes), creating=False)
    trigger.save()
    if counted != _counted(trigger):
        # What the trigger counts changed: progress towards it starts from scratch.
        PointsTriggerMark.objects.filter(trigger=trigger).delete()
    tenant_config_changed(tenant)
    return trigger


def points_trigger_delete(tenant: Tenant, trigger: PointsTrigger) -> None:
    system_writable(trigger.system)
    trigger.delete()  # its awards keep their trigger snapshot
    tenant_config_changed(tenant)
