"""Wire shapes of streak settings, of several users' streaks and of the admin streak operations:
input serializers that validate, output shapes that render and document (the operations'
answers too). The streak object and the streak preferences, which other apps embed, are in
apps/streaks/wire.py."""

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.core.api.naming import api_refusal
from apps.core.api.shapes import Shape, out
from apps.core.openapi import AdminDeletedItem, AdminIssue
from apps.streaks import domain
from apps.streaks.choices import EvaluationMode, Frequency, PauseStatus
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
            raise api_refusal(problem, type(self))
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
    # The service's conditions (`service_kwargs`).
    metrics = SettingsMetricSerializer(many=True, required=False, source="conditions")
    freezes = FreezesSerializer(required=False, allow_null=True)

    def validate_metrics(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        problem = domain.conditions_problem(item["key"] for item in value)
        if problem is not None:
            raise api_refusal(problem, type(self))
        return value

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """streak_settings_update's arguments: the metrics are conditions (metric key,
        threshold), the freezes FreezeSettings (null: off)."""
        kwargs = super().service_kwargs(data)
        if "conditions" in kwargs:
            kwargs["conditions"] = conditions_of(kwargs["conditions"])
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
            raise api_refusal(problem, type(self))
        return attrs


class UserRefSerializer(StrictSerializer):
    id = StringField(max_length=255)


# --- output shapes (declared once: they render and document, apps/core/api/shapes.py) -------


class AdminStreakPause(Shape):
    # Renders a StreakPause with, as context, its user's id.
    id = out(serializers.UUIDField(), lambda pause, _: str(pause.public_id))
    userId = out(serializers.CharField(), lambda _, user_id: user_id)
    start = out(serializers.DateField(), lambda pause, _: pause.start.isoformat())
    end = out(serializers.DateField(), lambda pause, _: pause.end.isoformat())
    # Plain values, not PauseStatus.choices: TenantStatus has the same (value, label) pairs, and
    # sharing its hash would name this enum TenantStatusEnum.
    status = serializers.ChoiceField(choices=PauseStatus.values)


class StreakSettingsMetric(Shape):
    # Renders a (key, threshold) pair.
    key = out(serializers.CharField(help_text="The metric's key."), lambda pair, _: pair[0])
    threshold = out(
        serializers.IntegerField(help_text="Minimum change of the metric in a period."),
        lambda pair, _: pair[1],
    )


class StreakSettingsFreezes(Shape):
    # Renders a StreakConfig whose freezes are enabled.
    startCount = out(
        serializers.IntegerField(help_text="Freezes a new user starts with."),
        "freeze_start_count",
    )
    maxCount = out(
        serializers.IntegerField(help_text="Most freezes a user may hold."),
        "freeze_max_count",
    )
    autoEarnInterval = out(
        serializers.IntegerField(
            allow_null=True, help_text="Days between automatic grants; null: no auto-earn."
        ),
        "freeze_auto_earn_interval",
    )
    autoEarnAmount = out(
        serializers.IntegerField(
            allow_null=True, help_text="Freezes granted each time; null: no auto-earn."
        ),
        "freeze_auto_earn_amount",
    )


class StreakSettings(Shape):
    # Renders a StreakConfig.
    frequency = serializers.ChoiceField(choices=Frequency.choices)
    evaluationMode = out(
        serializers.ChoiceField(
            choices=EvaluationMode.choices,
            help_text="AND: every metric must reach its threshold; OR: any one.",
        ),
        "mode",
    )
    customizationEnabled = serializers.BooleanField(
        help_text="Whether users may set their own mode, thresholds and days off."
    )
    daysOff = out(
        serializers.ListField(
            child=serializers.IntegerField(min_value=0, max_value=6),
            help_text="Weekdays that do not count (0 = Sunday ... 6 = Saturday); daily streaks "
            "only.",
        ),
        lambda config, _: sorted(config.days_off),
    )
    metrics = out(
        StreakSettingsMetric(many=True, help_text="The metrics that extend a streak."),
        lambda config, _: [
            StreakSettingsMetric.render((config.metric_keys[pk], threshold))
            for pk, threshold in config.thresholds.items()
        ],
    )
    freezes = out(
        StreakSettingsFreezes(allow_null=True, help_text="null: freezes are disabled."),
        lambda config, _: StreakSettingsFreezes.render(config) if config.freezes_enabled else None,
    )


class BulkStreakResponseItem(Shape):
    # Renders a StreakView with, as context, its user's id.
    userId = out(serializers.CharField(), lambda _, user_id: user_id)
    streakLength = out(serializers.IntegerField(), "length")
    extended = out(
        serializers.DateTimeField(
            allow_null=True,
            help_text="When the streak was last extended; null when there is no active streak.",
        ),
        "extended_at",
    )


# --- the answers of the streak operations ---------------------------------------------------
# Each renders the operation's results with, as context, its Issues (apps.core.bulk).


def _issues() -> Any:
    return out(AdminIssue(many=True), "context.items")


def _user_ids(help_text: str) -> Any:
    return out(
        serializers.ListField(child=serializers.CharField(), help_text=help_text),
        lambda user_ids, _: user_ids,
    )


class CreateStreakFreezesResponse(Shape):
    # Renders the freezes granted: only the issues are written.
    issues = _issues()


class CreateStreakPausesResponse(Shape):
    # Renders the pauses created, each with its user's id.
    created = out(
        AdminStreakPause(many=True),
        lambda created, _: [AdminStreakPause.render(pause, user_id) for pause, user_id in created],
    )
    issues = _issues()


class DeleteStreakPausesResponse(Shape):
    # Renders the ids of the pauses archived, as sent.
    deleted = out(
        AdminDeletedItem(many=True),
        lambda deleted, _: [{"id": pause_id} for pause_id in deleted],
    )
    issues = _issues()


class RestoreStreaksResponse(Shape):
    # Renders the ids of the users whose streak was restored.
    restoredUsers = _user_ids("Ids of the users whose streak was restored.")
    issues = _issues()


class ResetStreaksResponse(Shape):
    # Renders the ids of the users whose streak was reset.
    resetUsers = _user_ids("Ids of the users whose streak was reset.")
    issues = _issues()
