"""Input shapes of the points admin API (reference §3.6), and the output shapes that only the
points endpoints return (those other apps show too are in apps/points/wire.py). Request
components are named after the points resource (PointsLevelCreate rather than LevelCreate)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from apps.achievements.wire import BadgeSerializer, with_badge_url
from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.core.api.naming import api_refusal
from apps.core.api.shapes import Shape, renders
from apps.core.openapi import Badge
from apps.metrics.wire import (
    UsersMetricEventSummaryResponseItem,
    users_metric_event_summary_response_item_render,
)
from apps.points import domain, models
from apps.points.choices import (
    BoostStatus,
    Rounding,
    SystemStatus,
    TimeUnit,
    TriggerStatus,
    TriggerType,
)
from apps.points.selectors import SystemDef, boost_def
from apps.points.wire import (
    PointsAward,
    PointsLevel,
    PointsResponseBase,
    PointsTrigger,
    award_render,
    badge_url_field,
    boost_end_field,
    boost_start_field,
    description_field,
    level_render,
    max_points_field,
    system_base_render,
    trigger_render,
)
from apps.users.wire import AttributeRef, AttributeRefSerializer


@extend_schema_field(
    {
        "type": "number",
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": 100,
        "exclusiveMaximum": True,
        "description": "Greater than 0, less than 100 and not 1; at most 4 decimal places.",
    }
)
class MultiplierField(serializers.DecimalField):
    """A boost's multiplier, sent as a JSON number (a DecimalField is documented as a string)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_digits=8, decimal_places=4, **kwargs)

    def to_internal_value(self, data: Any) -> Decimal:
        value: Decimal = super().to_internal_value(data)
        if (problem := domain.multiplier_problem(value)) is not None:
            raise serializers.ValidationError(problem)
        return value


class _WithBadge(StrictSerializer):
    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        return with_badge_url(super().service_kwargs(data))


@extend_schema_serializer(component_name="PointsLevelCreate")
class LevelCreateSerializer(_WithBadge):
    name = StringField(max_length=255)
    key = key_field()
    points = serializers.IntegerField(min_value=0, max_value=domain.MAX_POINTS)
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)


@extend_schema_serializer(component_name="PointsLevelUpdate")
class LevelUpdateSerializer(_WithBadge):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    points = serializers.IntegerField(min_value=0, max_value=domain.MAX_POINTS, required=False)
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)


@extend_schema_serializer(component_name="PointsBoostCreate")
class BoostCreateSerializer(StrictSerializer):
    name = StringField(max_length=255)
    start = serializers.DateField()
    end = serializers.DateField(required=False, allow_null=True)
    multiplier = MultiplierField()
    rounding = serializers.ChoiceField(choices=Rounding.choices, default=Rounding.DOWN)
    userId = StringField(max_length=255, required=False, allow_null=True)
    userAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        problem = domain.boost_problem(
            attrs["start"], attrs.get("end"), attrs.get("userId"), attrs.get("userAttributes")
        )
        if problem is not None:
            raise api_refusal(problem, type(self))
        return attrs


@extend_schema_serializer(component_name="PointsBoostUpdate")
class BoostUpdateSerializer(StrictSerializer):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    start = serializers.DateField(required=False)
    end = serializers.DateField(required=False, allow_null=True)
    multiplier = MultiplierField(required=False)
    rounding = serializers.ChoiceField(choices=Rounding.choices, required=False)
    userAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)


class _TriggerFields(StrictSerializer):
    points = serializers.IntegerField(
        min_value=-domain.MAX_TRIGGER_POINTS, max_value=domain.MAX_TRIGGER_POINTS
    )
    status = serializers.ChoiceField(choices=TriggerStatus.choices, required=False)
    userAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)
    metricId = serializers.UUIDField(required=False, allow_null=True)
    metricThreshold = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_THRESHOLD, required=False, allow_null=True
    )
    eventAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)
    achievementId = serializers.UUIDField(required=False, allow_null=True)
    streakLength = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_REPEAT, required=False, allow_null=True
    )
    timeUnit = serializers.ChoiceField(choices=TimeUnit.choices, required=False, allow_null=True)
    timeInterval = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_REPEAT, required=False, allow_null=True
    )
    blockIfOutOfPoints = serializers.BooleanField(required=False)

    def validate_points(self, value: int) -> int:
        if (problem := domain.trigger_points_problem(value)) is not None:
            raise serializers.ValidationError(problem)
        return value

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        kwargs = super().service_kwargs(data)
        for name in ("metric_id", "achievement_id"):
            if kwargs.get(name) is not None:
                kwargs[name] = str(kwargs[name])
        return kwargs


@extend_schema_serializer(component_name="PointsTriggerCreate")
class TriggerCreateSerializer(_TriggerFields):
    type = serializers.ChoiceField(choices=TriggerType.choices)


@extend_schema_serializer(component_name="PointsTriggerUpdate")
class TriggerUpdateSerializer(_TriggerFields):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=TriggerType.choices, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["points"].required = False


