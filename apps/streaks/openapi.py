"""OpenAPI documentation of streaks, streak settings and preferences (documentation only).

Response shapes follow the Trophy wire models (reference §3.2, §3.4) and what the render
functions of apps.streaks.serializers and apps.streaks.wire emit: fields those functions always
write are required (possibly null); fields written only when a feature is on (freezes,
auto-earn, a reset) are optional. Request bodies are the validating serializers themselves,
wrapped here where a streak operation takes {"<key>": [items]} instead of a bare array
(reference §2.2). The streak preferences, which the notification preferences embed, are
documented in apps.streaks.wire.
"""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.core.api.params import LIST_ITEM_SCHEMA
from apps.core.openapi import AdminDeletedItem, AdminIssue, ids_parameter
from apps.streaks.choices import EvaluationMode, Frequency, PauseStatus
from apps.streaks.serializers import (
    FreezeItemSerializer,
    PauseItemSerializer,
    UserRefSerializer,
)

# The limits apps.streaks.views enforces (restated: the views import this module).
MAX_HISTORY_PERIODS = 365
MAX_ITEMS = 100

# --- parameters ---------------------------------------------------------------------------

HISTORY_PERIODS = OpenApiParameter(
    "historyPeriods",
    {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY_PERIODS, "default": 7},
    OpenApiParameter.QUERY,
    description=(
        f"Number of periods of history, ending with the current one: 1 to "
        f"{MAX_HISTORY_PERIODS} (default 7)."
    ),
)
USER_IDS = OpenApiParameter(
    "userIds",
    {"type": "array", "items": LIST_ITEM_SCHEMA, "minItems": 1, "maxItems": MAX_ITEMS},
    OpenApiParameter.QUERY,
    required=True,
    style="form",
    explode=True,
    description=(
        f"1 to {MAX_ITEMS} user ids, as repeated keys (?userIds=a&userIds=b) or comma-separated "
        "(?userIds=a,b). Unknown ids are left out of the response."
    ),
)
PAUSE_IDS = ids_parameter(
    f"1 to {MAX_ITEMS} streak pause ids, as repeated keys (?ids=a&ids=b) or comma-separated "
    "(?ids=a,b). An unknown or malformed id is reported in `issues`."
)

# --- streaks (application API) ------------------------------------------------------------


class BaseStreakResponse(serializers.Serializer):
    # No docstring: subclasses would inherit it as their component description.
    length = serializers.IntegerField(help_text="Current streak length, in periods.")
    frequency = serializers.ChoiceField(choices=Frequency.choices)
    started = serializers.DateField(
        allow_null=True, help_text="First day of the current streak; null when length is 0."
    )
    periodStart = serializers.DateField(allow_null=True, help_text="First day of the period.")
    periodEnd = serializers.DateField(allow_null=True, help_text="Last day of the period.")
    expires = serializers.DateField(
        allow_null=True,
        help_text="Last day by which the streak must be extended to be kept; null when there "
        "is no streak to lose.",
    )
    freezes = serializers.IntegerField(
        required=False, help_text="Freezes the user holds. Only when freezes are enabled."
    )
    maxFreezes = serializers.IntegerField(
        required=False, help_text="Most freezes a user may hold. Only when freezes are enabled."
    )
    freezeAutoEarnInterval = serializers.IntegerField(
        required=False, help_text="Days between automatic freeze grants. Only with auto-earn."
    )
    freezeAutoEarnAmount = serializers.IntegerField(
        required=False, help_text="Freezes granted each time. Only with auto-earn."
    )


class StreakResponseStreakHistoryItem(serializers.Serializer):
    periodStart = serializers.DateField()
    periodEnd = serializers.DateField()
    length = serializers.IntegerField(help_text="Streak length at the end of the period.")
    usedFreeze = serializers.BooleanField(
        required=False,
        help_text="Whether a freeze kept the streak in this period. Only when freezes are enabled.",
    )
    usedPause = serializers.BooleanField(help_text="Whether a pause covered this period.")
    resetAt = serializers.DateTimeField(
        required=False, help_text="When an admin reset the streak in this period, if one did."
    )


