"""The streak as other apps' bodies show it, and the streak preferences they embed: the streak
object of event responses, webhook payloads and GET /users/{id}/streak (`streak_base_render`,
`streak_response_render`), and a user's streak preferences, part of the notification
preferences body (`StreakPreferencesSerializer`, documented by `StreakPreferences`). Declared
once here; the streaks app's own routes use them too (docs/style.md, "One app from
another")."""

import datetime as dt
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import PositiveDecimalField, StrictSerializer, StringField
from apps.streaks import domain
from apps.streaks.choices import EvaluationMode
from apps.streaks.selectors import HistoryItem, StreakConfig, StreakView

# --- the streak object --------------------------------------------------------------------


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


# --- streak preferences (the endpoint is apps.notifications.views) ---------------------------


class DaysOffField(serializers.ListField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            child=serializers.IntegerField(min_value=0, max_value=6),
            max_length=domain.MAX_DAYS_OFF,
            **kwargs,
        )


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
            kwargs["conditions"] = conditions_of(kwargs.pop("metrics"))
        return kwargs


def conditions_of(metrics: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Metrics as the wire lists them ({key, threshold}) as the services' conditions."""
    return [(item["key"], item["threshold"]) for item in metrics]


class StreakMetricPreference(serializers.Serializer):
    key = serializers.CharField(help_text="The metric's key.")
    threshold = serializers.FloatField(help_text="Minimum change of the metric in a period.")


class StreakPreferences(serializers.Serializer):
    enabled = serializers.BooleanField(
        help_text="false: the user's streak stays 0, with no streak notifications."
    )
    evaluationMode = serializers.ChoiceField(
        choices=EvaluationMode.choices, required=False, help_text="The user's own mode, if set."
    )
    metrics = StreakMetricPreference(
        many=True, required=False, help_text="The user's own thresholds, if set."
    )
    daysOff = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=6),
        required=False,
        help_text="The user's own days off (0 = Sunday ... 6 = Saturday), if set.",
    )