@extend_schema_serializer(component_name="PointsSystemCreate")
class SystemCreateSerializer(_WithBadge):
    name = StringField(max_length=255)
    key = key_field()
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)
    maxPoints = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_POINTS, required=False, allow_null=True
    )
    levels = LevelCreateSerializer(many=True, required=False)
    boosts = BoostCreateSerializer(many=True, required=False)
    triggers = TriggerCreateSerializer(many=True, required=False)

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """The system's settings, with those of the levels, boosts and triggers given along
        (lists under their names)."""
        kwargs = super().service_kwargs(data)
        for name, serializer in (
            ("levels", LevelCreateSerializer),
            ("boosts", BoostCreateSerializer),
            ("triggers", TriggerCreateSerializer),
        ):
            if name in kwargs:
                kwargs[name] = [serializer.service_kwargs(item) for item in kwargs[name]]
        return kwargs


@extend_schema_serializer(component_name="PointsSystemUpdate")
class SystemUpdateSerializer(_WithBadge):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)
    maxPoints = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_POINTS, required=False, allow_null=True
    )


# --- output shapes (each documents a body; the function below it renders it) -----------------


class GetUserPointsResponse(PointsResponseBase):
    """A user's total, level and most recent awards in one points system."""

    # A SystemDef with a UserPoints.
    total = serializers.IntegerField(help_text="The user's total (0 before any award).")
    level = PointsLevel(
        allow_null=True, help_text="The user's current level; null when none is reached."
    )
    awards = PointsAward(many=True, help_text="The most recent awards, newest first.")


@dataclass(frozen=True)
class UserPoints:
    total: int
    level: models.PointsLevel | None
    awards: Sequence[models.PointsAward]


@renders(GetUserPointsResponse)
def get_user_points_response_render(system: SystemDef, points: UserPoints) -> dict[str, Any]:
    body = system_base_render(system)
    body["total"] = points.total
    body["level"] = level_render(points.level) if points.level else None
    body["awards"] = [award_render(a) for a in points.awards]
    return body


class PointsSystemResponse(Shape):
    """A points system with its active triggers (no key: reference §3.6)."""

    # A SystemDef.
    id = serializers.CharField()
    name = serializers.CharField()
    description = description_field()
    badgeUrl = badge_url_field()
    maxPoints = max_points_field()
    triggers = PointsTrigger(many=True, help_text="The active triggers.")


@renders(PointsSystemResponse)
def points_system_response_render(system: SystemDef) -> dict[str, Any]:
    return {
        "id": system.public_id,
        "name": system.name,
        "description": system.description or None,
        "badgeUrl": system.badge_url,
        "maxPoints": system.max_points,
        "triggers": [trigger_render(t) for t in system.triggers],
    }


class UsersPointsEventSummaryResponseItem(UsersMetricEventSummaryResponseItem):
    pass  # a metric summary's buckets, as a component of its own by the SDKs' name


# The same buckets as a metric summary's: the same render (summary_render).
renders(UsersPointsEventSummaryResponseItem)(users_metric_event_summary_response_item_render)


class PointsLevelSummaryResponseItem(Shape):
    # A level row with the number of users at it.
    level = PointsLevel()
    users = serializers.IntegerField(help_text="Number of users at this level.")


@renders(PointsLevelSummaryResponseItem)
def points_level_summary_response_item_render(
    level: models.PointsLevel, counts: Mapping[int, int]
) -> dict[str, Any]:
    return {"level": level_render(level), "users": counts.get(level.pk, 0)}


class PointsRange(Shape):
    """A range of totals (bounds inclusive) and how many users have a total in it. The first
    range is 0 to 0 and also counts users below 0."""

    # A domain.Bucket. "from" is a Python keyword: declared as from_.
    from_ = serializers.IntegerField(help_text="Lowest total of the range.")
    to = serializers.IntegerField(help_text="Highest total of the range.")
    users = serializers.IntegerField()


@renders(PointsRange)
def points_range_render(bucket: domain.Bucket) -> dict[str, Any]:
    return {"from": bucket.low, "to": bucket.high, "users": bucket.users}


def _badge(url: str | None) -> dict[str, str] | None:
    return {"url": url} if url else None


def _admin_nested(shape: type[Shape], noun: str) -> Any:
    # Present only in a create response whose request supplied them.
    return shape(
        many=True,
        required=False,
        help_text=f"The {noun} created with the system: only in a create response, and "
        "only when the request supplied them.",
    )


# Labelled, not SystemStatus.choices: TenantStatus has the same (value, label) pairs, and
# sharing its hash would name this enum TenantStatusEnum.
ADMIN_POINTS_SYSTEM_STATUSES = [
    (SystemStatus.ACTIVE.value, "Active"),
    (SystemStatus.ARCHIVED.value, "Archived: deleted through the API; its ledger is kept"),
]


