"""Wire shapes of streak settings, of several users' streaks and of the admin streak operations:
input serializers that validate, output shapes that document (the operations' answers too),
each with the typed function that renders it below it. The streak object and the streak
preferences, which other apps embed, are in apps/streaks/wire.py."""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.core.api.naming import api_refusal
from apps.core.api.shapes import Shape, renders
from apps.core.bulk import Issues
from apps.core.openapi import AdminDeletedItem, AdminIssue
from apps.streaks import domain
from apps.streaks.choices import EvaluationMode, Frequency, PauseStatus
from apps.streaks.models import StreakPause
from apps.streaks.selectors import StreakConfig, StreakView
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
        """The TenantStreakSettings streak_settings_update is given: the metrics are conditions
        (metric key, threshold), the freezes FreezeSettings (null: off)."""
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


# --- output shapes (each documents a body; the function below it renders it) -----------------


class AdminStreakPause(Shape):
    # A StreakPause, with its user's id.
    id = serializers.UUIDField()
    userId = serializers.CharField()
    start = serializers.DateField()
    end = serializers.DateField()
    # Plain values, not PauseStatus.choices: TenantStatus has the same (value, label) pairs, and
    # sharing its hash would name this enum TenantStatusEnum.
    status = serializers.ChoiceField(choices=PauseStatus.values)


@renders(AdminStreakPause)
def admin_streak_pause_render(pause: StreakPause, user_id: str) -> dict[str, Any]:
    return {
        "id": str(pause.public_id),
        "userId": user_id,
        "start": pause.start.isoformat(),
        "end": pause.end.isoformat(),
        "status": pause.status,
    }


class StreakSettingsMetric(Shape):
    # A metric's key and threshold.
    key = serializers.CharField(help_text="The metric's key.")
    threshold = serializers.IntegerField(help_text="Minimum change of the metric in a period.")


@renders(StreakSettingsMetric)
def streak_settings_metric_render(key: str, threshold: Decimal) -> dict[str, Any]:
    return {"key": key, "threshold": threshold}


class StreakSettingsFreezes(Shape):
    # A StreakConfig whose freezes are enabled.
    startCount = serializers.IntegerField(help_text="Freezes a new user starts with.")
    maxCount = serializers.IntegerField(help_text="Most freezes a user may hold.")
    autoEarnInterval = serializers.IntegerField(
        allow_null=True, help_text="Days between automatic grants; null: no auto-earn."
    )
    autoEarnAmount = serializers.IntegerField(
        allow_null=True, help_text="Freezes granted each time; null: no auto-earn."
    )


@renders(StreakSettingsFreezes)
def streak_settings_freezes_render(config: StreakConfig) -> dict[str, Any]:
    return {
        "startCount": config.freeze_start_count,
        "maxCount": config.freeze_max_count,
        "autoEarnInterval": config.freeze_auto_earn_interval,
        "autoEarnAmount": config.freeze_auto_earn_amount,
    }


class StreakSettings(Shape):
    # A StreakConfig.
    frequency = serializers.ChoiceField(choices=Frequency.choices)
    evaluationMode = serializers.ChoiceField(
        choices=EvaluationMode.choices,
        help_text="AND: every metric must reach its threshold; OR: any one.",
    )
    customizationEnabled = serializers.BooleanField(
        help_text="Whether users may set their own mode, thresholds and days off."
    )
    daysOff = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=6),
        help_text="Weekdays that do not count (0 = Sunday ... 6 = Saturday); daily streaks only.",
    )
    metrics = StreakSettingsMetric(many=True, help_text="The metrics that extend a streak.")
    freezes = StreakSettingsFreezes(allow_null=True, help_text="null: freezes are disabled.")


@renders(StreakSettings)
def streak_settings_render(config: StreakConfig) -> dict[str, Any]:
    return {
        "frequency": config.frequency,
        "evaluationMode": config.mode,
        "customizationEnabled": config.customization_enabled,
        "daysOff": sorted(config.days_off),
        "metrics": [
            streak_settings_metric_render(config.metric_keys[pk], threshold)
            for pk, threshold in config.thresholds.items()
        ],
        "freezes": streak_settings_freezes_render(config) if config.freezes_enabled else None,
    }


class BulkStreakResponseItem(Shape):
    # A StreakView, with its user's id.
    userId = serializers.CharField()
    streakLength = serializers.IntegerField()
    extended = serializers.DateTimeField(
        allow_null=True,
        help_text="When the streak was last extended; null when there is no active streak.",
    )


@renders(BulkStreakResponseItem)
def bulk_streak_response_item_render(view: StreakView, user_id: str) -> dict[str, Any]:
    return {"userId": user_id, "streakLength": view.length, "extended": view.extended_at}


# --- the answers of the streak operations ---------------------------------------------------
# Each is rendered from the operation's results and its Issues (apps.core.bulk).


def _issues() -> AdminIssue:
    return AdminIssue(many=True)


def _user_ids(help_text: str) -> serializers.ListField:
    return serializers.ListField(child=serializers.CharField(), help_text=help_text)


class CreateStreakFreezesResponse(Shape):
    # The freezes granted: only the issues are written.
    issues = _issues()


@renders(CreateStreakFreezesResponse)
def create_streak_freezes_response_render(granted: list[bool], issues: Issues) -> dict[str, Any]:
    return {"issues": issues.items}


class CreateStreakPausesResponse(Shape):
    # The pauses created, each with its user's id.
    created = AdminStreakPause(many=True)
    issues = _issues()


@renders(CreateStreakPausesResponse)
def create_streak_pauses_response_render(
    created: list[tuple[StreakPause, str]], issues: Issues
) -> dict[str, Any]:
    return {
        "created": [admin_streak_pause_render(pause, user_id) for pause, user_id in created],
        "issues": issues.items,
    }


class DeleteStreakPausesResponse(Shape):
    # The ids of the pauses archived, as sent.
    deleted = AdminDeletedItem(many=True)
    issues = _issues()


@renders(DeleteStreakPausesResponse)
def delete_streak_pauses_response_render(deleted: list[str], issues: Issues) -> dict[str, Any]:
    return {"deleted": [{"id": pause_id} for pause_id in deleted], "issues": issues.items}


class RestoreStreaksResponse(Shape):
    # The ids of the users whose streak was restored.
    restoredUsers = _user_ids("Ids of the users whose streak was restored.")
    issues = _issues()


@renders(RestoreStreaksResponse)
def restore_streaks_response_render(user_ids: list[str], issues: Issues) -> dict[str, Any]:
    return {"restoredUsers": user_ids, "issues": issues.items}


class ResetStreaksResponse(Shape):
    # The ids of the users whose streak was reset.
    resetUsers = _user_ids("Ids of the users whose streak was reset.")
    issues = _issues()


@renders(ResetStreaksResponse)
def reset_streaks_response_render(user_ids: list[str], issues: Issues) -> dict[str, Any]:
    return {"resetUsers": user_ids, "issues": issues.items}
