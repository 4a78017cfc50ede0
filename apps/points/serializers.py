"""Input shapes of the points admin API (reference §3.6)."""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from rest_framework import serializers

from apps.achievements.wire import BadgeSerializer, with_badge_url
from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.points import domain
from apps.points.choices import Rounding, TimeUnit, TriggerStatus, TriggerType
from apps.users.wire import AttributeRefSerializer


class _WithBadge(StrictSerializer):
    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        return with_badge_url(super().service_kwargs(data))


class LevelCreateSerializer(_WithBadge):
    name = StringField(max_length=255)
    key = key_field()
    points = serializers.IntegerField(min_value=0, max_value=domain.MAX_POINTS)
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)


class LevelUpdateSerializer(_WithBadge):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    points = serializers.IntegerField(min_value=0, max_value=domain.MAX_POINTS, required=False)
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)


def _multiplier_check(value: Decimal) -> Decimal:
    if (problem := domain.multiplier_problem(value)) is not None:
        raise serializers.ValidationError(problem)
    return value


class BoostCreateSerializer(StrictSerializer):
    name = StringField(max_length=255)
    start = serializers.DateField()
    end = serializers.DateField(required=False, allow_null=True)
    multiplier = serializers.DecimalField(max_digits=8, decimal_places=4)
    rounding = serializers.ChoiceField(choices=Rounding.choices, default=Rounding.DOWN)
    userId = StringField(max_length=255, required=False, allow_null=True)
    userAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)

    def validate_multiplier(self, value: Decimal) -> Decimal:
        return _multiplier_check(value)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        problem = domain.boost_problem(
            attrs["start"], attrs.get("end"), attrs.get("userId"), attrs.get("userAttributes")
        )
        if problem is not None:
            raise serializers.ValidationError(problem)
        return attrs


class BoostUpdateSerializer(StrictSerializer):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    start = serializers.DateField(required=False)
    end = serializers.DateField(required=False, allow_null=True)
    multiplier = serializers.DecimalField(max_digits=8, decimal_places=4, required=False)
    rounding = serializers.ChoiceField(choices=Rounding.choices, required=False)
    userAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)

    def validate_multiplier(self, value: Decimal) -> Decimal:
        return _multiplier_check(value)


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


class TriggerCreateSerializer(_TriggerFields):
    type = serializers.ChoiceField(choices=TriggerType.choices)


class TriggerUpdateSerializer(_TriggerFields):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=TriggerType.choices, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["points"].required = False


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
        """points_system_create's arguments, with those of the levels, boosts and triggers
        given along."""
        kwargs = super().service_kwargs(data)
        for name, serializer in (
            ("levels", LevelCreateSerializer),
            ("boosts", BoostCreateSerializer),
            ("triggers", TriggerCreateSerializer),
        ):
            if name in kwargs:
                kwargs[name] = [serializer.service_kwargs(item) for item in kwargs[name]]
        return kwargs


class SystemUpdateSerializer(_WithBadge):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)
    maxPoints = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_POINTS, required=False, allow_null=True
    )
