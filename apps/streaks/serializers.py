"""Wire shapes of streak settings and of the admin streak operations. The streak object and the
streak preferences, which other apps embed, are in apps/streaks/wire.py."""

from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.streaks.choices import EvaluationMode, Frequency
from apps.streaks.models import StreakPause
from apps.streaks.selectors import StreakConfig
from apps.streaks.wire import DaysOffField

MAX_PAUSE_DAYS = 365


class SettingsMetricSerializer(StrictSerializer):
    key = StringField(max_length=100)
    # Whole numbers: the SDK's StreakSettingsMetric.threshold is an integer.
    threshold = serializers.IntegerField(min_value=1, max_value=10**12)


class FreezesSerializer(StrictSerializer):
    startCount = serializers.IntegerField(min_value=0, max_value=100)
    maxCount = serializers.IntegerField(min_value=0, max_value=100)
    autoEarnInterval = serializers.IntegerField(
        min_value=1, max_value=3650, required=False, allow_null=True
    )
    autoEarnAmount = serializers.IntegerField(
        min_value=1, max_value=100, required=False, allow_null=True
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["maxCount"] < attrs["startCount"]:
            raise serializers.ValidationError("maxCount must be at least startCount")
        if (attrs.get("autoEarnInterval") is None) != (attrs.get("autoEarnAmount") is None):
            raise serializers.ValidationError(
                "set both autoEarnInterval and autoEarnAmount, or neither"
            )
        return attrs


class StreakSettingsUpdateSerializer(StrictSerializer):
    frequency = serializers.ChoiceField(choices=Frequency.choices, required=False)
    evaluationMode = serializers.ChoiceField(choices=EvaluationMode.choices, required=False)
    customizationEnabled = serializers.BooleanField(required=False)
    daysOff = DaysOffField(required=False)
    metrics = SettingsMetricSerializer(many=True, required=False)
    freezes = FreezesSerializer(required=False, allow_null=True)

    def validate_metrics(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        keys = [item["key"] for item in value]
        if len(keys) != len(set(keys)):
            raise serializers.ValidationError("metric keys must be unique")
        return value


class FreezeItemSerializer(StrictSerializer):
    userId = StringField(max_length=255)


class PauseItemSerializer(StrictSerializer):
    userId = StringField(max_length=255)
    start = serializers.DateField()
    end = serializers.DateField()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["end"] < attrs["start"]:
            raise serializers.ValidationError("end must not be before start")
        if (attrs["end"] - attrs["start"]).days > MAX_PAUSE_DAYS:
            raise serializers.ValidationError(f"a pause lasts at most {MAX_PAUSE_DAYS + 1} days")
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
