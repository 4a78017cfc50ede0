"""The points shapes other apps' bodies and documents show: the points map of event responses
and achievement completions (`MetricEventPointsResponse`), with the levels, triggers, boosts
and awards it carries, which the points endpoints return too. Each is one `Shape`
(apps/core/api/shapes.py): its fields document it and render it; apps/points/ledger.py renders
with them (docs/style.md, "One app from another")."""

import datetime as dt
from typing import Any

from rest_framework import serializers

from apps.core.api.shapes import OMIT, Getter, Shape, never, only_when, out
from apps.points.choices import BoostStatus, Rounding, TimeUnit, TriggerStatus, TriggerType
from apps.users.wire import AttributeKeyValue

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


def description_field() -> Any:
    return out(
        serializers.CharField(allow_null=True, help_text="null when the system has none."),
        lambda system, _: system.description or None,
    )


def badge_url_field() -> serializers.CharField:
    return serializers.CharField(allow_null=True)


def max_points_field() -> serializers.IntegerField:
    return serializers.IntegerField(
        allow_null=True, help_text="Most points a user can hold; null: no cap."
    )


def boost_start_field() -> Any:
    return out(
        serializers.DateField(help_text="First day (inclusive)."),
        lambda b, _: b.start.isoformat(),
    )


def boost_end_field() -> Any:
    return out(
        serializers.DateField(allow_null=True, help_text="Last day (inclusive); null: open."),
        lambda b, _: b.end.isoformat() if b.end else None,
    )


class PointsLevel(Shape):
    # Renders a level row (PointsLevel). No docstrings on shapes that had none: drf-spectacular
    # makes them the components' descriptions.

    id = out(serializers.CharField(), lambda level, _: str(level.public_id))
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True, help_text='"" when none.')
    badgeUrl = badge_url_field()
    points = serializers.IntegerField(help_text="Total from which a user is at this level.")


def only_for(kind: str, get: Getter) -> Getter:
    """A trigger field written only for triggers of one type."""
    return only_when("type", kind, get)


class PointsTrigger(Shape):
    # Renders a TriggerDef. JSON-native (datetimes as text), because each award keeps it as
    # its trigger snapshot; every field the SDK requires, even inside awards.

    id = out(serializers.CharField(), "public_id")
    type = serializers.ChoiceField(choices=POINTS_TRIGGER_TYPES)
    points = serializers.IntegerField(help_text="Points each time it fires; negative deducts.")
    status = serializers.ChoiceField(choices=POINTS_TRIGGER_STATUSES)
    userAttributes = out(
        AttributeKeyValue(
            many=True, help_text="Only users with all these attribute values earn it."
        ),
        lambda t, _: key_values(t.user_filter_kv),
    )
    created = out(serializers.DateTimeField(), lambda t, _: _iso(t.created))
    updated = out(serializers.DateTimeField(), lambda t, _: _iso(t.updated))
    metricId = out(
        serializers.CharField(required=False, help_text="metric trigger."),
        only_for("metric", lambda t, _: t.metric_public_id),
    )
    metricName = out(
        serializers.CharField(required=False, help_text="metric trigger."),
        only_for("metric", lambda t, _: t.metric_name),
    )
    metricThreshold = out(
        serializers.IntegerField(
            required=False, help_text="metric trigger: fires at each multiple of this total."
        ),
        only_for("metric", lambda t, _: t.metric_threshold),
    )
    eventAttributes = out(
        AttributeKeyValue(
            many=True, required=False, help_text="metric trigger: events counted ([] for all)."
        ),
        only_for("metric", lambda t, _: key_values(t.event_filter_kv)),
    )
    achievementId = out(
        serializers.CharField(required=False, help_text="achievement trigger."),
        only_for("achievement", lambda t, _: t.achievement_public_id),
    )
    achievementName = out(
        serializers.CharField(required=False, help_text="achievement trigger."),
        only_for("achievement", lambda t, _: t.achievement_name),
    )
    streakLengthThreshold = out(
        serializers.IntegerField(
            required=False, help_text="streak trigger: fires at each multiple of this length."
        ),
        only_for("streak", lambda t, _: t.streak_length),
    )
    timeUnit = out(
        serializers.ChoiceField(
            choices=POINTS_TRIGGER_TIME_UNITS, required=False, help_text="time trigger."
        ),
        only_for("time", lambda t, _: (t.time_unit or "").rstrip("s")),
    )
    timeInterval = out(
        serializers.IntegerField(required=False, help_text="time trigger."),
        only_for("time", lambda t, _: t.time_interval),
    )
    eventAttribute = out(
        AttributeKeyValue(required=False, help_text="Deprecated: eventAttributes."), never
    )


class PointsBoost(Shape):
    # Renders a BoostDef; the context is the day its status is given for. JSON-native (the
    # multiplier as a float), because awards keep the boosts applied.

    id = out(serializers.CharField(), "public_id")
    name = serializers.CharField()
    status = out(
        serializers.ChoiceField(choices=POINTS_BOOST_STATUSES),
        lambda b, day: b.status_on(day),
    )
    start = boost_start_field()
    end = boost_end_field()
    multiplier = out(serializers.FloatField(), lambda b, _: float(b.multiplier))
    rounding = serializers.ChoiceField(
        choices=POINTS_BOOST_ROUNDINGS, help_text="How a fractional boosted award is rounded."
    )


class PointsAward(Shape):
    # Renders an award row (PointsAward), with the trigger and boosts it keeps.

    id = out(serializers.CharField(), lambda a, _: str(a.public_id))
    awarded = serializers.IntegerField(help_text="Points added; negative for a deduction.")
    date = out(serializers.DateTimeField(), "created")
    total = out(
        serializers.IntegerField(help_text="The user's total after the award."),
        "total_after",
    )
    trigger = out(
        PointsTrigger(help_text="The trigger as it was when it fired."),
        "trigger_snapshot",
    )
    boosts = PointsBoost(many=True, help_text="The boosts applied to this award.")


class PointsResponseBase(Shape):
    # No docstring: subclasses would inherit it as their component description.
    # Renders a SystemDef; subclasses take what they add from the context.
    id = out(serializers.CharField(), "public_id")
    key = serializers.CharField()
    name = serializers.CharField()
    description = description_field()
    badgeUrl = badge_url_field()
    maxPoints = max_points_field()


def _event_level(system: Any, change: Any) -> Any:
    if not change.level_changed:
        return OMIT
    current = next((lv for lv in system.levels if lv.pk == change.level_pk), None)
    return PointsLevel.render(current) if current else None


class MetricEventPointsResponse(PointsResponseBase):
    """A points system changed by an event or an achievement completion."""

    # Renders a SystemDef with, as context, its SystemChange (apps/points/ledger.py).
    total = out(serializers.IntegerField(help_text="The user's new total."), "context.total")
    added = out(
        serializers.IntegerField(help_text="Net points added; negative for deductions."),
        "context.added",
    )
    awards = out(
        PointsAward(many=True, help_text="The awards made."),
        lambda _, c: [PointsAward.render(a) for a in c.awards],
    )
    level = out(
        PointsLevel(
            required=False,
            allow_null=True,
            help_text="Present only when the user's level changed: the new level, or null when "
            "the user fell below every level.",
        ),
        _event_level,
    )
