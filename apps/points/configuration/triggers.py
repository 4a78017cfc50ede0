"""Writes of a points system's triggers: the settings of each type, and progress that starts
again when what a trigger counts changes."""

from typing import Any

from apps.accounts.history import recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.achievements.models import Achievement
from apps.core.arguments import kind_problem
from apps.core.declarations import Kind, given_values, required_check, settings_of
from apps.metrics.models import Metric
from apps.points import domain
from apps.points.choices import TriggerStatus
from apps.points.configuration.archive import system_writable
from apps.points.domain import TRIGGER_FIELDS, TRIGGER_REQUIRED, PointsTriggerSettings
from apps.points.errors import PointsConfigInvalidError
from apps.points.models import PointsSystem, PointsTrigger, PointsTriggerMark
from apps.users.choices import AttributeType
from apps.users.configuration import attribute_refs_check

# The settings a trigger stores as they are given (the others name objects or attributes).
_PLAIN = tuple(
    name
    for name, setting in settings_of(PointsTriggerSettings).items()
    if setting.kind not in (Kind.REFERENCE, Kind.STRUCTURE) and name != "type"
)


def _trigger_apply(
    tenant: Tenant, trigger: PointsTrigger, values: dict[str, Any], creating: bool
) -> None:
    new_type = values.get("type", trigger.type)
    if not creating and new_type != trigger.type and trigger.status != TriggerStatus.INACTIVE:
        raise PointsConfigInvalidError(
            "{type} can only change while the trigger is inactive", fields="type", code="frozen"
        )
    new = creating or new_type != trigger.type
    problem = kind_problem(
        new_type,
        values,
        TRIGGER_FIELDS,
        TRIGGER_REQUIRED,
        noun="triggers",
        new=new,
        error=PointsConfigInvalidError,
        unset=(None, []),  # an empty filter list is no filter
    )
    if problem is not None:
        raise problem
    if new:
        trigger.metric = trigger.achievement = None
        trigger.metric_threshold = trigger.streak_length = trigger.time_interval = None
        trigger.time_unit = None
        trigger.event_attributes = []
    trigger.type = new_type
    for name in _PLAIN:
        if values.get(name) is not None:
            setattr(trigger, name, values[name])
    if values.get("metric_id") is not None:
        metric = Metric.objects.filter(tenant=tenant, public_id=values["metric_id"]).first()
        if metric is None:
            raise PointsConfigInvalidError(
                "{metric_id}: Metric not found by ID", fields="metric_id", code="not_found"
            )
        trigger.metric = metric
    if values.get("achievement_id") is not None:
        achievement = Achievement.objects.filter(
            tenant=tenant, public_id=values["achievement_id"]
        ).first()
        if achievement is None:
            raise PointsConfigInvalidError(
                "{achievement_id}: Achievement not found by ID",
                fields="achievement_id",
                code="not_found",
            )
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
        raise PointsConfigInvalidError(
            f"{{points}}: {problem}", fields="points", code="out_of_range"
        )


@recorded("points_trigger")
def points_trigger_create(
    tenant: Tenant, system: PointsSystem, settings: PointsTriggerSettings
) -> PointsTrigger:
    """A trigger of its `type` with that type's settings; inactive unless `status` says
    otherwise."""
    system_writable(system)
    required_check(settings, PointsConfigInvalidError)
    values = given_values(settings)
    _points_check(values["points"])
    trigger = PointsTrigger(system=system, type=values["type"], points=values["points"])
    _trigger_apply(tenant, trigger, values, creating=True)
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


@recorded("points_trigger")
def points_trigger_update(
    tenant: Tenant, trigger: PointsTrigger, changes: PointsTriggerSettings
) -> PointsTrigger:
    """Change the given settings. A trigger changes type only while inactive; when what it
    counts changes, progress towards it starts from scratch."""
    values = given_values(changes)
    system_writable(trigger.system)
    _points_check(values.get("points"))
    counted = _counted(trigger)
    _trigger_apply(tenant, trigger, values, creating=False)
    trigger.save()
    if counted != _counted(trigger):
        # What the trigger counts changed: progress towards it starts from scratch.
        PointsTriggerMark.objects.filter(trigger=trigger).delete()
    tenant_config_changed(tenant)
    return trigger


@recorded("points_trigger")
def points_trigger_delete(tenant: Tenant, trigger: PointsTrigger) -> None:
    system_writable(trigger.system)
    trigger.delete()  # its awards keep their trigger snapshot
    tenant_config_changed(tenant)
