"""The points shapes other apps' bodies and documents show: the points map of event responses
and achievement completions (`MetricEventPointsResponse`), with the levels, triggers, boosts
and awards it carries, which the points endpoints return too. Each is one `Shape`
(apps/core/api/shapes.py) that documents it, with the typed function that renders it below it;
apps/points/ledger.py renders with them (docs/style.md, "One app from another")."""

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from apps.core.api.shapes import Shape, renders
from apps.points import models
from apps.points.choices import BoostStatus, Rounding, TimeUnit, TriggerStatus, TriggerType
from apps.points.selectors import BoostDef, SystemDef, TriggerDef
from apps.users.wire import AttributeKeyValue

if TYPE_CHECKING:  # the ledger renders with this module
    from apps.points.ledger import SystemChange

# Enum value sets of the application API (named in SPECTACULAR_SETTINGS.ENUM_NAME_OVERRIDES):
# the values of the choices, without their labels, so that they are enums of their own next to
# the admin API's. The application API spells time units hour/day, the admin API hours/days
# (reference §6.3), and shows the triggers of an archived system as archived.
POINTS_TRIGGER_TYPES = TriggerType.values
POINTS_TRIGGER_STATUSES = [*TriggerStatus.values, "archived"]
POINTS_TRIGGER_TIME_UNITS = [unit.rstrip("s") for unit in TimeUnit.values]
POINTS_BOOST_STATUSES = BoostStatus.values
POINTS_BOOST_ROUNDINGS = Rounding.values


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def key_values(pairs: tuple[tuple[str, str], ...]) -> list[dict[str, str]]:
    return [{"key": k, "value": v} for k, v in pairs]


def description_field() -> serializers.CharField:
    return serializers.CharField(allow_null=True, help_text="null when the system has none.")


def badge_url_field() -> serializers.CharField:
    return serializers.CharField(allow_null=True)


def max_points_field() -> serializers.IntegerField:
    return serializers.IntegerField(
        allow_null=True, help_text="Most points a user can hold; null: no cap."
    )


def boost_start_field() -> serializers.DateField:
    return serializers.DateField(help_text="First day (inclusive).")


def boost_end_field() -> serializers.DateField:
    return serializers.DateField(allow_null=True, help_text="Last day (inclusive); null: open.")


class PointsLevel(Shape):
    # A level row (PointsLevel). No docstrings on shapes that had none: drf-spectacular makes
    # them the components' descriptions.

    id = serializers.CharField()
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True, help_text='"" when none.')
    badgeUrl = badge_url_field()
    points = serializers.IntegerField(help_text="Total from which a user is at this level.")


@renders(PointsLevel)
def level_render(level: models.PointsLevel) -> dict[str, Any]:
    return {
        "id": str(level.public_id),
        "key": level.key,
        "name": level.name,
        "description": level.description,
        "badgeUrl": level.badge_url,
        "points": level.points,
    }


class PointsTrigger(Shape):
    # A TriggerDef. JSON-native (datetimes as text), because each award keeps it as its
    # trigger snapshot; every field the SDK requires, even inside awards. The fields of one
    # trigger type are present only for that type.

    never_written = frozenset({"eventAttribute"})

    id = serializers.CharField()
    type = serializers.ChoiceField(choices=POINTS_TRIGGER_TYPES)
    points = serializers.IntegerField(help_text="Points each time it fires; negative deducts.")
    status = serializers.ChoiceField(choices=POINTS_TRIGGER_STATUSES)
    userAttributes = AttributeKeyValue(
        many=True, help_text="Only users with all these attribute values earn it."
    )
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()
    metricId = serializers.CharField(required=False, help_text="metric trigger.")
    metricName = serializers.CharField(required=False, help_text="metric trigger.")
    metricThreshold = serializers.IntegerField(
        required=False, help_text="metric trigger: fires at each multiple of this total."
    )
    eventAttributes = AttributeKeyValue(
        many=True, required=False, help_text="metric trigger: events counted ([] for all)."
    )
    achievementId = serializers.CharField(required=False, help_text="achievement trigger.")
    achievementName = serializers.CharField(required=False, help_text="achievement trigger.")
    streakLengthThreshold = serializers.IntegerField(
        required=False, help_text="streak trigger: fires at each multiple of this length."
    )
    timeUnit = serializers.ChoiceField(
        choices=POINTS_TRIGGER_TIME_UNITS, required=False, help_text="time trigger."
    )
    timeInterval = serializers.IntegerField(required=False, help_text="time trigger.")
    eventAttribute = AttributeKeyValue(required=False, help_text="Deprecated: eventAttributes.")


