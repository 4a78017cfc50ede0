"""The streak as other apps' bodies show it, and the streak preferences they embed: the streak
object of webhook payloads and GET /users/{id}/streak (`BaseStreakResponse`, `StreakResponse`,
rendered by `streak_base_render` and `streak_response_render`), the same object with what the
event did to it in event responses (`MetricEventStreakResponse`), and a user's streak
preferences, part of the notification preferences body (`StreakPreferencesSerializer`,
documented by `StreakPreferences`). Declared once here, each response shape a `Shape`
(apps/core/api/shapes.py) whose fields document it and render it; the streaks app's own routes
use them too (docs/style.md, "One app from another")."""

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import PositiveDecimalField, StrictSerializer, StringField
from apps.core.api.shapes import OMIT, Shape, out
from apps.streaks import domain
from apps.streaks.choices import EvaluationMode, Frequency
from apps.streaks.selectors import HistoryItem, StreakView

# --- the streak object --------------------------------------------------------------------


def _date(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


# Present only when freezes are enabled; the auto-earn ones only when auto-earn is too.


def _freezes(view: StreakView, _: Any) -> Any:
    return view.settlement.state.freezes if view.config.freezes_enabled else OMIT


def _max_freezes(view: StreakView, _: Any) -> Any:
    return view.config.freeze_max_count if view.config.freezes_enabled else OMIT


def _auto_earn(view: StreakView, _: Any) -> Any:
    config = view.config
    return (
        config if config.freezes_enabled and config.freeze_auto_earn_interval is not None else None
    )


def _auto_earn_interval(view: StreakView, _: Any) -> Any:
    config = _auto_earn(view, _)
    return config.freeze_auto_earn_interval if config is not None else OMIT


def _auto_earn_amount(view: StreakView, _: Any) -> Any:
    config = _auto_earn(view, _)
    return config.freeze_auto_earn_amount if config is not None else OMIT


def _started(view: StreakView, _: Any) -> str | None:
    state = view.settlement.state
    return _date(state.started) if state.length else None


class BaseStreakResponse(Shape):
    # No docstring: subclasses would inherit it as their component description.
    # Renders a StreakView.
    length = out(
        serializers.IntegerField(help_text="Current streak length, in periods."),
        "settlement.state.length",
    )
    frequency = out(serializers.ChoiceField(choices=Frequency.choices), "config.frequency")
    started = out(
        serializers.DateField(
            allow_null=True, help_text="First day of the current streak; null when length is 0."
        ),
        _started,
    )
    periodStart = out(
        serializers.DateField(allow_null=True, help_text="First day of the period."),
        lambda view, _: view.current.isoformat(),
    )
    periodEnd = out(
        serializers.DateField(allow_null=True, help_text="Last day of the period."),
        lambda view, _: domain.period_end(view.current, view.config.frequency).isoformat(),
    )
    expires = out(
        serializers.DateField(
            allow_null=True,
            help_text="Last day by which the streak must be extended to be kept; null when "
            "there is no streak to lose.",
        ),
        lambda view, _: _date(view.expires),
    )
    freezes = out(
        serializers.IntegerField(
            required=False, help_text="Freezes the user holds. Only when freezes are enabled."
        ),
        _freezes,
    )
    maxFreezes = out(
        serializers.IntegerField(
            required=False,
            help_text="Most freezes a user may hold. Only when freezes are enabled.",
        ),
        _max_freezes,
    )
    freezeAutoEarnInterval = out(
        serializers.IntegerField(
            required=False, help_text="Days between automatic freeze grants. Only with auto-earn."
        ),
        _auto_earn_interval,
    )
    freezeAutoEarnAmount = out(
        serializers.IntegerField(
            required=False, help_text="Freezes granted each time. Only with auto-earn."
        ),
        _auto_earn_amount,
    )


streak_base_render = BaseStreakResponse.render


class MetricEventStreakResponse(BaseStreakResponse):
    # Renders a StreakView with, as context, whether the event extended the streak.
    extended = out(
        serializers.BooleanField(help_text="Whether this event extended the streak."),
        lambda _, extended: extended,
    )


class StreakResponseStreakHistoryItem(Shape):
    # Renders a HistoryItem; the context says whether freezes are enabled.
    periodStart = out(serializers.DateField(), lambda item, _: item.period_start.isoformat())
    periodEnd = out(serializers.DateField(), lambda item, _: item.period_end.isoformat())
    length = serializers.IntegerField(help_text="Streak length at the end of the period.")
    usedPause = serializers.BooleanField(help_text="Whether a pause covered this period.")
    usedFreeze = out(
        serializers.BooleanField(
            required=False,
            help_text="Whether a freeze kept the streak in this period. Only when freezes are "
            "enabled.",
        ),
        lambda item, freezes_enabled: item.used_freeze if freezes_enabled else OMIT,
    )
    resetAt = out(
        serializers.DateTimeField(
            required=False, help_text="When an admin reset the streak in this period, if one did."
        ),
        lambda item, _: item.reset_at if item.reset_at is not None else OMIT,
    )


class StreakResponsePausesItem(Shape):
    # Renders a domain.Pause.
    id = serializers.CharField(help_text="The pause's id.")
    start = out(serializers.DateField(), lambda pause, _: pause.start.isoformat())
    end = out(serializers.DateField(), lambda pause, _: pause.end.isoformat())


@dataclass(frozen=True)
class StreakDetails:
    history: list[HistoryItem]  # oldest first
    pauses: list[domain.Pause]  # active and upcoming


def _history(view: StreakView, details: StreakDetails) -> list[dict[str, Any]]:
    render, freezes_enabled = StreakResponseStreakHistoryItem.render, view.config.freezes_enabled
    return [render(item, freezes_enabled) for item in details.history]


class StreakResponse(BaseStreakResponse):
    """A user's streak with its recent history and its active and upcoming pauses."""

    # Renders a StreakView with, as context, its StreakDetails.
    extended = out(
        serializers.DateTimeField(
            allow_null=True,
            help_text="When the streak was last extended; null when there is no active streak.",
        ),
        "extended_at",
    )
    streakHistory = out(
        StreakResponseStreakHistoryItem(
            many=True, help_text="The last historyPeriods periods, oldest first."
        ),
        _history,
    )
    pauses = out(
        StreakResponsePausesItem(many=True, help_text="Active and upcoming pauses only."),
        lambda _, details: [StreakResponsePausesItem.render(p) for p in details.pauses],
    )


def streak_response_render(
    view: StreakView, history: list[HistoryItem], pauses: list[domain.Pause]
) -> dict[str, Any]:
    """StreakResponse: the streak, its recent history (oldest first) and its upcoming pauses."""
    return StreakResponse.render(view, StreakDetails(history, pauses))


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
