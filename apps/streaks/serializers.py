"""Wire shapes of streak settings and of the admin streak operations. The streak object and the
streak preferences, which other apps embed, are in apps/streaks/wire.py."""

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.streaks import domain
from apps.streaks.choices import EvaluationMode, Frequency
from apps.streaks.models import StreakPause
from apps.streaks.selectors import StreakConfig
from apps.streaks.wire import DaysOffField, conditions_of


class SettingsMetricSerializer(StrictSerializer):
    key = StringField(max_length=100)
    # Whole numbers: the SDK's StreakSettingsMetric.threshold is an integer.
    threshold = serializers.IntegerField(min_value=1, max_value=domain.MAX_THRESHOLD)


class FreezesSerializer(StrictSerializer):
    startCount = serializers.IntegerField(min_value=0, max_value=domain.MAX_FREEZES)
    maxCount = serializers.IntegerField(min_value=0, max_value=domain.MAX_FREEZES)
    autoEarnInterval = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_AUTO_EARN_DAYS, required=False, allow_null=True
    )
    autoEarnAmount = serializers.IntegerField(
        min_value=1, max_value=domain.MAX_FREEZES, required=False, allow_null=True
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        problem = domain.freezes_problem(_freeze_settings(attrs))
        if problem is not None:
            raise serializers.ValidationError(problem)
        return attrs


def _freeze_settings(attrs: Mapping[str, Any]) -> domain.FreezeSettings:
    return domain.FreezeSettings(
        start_count=attrs["startCount"],
        max_count=attrs["maxCount"],
        auto_earn_interval=attrs.get("autoEarnInterval"),
        auto_earn_amount=attrs.get("autoEarnAmount"),
    )


class StreakSettingsUpdateSerializer(StrictSerializer):
    frequency = serializers.ChoiceField(choices=Frequency.choices, required=False)
    evaluationMode = serializers.ChoiceField(choices=EvaluationMode.choices, required=False)
    customizationEnabled = serializers.BooleanField(required=False)
    daysOff = DaysOffField(required=False)
    metrics = SettingsMetricSerializer(many=True, required=False)
    freezes = FreezesSerializer(required=False, allow_null=True)

    def validate_metrics(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        problem = domain.conditions_problem(item["key"] for item in value)
        if problem is not None:
            raise serializers.ValidationError(problem)
        return value

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """streak_settings_update's arguments: the metrics are conditions (metric key,
        threshold), the freezes FreezeSettings (null: off)."""
        kwargs = super().service_kwargs(data)
        if "metrics" in data:
            kwargs["conditions"] = conditions_of(kwargs.pop("metrics"))
        if kwargs.get("freezes") is not None:
            kwargs["freezes"] = _freeze_settings(kwargs["freezes"])
        return kwargs


class FreezeItemSerializer(StrictSerializer):
    userId = StringField(max_length=255)


class PauseItemSerializer(StrictSerializer):
    userId = StringField(max_length=255)
    start = serializers.DateField()
    end = serializers.DateField()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # The service's rule, checked here too so that the item's problem is told before its
        # user is looked up.
        problem = domain.pause_problem(attrs["start"], attrs["end"])
        if problem is not None:
            raise serializers.ValidationError(problem)
        return attrs


class UserRefSerializer(StrictSerializer):
    id = StringField(max_length=255)


def admin_pause_render(pause: StreakPause, user_id: str) -> dict[str, Any]:
    return {
        "id": str(pause.public_id),
        "userId": user_id,
        "start": pause.start.isoformat(),
        "end": pause.end.isoformat(),
        "status": pause.status,
    }


def settings_render(config: StreakConfig) -> dict[str, Any]:
    return {
        "frequency": config.frequency,
        "evaluationMode": config.mode,
        "customizationEnabled": config.customization_enabled,
        "daysOff": sorted(config.days_off),
        "metrics": [
            {"key": config.metric_keys[pk], "threshold": threshold}
            for pk, threshold in config.thresholds.items()
        ],
        "freezes": {
            "startCount": config.freeze_start_count,
            "maxCount": config.freeze_max_count,
            "autoEarnInterval": config.freeze_auto_earn_interval,
            "autoEarnAmount": config.freeze_auto_earn_amount,
        }
        if config.freezes_enabled
        else None,
    }