@renders(PointsTrigger)
def trigger_render(t: TriggerDef) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": t.public_id,
        "type": t.type,
        "points": t.points,
        "status": t.status,
        "userAttributes": key_values(t.user_filter_kv),
        "created": _iso(t.created),
        "updated": _iso(t.updated),
    }
    kind = t.type
    if kind == TriggerType.METRIC:
        body["metricId"] = t.metric_public_id
        body["metricName"] = t.metric_name
        body["metricThreshold"] = t.metric_threshold
        body["eventAttributes"] = key_values(t.event_filter_kv)
    elif kind == TriggerType.ACHIEVEMENT:
        body["achievementId"] = t.achievement_public_id
        body["achievementName"] = t.achievement_name
    elif kind == TriggerType.STREAK:
        body["streakLengthThreshold"] = t.streak_length
    elif kind == TriggerType.TIME:
        body["timeUnit"] = (t.time_unit or "").rstrip("s")
        body["timeInterval"] = t.time_interval
    return body


class PointsBoost(Shape):
    # A BoostDef, with its status on a given day. JSON-native (the multiplier as a float),
    # because awards keep the boosts applied.

    id = serializers.CharField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=POINTS_BOOST_STATUSES)
    start = boost_start_field()
    end = boost_end_field()
    multiplier = serializers.FloatField()
    rounding = serializers.ChoiceField(
        choices=POINTS_BOOST_ROUNDINGS, help_text="How a fractional boosted award is rounded."
    )


@renders(PointsBoost)
def boost_render(b: BoostDef, day: dt.date) -> dict[str, Any]:
    return {
        "id": b.public_id,
        "name": b.name,
        "status": b.status_on(day),
        "start": b.start.isoformat(),
        "end": b.end.isoformat() if b.end else None,
        "multiplier": float(b.multiplier),
        "rounding": b.rounding,
    }


class PointsAward(Shape):
    # An award row (PointsAward), with the trigger and boosts it keeps.

    id = serializers.CharField()
    awarded = serializers.IntegerField(help_text="Points added; negative for a deduction.")
    date = serializers.DateTimeField()
    total = serializers.IntegerField(help_text="The user's total after the award.")
    trigger = PointsTrigger(
        required=False,
        help_text="The trigger as it was when it fired. Absent for points that a league's "
        "placement paid (a gamify extension).",
    )
    boosts = PointsBoost(many=True, help_text="The boosts applied to this award.")


@renders(PointsAward)
def award_render(award: models.PointsAward) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": str(award.public_id),
        "awarded": award.awarded,
        "date": award.created,
        "total": award.total_after,
    }
    if award.trigger_snapshot.get("type") in POINTS_TRIGGER_TYPES:
        body["trigger"] = award.trigger_snapshot
    body["boosts"] = award.boosts
    return body


class PointsResponseBase(Shape):
    # No docstring: subclasses would inherit it as their component description.
    # A SystemDef; subclasses add what they say.
    id = serializers.CharField()
    key = serializers.CharField()
    name = serializers.CharField()
    description = description_field()
    badgeUrl = badge_url_field()
    maxPoints = max_points_field()


@renders(PointsResponseBase)
def system_base_render(system: SystemDef) -> dict[str, Any]:
    return {
        "id": system.public_id,
        "key": system.key,
        "name": system.name,
        "description": system.description or None,
        "badgeUrl": system.badge_url,
        "maxPoints": system.max_points,
    }


class MetricEventPointsResponse(PointsResponseBase):
    """A points system changed by an event or an achievement completion."""

    # A SystemDef with its SystemChange (apps/points/ledger.py).
    total = serializers.IntegerField(help_text="The user's new total.")
    added = serializers.IntegerField(help_text="Net points added; negative for deductions.")
    awards = PointsAward(many=True, help_text="The awards made.")
    level = PointsLevel(
        required=False,
        allow_null=True,
        help_text="Present only when the user's level changed: the new level, or null when "
        "the user fell below every level.",
    )


@renders(MetricEventPointsResponse)
def metric_event_points_response_render(
    system: SystemDef, change: "SystemChange"
) -> dict[str, Any]:
    body = system_base_render(system)
    body["total"] = change.total
    body["added"] = change.added
    body["awards"] = [award_render(a) for a in change.awards]
    if change.level_changed:
        current = next((lv for lv in system.levels if lv.pk == change.level_pk), None)
        body["level"] = level_render(current) if current else None
    return body


def points_render(changes: "Sequence[SystemChange]") -> dict[str, dict[str, Any]]:
    """The `points` map of event and completion responses (MetricEventPointsResponse by
    system key)."""
    render = metric_event_points_response_render
    return {change.system.key: render(change.system, change) for change in changes}
