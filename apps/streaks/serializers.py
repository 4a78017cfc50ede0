"""Wire shapes of streaks, streak settings and streak preferences."""

import datetime as dt
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import PositiveDecimalField, StrictSerializer, StringField
from apps.streaks import domain
from apps.streaks.choices import EvaluationMode, Frequency
from apps.streaks.models import StreakPause
from apps.streaks.selectors import HistoryItem, StreakConfig, StreakView


class DaysOffField(serializers.ListField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            child=serializers.IntegerField(min_value=0, max_value=6),
            max_length=domain.MAX_DAYS_OFF,
            **kwargs,
        )


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


def _conditions(metrics: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(item["key"], item["threshold"]) for item in metrics]


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
            kwargs["conditions"] = _conditions(kwargs.pop("metrics"))
        if kwargs.get("freezes") is not None:
            kwargs["freezes"] = _freeze_settings(kwargs["freezes"])
        return kwargs


class MetricPreferenceSerializer(StrictSerializer):
    key = StringField(max_length=100)
    threshold = PositiveDecimalField(max_digits=24, decimal_places=6)


class StreakPreferencesSerializer(StrictSerializer):
    enabled = serializers.BooleanField(required=False)
    evaluationMode = serializers.ChoiceField(choices=EvaluationMode.choices, required=False)
    metrics = MetricPreferenceSerializer(many=True, required=False)
    daysOff = DaysOffField(required=False)

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """streak_preferences_update's arguments: the metrics are conditions."""
        kwargs = super().service_kwargs(data)
        if "metrics" in data:
            kwargs["conditions"] = _conditions(kwargs.pop("metrics"))
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


def _date(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


def freeze_fields(config: StreakConfig, freezes: int) -> dict[str, Any]:
    """Present only when freezes are enabled; auto-earn fields only when auto-earn is."""
    if not config.freezes_enabled:
        return {}
    fields: dict[str, Any] = {"freezes": freezes, "maxFreezes": config.freeze_max_count}
    if config.freeze_auto_earn_interval is not None:
        fields["freezeAutoEarnInterval"] = config.freeze_auto_earn_interval
        fields["freezeAutoEarnAmount"] = config.freeze_auto_earn_amount
    return fields


def streak_base_render(view: StreakView) -> dict[str, Any]:
    state = view.settlement.state
    frequency = view.config.frequency
    return {
        "length": state.length,
        "frequency": frequency,
        "started": _date(state.started) if state.length else None,
        "periodStart": view.current.isoformat(),
        "periodEnd": domain.period_end(view.current, frequency).isoformat(),
        "expires": _date(view.expires),
        **freeze_fields(view.config, state.freezes),
    }


def history_render(item: HistoryItem, freezes_enabled: bool) -> dict[str, Any]:
    rendered: dict[str, Any] = {
        "periodStart": item.period_start.isoformat(),
        "periodEnd": item.period_end.isoformat(),
        "length": item.length,
        "usedPause": item.used_pause,
    }
    if freezes_enabled:
        rendered["usedFreeze"] = item.used_freeze
    if item.reset_at is not None:
        rendered["resetAt"] = item.reset_at
    return rendered


def pause_render(pause: domain.Pause) -> dict[str, Any]:
    return {"id": pause.id, "start": pause.start.isoformat(), "end": pause.end.isoformat()}


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


def streak_response_render(
    view: StreakView, history: list[HistoryItem], pauses: list[domain.Pause]
) -> dict[str, Any]:
    """StreakResponse: the streak, its recent history (oldest first) and its upcoming pauses."""
    return {
        **streak_base_render(view),
        "extended": view.extended_at,
        "streakHistory": [history_render(item, view.config.freezes_enabled) for item in history],
        "pauses": [pause_render(p) for p in pauses],
    }