class AdminPointsLevel(Shape):
    # A level row.
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    points = serializers.IntegerField(help_text="Total from which a user is at this level.")
    description = serializers.CharField(allow_blank=True, help_text='"" when none.')
    badge = Badge(allow_null=True)


@renders(AdminPointsLevel)
def admin_points_level_render(lv: models.PointsLevel) -> dict[str, Any]:
    return {
        "id": str(lv.public_id),
        "name": lv.name,
        "key": lv.key,
        "points": lv.points,
        "description": lv.description,
        "badge": _badge(lv.badge_url),
    }


class AdminPointsBoost(Shape):
    # A boost row (with its user loaded).
    id = serializers.UUIDField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=BoostStatus.choices)
    start = boost_start_field()
    end = boost_end_field()
    multiplier = serializers.FloatField()
    rounding = serializers.ChoiceField(choices=Rounding.choices)
    userId = serializers.CharField(
        allow_null=True, help_text="The one user it applies to; null: a global boost."
    )
    userAttributes = AttributeRef(
        many=True, help_text="A global boost applies only to users with all these values."
    )


@renders(AdminPointsBoost)
def admin_points_boost_render(b: models.PointsBoost) -> dict[str, Any]:
    return {
        "id": str(b.public_id),
        "name": b.name,
        "status": boost_def(b, None).status_on(timezone.now().date()),
        "start": b.start.isoformat(),
        "end": b.end.isoformat() if b.end else None,
        "multiplier": b.multiplier,
        "rounding": b.rounding,
        "userId": b.user.external_id if b.user is not None else None,
        "userAttributes": list(b.user_attributes),
    }


class AdminPointsTrigger(Shape):
    # A trigger row (with its metric and achievement loaded). The fields of one trigger type
    # are present only for that type.
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=TriggerType.choices)
    points = serializers.IntegerField(help_text="Points each time it fires; negative deducts.")
    status = serializers.ChoiceField(choices=TriggerStatus.choices)
    userAttributes = AttributeRef(
        many=True, help_text="Only users with all these attribute values earn it."
    )
    blockIfOutOfPoints = serializers.BooleanField(
        help_text="A deduction that would take a total below 0 refuses the whole event."
    )
    metricId = serializers.UUIDField(required=False, allow_null=True, help_text="metric trigger.")
    metricThreshold = serializers.IntegerField(required=False, help_text="metric trigger.")
    eventAttributes = AttributeRef(
        many=True, required=False, help_text="metric trigger: events counted."
    )
    achievementId = serializers.UUIDField(
        required=False, allow_null=True, help_text="achievement trigger."
    )
    streakLength = serializers.IntegerField(required=False, help_text="streak trigger.")
    timeUnit = serializers.ChoiceField(
        choices=TimeUnit.choices, required=False, help_text="time trigger."
    )
    timeInterval = serializers.IntegerField(required=False, help_text="time trigger.")


@renders(AdminPointsTrigger)
def admin_points_trigger_render(t: models.PointsTrigger) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": str(t.public_id),
        "type": t.type,
        "points": t.points,
        "status": t.status,
        "userAttributes": list(t.user_attributes),
        "blockIfOutOfPoints": t.block_if_out_of_points,
    }
    kind = t.type
    if kind == TriggerType.METRIC:
        body["metricId"] = str(t.metric.public_id) if t.metric else None
        body["metricThreshold"] = t.metric_threshold
        body["eventAttributes"] = list(t.event_attributes)
    elif kind == TriggerType.ACHIEVEMENT:
        body["achievementId"] = str(t.achievement.public_id) if t.achievement else None
    elif kind == TriggerType.STREAK:
        body["streakLength"] = t.streak_length
    elif kind == TriggerType.TIME:
        body["timeUnit"] = t.time_unit
        body["timeInterval"] = t.time_interval
    return body


class AdminPointsSystem(Shape):
    # A system row; in a create response, with the nested rows created along, by name.
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    description = serializers.CharField(allow_blank=True, help_text='"" when none.')
    status = serializers.ChoiceField(choices=ADMIN_POINTS_SYSTEM_STATUSES)
    badge = Badge(allow_null=True)
    maxPoints = max_points_field()
    levels = _admin_nested(AdminPointsLevel, "levels")
    boosts = _admin_nested(AdminPointsBoost, "boosts")
    triggers = _admin_nested(AdminPointsTrigger, "triggers")


@renders(AdminPointsSystem)
def admin_points_system_render(
    s: models.PointsSystem, nested: Mapping[str, list[Any]] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": str(s.public_id),
        "name": s.name,
        "key": s.key,
        "description": s.description,
        "status": s.status,
        "badge": _badge(s.badge_url),
        "maxPoints": s.max_points,
    }
    if nested and "levels" in nested:
        body["levels"] = [admin_points_level_render(lv) for lv in nested["levels"]]
    if nested and "boosts" in nested:
        body["boosts"] = [admin_points_boost_render(b) for b in nested["boosts"]]
    if nested and "triggers" in nested:
        body["triggers"] = [admin_points_trigger_render(t) for t in nested["triggers"]]
    return body
