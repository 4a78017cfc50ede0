"""The streak as other apps' bodies show it, and the streak preferences they embed: the streak
object of webhook payloads and GET /users/{id}/streak (`BaseStreakResponse`, `StreakResponse`,
rendered by `streak_base_render` and `streak_response_render`), the same object with what the
event did to it in event responses (`MetricEventStreakResponse`), and a user's streak
preferences, part of the notification preferences body (`StreakPreferencesSerializer`,
documented by `StreakPreferences`). Declared once here, each response shape a `Shape`
(apps/core/api/shapes.py) that documents it, with the typed function that renders it below it;
the streaks app's own routes use them too (docs/style.md, "One app from another")."""

import datetime as dt
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import PositiveDecimalField, StrictSerializer, StringField
from apps.core.api.shapes import Shape, renders
from apps.streaks import domain
from apps.streaks.choices import EvaluationMode, Frequency
from apps.streaks.selectors import HistoryItem, StreakView

# --- the streak object --------------------------------------------------------------------


def _date(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


class BaseStreakResponse(Shape):
    # No docstring: subclasses would inherit it as their component description.
    # A StreakView. The freeze fields are present only when freezes are enabled, the auto-earn
    # ones only when auto-earn is too.
    length = serializers.IntegerField(help_text="Current streak length, in periods.")
    frequency = serializers.ChoiceField(choices=Frequency.choices)
    started = serializers.DateField(
        allow_null=True, help_text="First day of the current streak; null when length is 0."
    )
    periodStart = serializers.DateField(allow_null=True, help_text="First day of the period.")
    periodEnd = serializers.DateField(allow_null=True, help_text="Last day of the period.")
    expires = serializers.DateField(
        allow_null=True,
        help_text="Last day by which the streak must be extended to be kept; null when "
        "there is no streak to lose.",
    )
    freezes = serializers.IntegerField(
        required=False, help_text="Freezes the user holds. Only when freezes are enabled."
    )
    maxFreezes = serializers.IntegerField(
        required=False,
        help_text="Most freezes a user may hold. Only when freezes are enabled.",
    )
    freezeAutoEarnInterval = serializers.IntegerField(
        required=False, help_text="Days between automatic freeze grants. Only with auto-earn."
    )
    freezeAutoEarnAmount = serializers.IntegerField(
        required=False, help_text="Freezes granted each time. Only with auto-earn."
    )


@renders(BaseStreakResponse)
def streak_base_render(view: StreakView) -> dict[str, Any]:
    state = view.settlement.state
    config = view.config
    body: dict[str, Any] = {
        "length": state.length,
        "frequency": config.frequency,
        "started": _date(state.started) if state.length else None,
        "periodStart": view.current.isoformat(),
        "periodEnd": domain.period_end(view.current, config.frequency).isoformat(),
        "expires": _date(view.expires),
    }
    if config.freezes_enabled:
        body["freezes"] = state.freezes
        body["maxFreezes"] = config.freeze_max_count
    if config.freezes_enabled and config.freeze_auto_earn_interval is not None:
        body["freezeAutoEarnInterval"] = config.freeze_auto_earn_interval
        body["freezeAutoEarnAmount"] = config.freeze_auto_earn_amount
    return body


class MetricEventStreakResponse(BaseStreakResponse):
    # A StreakView and whether the event extended the streak.
    extended = serializers.BooleanField(help_text="Whether this event extended the streak.")


@renders(MetricEventStreakResponse)
def metric_event_streak_response_render(view: StreakView, extended: bool) -> dict[str, Any]:
    body = streak_base_render(view)
    body["extended"] = extended
    return body


class StreakResponseStreakHistoryItem(Shape):
    # A HistoryItem, with whether freezes are enabled.
    periodStart = serializers.DateField()
    periodEnd = serializers.DateField()
    length = serializers.IntegerField(help_text="Streak length at the end of the period.")
    usedPause = serializers.BooleanField(help_text="Whether a pause covered this period.")
    usedFreeze = serializers.BooleanField(
        required=False,
        help_text="Whether a freeze kept the streak in this period. Only when freezes are enabled.",
    )
    resetAt = serializers.DateTimeField(
        required=False, help_text="When an admin reset the streak in this period, if one did."
    )


@renders(StreakResponseStreakHistoryItem)
def streak_response_streak_history_item_render(
    item: HistoryItem, freezes_enabled: bool
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "periodStart": item.period_start.isoformat(),
        "periodEnd": item.period_end.isoformat(),
        "length": item.length,
        "usedPause": item.used_pause,
    }
    if freezes_enabled:
        body["usedFreeze"] = item.used_freeze
    if item.reset_at is not None:
        body["resetAt"] = item.reset_at
    return body


class StreakResponsePausesItem(Shape):
    # A domain.Pause.
    id = serializers.CharField(help_text="The pause's id.")
    start = serializers.DateField()
    end = serializers.DateField()


@renders(StreakResponsePausesItem)
def streak_response_pauses_item_render(pause: domain.Pause) -> dict[str, Any]:
    return {"id": pause.id, "start": pause.start.isoformat(), "end": pause.end.isoformat()}


class StreakResponse(BaseStreakResponse):
    """A user's streak with its recent history and its active and upcoming pauses."""

    # A StreakView with its recent history and pauses.
    extended = serializers.DateTimeField(
        allow_null=True,
        help_text="When the streak was last extended; null when there is no active streak.",
    )
    streakHistory = StreakResponseStreakHistoryItem(
        many=True, help_text="The last historyPeriods periods, oldest first."
    )
    pauses = StreakResponsePausesItem(many=True, help_text="Active and upcoming pauses only.")


@renders(StreakResponse)
def streak_response_render(
    view: StreakView, history: list[HistoryItem], pauses: list[domain.Pause]
) -> dict[str, Any]:
    """StreakResponse: the streak, its recent history (oldest first) and its upcoming pauses."""
    freezes_enabled = view.config.freezes_enabled
    body = streak_base_render(view)
    body["extended"] = view.extended_at
    body["streakHistory"] = [
        streak_response_streak_history_item_render(item, freezes_enabled) for item in history
    ]
    body["pauses"] = [streak_response_pauses_item_render(p) for p in pauses]
    return body


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
    # The service's conditions (`service_kwargs`).
    metrics = MetricPreferenceSerializer(many=True, required=False, source="conditions")
    daysOff = DaysOffField(required=False)

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """streak_preferences_update's arguments: the metrics are conditions."""
        kwargs = super().service_kwargs(data)
        if "conditions" in kwargs:
            kwargs["conditions"] = conditions_of(kwargs["conditions"])
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
