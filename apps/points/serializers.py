"""Input shapes of the points admin API (reference §3.6)."""

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from apps.achievements.wire import BadgeSerializer
from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.points.choices import Rounding, TimeUnit, TriggerStatus, TriggerType
from apps.users.wire import AttributeRefSerializer


class LevelCreateSerializer(StrictSerializer):
    name = StringField(max_length=255)
    key = key_field()
    points = serializers.IntegerField(min_value=0, max_value=10**15)
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)


class LevelUpdateSerializer(StrictSerializer):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    points = serializers.IntegerField(min_value=0, max_value=10**15, required=False)
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)


def _multiplier_check(value: Decimal) -> Decimal:
    if not Decimal(0) < value < Decimal(100) or value == 1:
        raise serializers.ValidationError("must be greater than 0, less than 100 and not 1")
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
        if attrs.get("userId") and attrs.get("userAttributes"):
            raise serializers.ValidationError("userId and userAttributes are mutually exclusive")
        if attrs.get("end") is not None and attrs["end"] < attrs["start"]:
            raise serializers.ValidationError("end must not be before start")
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
    points = serializers.IntegerField(min_value=-(10**12), max_value=10**12)
    status = serializers.ChoiceField(choices=TriggerStatus.choices, required=False)
    userAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)
    metricId = serializers.UUIDField(required=False, allow_null=True)
    metricThreshold = serializers.IntegerField(
        min_value=1, max_value=10**12, required=False, allow_null=True
    )
    eventAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)
    achievementId = serializers.UUIDField(required=False, allow_null=True)
    streakLength = serializers.IntegerField(
        min_value=1, max_value=100_000, required=False, allow_null=True
    )
    timeUnit = serializers.ChoiceField(choices=TimeUnit.choices, required=False, allow_null=True)
    timeInterval = serializers.IntegerField(
        min_value=1, max_value=100_000, required=False, allow_null=True
    )
    blockIfOutOfPoints = serializers.BooleanField(required=False)

    def validate_points(self, value: int) -> int:
        if value == 0:
            raise serializers.ValidationError("must not be 0")
        return value


class TriggerCreateSerializer(_TriggerFields):
    type = serializers.ChoiceField(choices=TriggerType.choices)


class TriggerUpdateSerializer(_TriggerFields):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=TriggerType.choices, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["points"].required = False


class SystemCreateSerializer(StrictSerializer):
    name = StringField(max_length=255)
    key = key_field()
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)
    maxPoints = serializers.IntegerField(
        min_value=1, max_value=10**15, required=False, allow_null=True
    )
    levels = LevelCreateSerializer(many=True, required=False)
    boosts = BoostCreateSerializer(many=True, required=False)
    triggers = TriggerCreateSerializer(many=True, required=False)


class SystemUpdateSerializer(StrictSerializer):
    id = serializers.UUIDField()
    name = StringField(max_length=255, required=False)
    description = StringField(max_length=2000, required=False, allow_blank=True)
    badge = BadgeSerializer(required=False, allow_null=True)
    maxPoints = serializers.IntegerField(
        min_value=1, max_value=10**15, required=False, allow_null=True
    )