class StreakResponsePausesItem(serializers.Serializer):
    id = serializers.CharField(help_text="The pause's id.")
    start = serializers.DateField()
    end = serializers.DateField()


class StreakResponse(BaseStreakResponse):
    """A user's streak with its recent history and its active and upcoming pauses."""

    extended = serializers.DateTimeField(
        allow_null=True,
        help_text="When the streak was last extended; null when there is no active streak.",
    )
    streakHistory = StreakResponseStreakHistoryItem(
        many=True, help_text="The last historyPeriods periods, oldest first."
    )
    pauses = StreakResponsePausesItem(many=True, help_text="Active and upcoming pauses only.")


class BulkStreakResponseItem(serializers.Serializer):
    userId = serializers.CharField()
    streakLength = serializers.IntegerField()
    extended = serializers.DateTimeField(
        allow_null=True,
        help_text="When the streak was last extended; null when there is no active streak.",
    )


# --- streak settings (admin API) ----------------------------------------------------------


class StreakSettingsMetric(serializers.Serializer):
    key = serializers.CharField(help_text="The metric's key.")
    threshold = serializers.IntegerField(help_text="Minimum change of the metric in a period.")


class StreakSettingsFreezes(serializers.Serializer):
    startCount = serializers.IntegerField(help_text="Freezes a new user starts with.")
    maxCount = serializers.IntegerField(help_text="Most freezes a user may hold.")
    autoEarnInterval = serializers.IntegerField(
        allow_null=True, help_text="Days between automatic grants; null: no auto-earn."
    )
    autoEarnAmount = serializers.IntegerField(
        allow_null=True, help_text="Freezes granted each time; null: no auto-earn."
    )


class StreakSettings(serializers.Serializer):
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


# --- streak operations (admin API) --------------------------------------------------------


def _items(child: serializers.Serializer, help_text: str) -> serializers.ListField:
    return serializers.ListField(
        child=child, min_length=1, max_length=MAX_ITEMS, help_text=help_text
    )


class CreateStreakFreezes(serializers.Serializer):
    freezes = _items(FreezeItemSerializer(), "Each item grants one freeze to that user.")


class CreateStreakPauses(serializers.Serializer):
    pauses = _items(PauseItemSerializer(), "Each item pauses that user's streak from start to end.")


class RestoreStreaks(serializers.Serializer):
    users = _items(UserRefSerializer(), "The users whose streaks to restore.")


class ResetStreaks(serializers.Serializer):
    users = _items(UserRefSerializer(), "The users whose streaks to reset to 0.")


class AdminStreakPause(serializers.Serializer):
    id = serializers.UUIDField()
    userId = serializers.CharField()
    start = serializers.DateField()
    end = serializers.DateField()
    # Plain values, not PauseStatus.choices: TenantStatus has the same (value, label) pairs, and
    # sharing its hash would name this enum TenantStatusEnum.
    status = serializers.ChoiceField(choices=PauseStatus.values)


class CreateStreakFreezesResponse(serializers.Serializer):
    issues = AdminIssue(many=True)


class CreateStreakPausesResponse(serializers.Serializer):
    created = AdminStreakPause(many=True)
    issues = AdminIssue(many=True)


class DeleteStreakPausesResponse(serializers.Serializer):
    deleted = AdminDeletedItem(many=True)
    issues = AdminIssue(many=True)


class RestoreStreaksResponse(serializers.Serializer):
    restoredUsers = serializers.ListField(
        child=serializers.CharField(), help_text="Ids of the users whose streak was restored."
    )
    issues = AdminIssue(many=True)


class ResetStreaksResponse(serializers.Serializer):
    resetUsers = serializers.ListField(
        child=serializers.CharField(), help_text="Ids of the users whose streak was reset."
    )
    issues = AdminIssue(many=True)
