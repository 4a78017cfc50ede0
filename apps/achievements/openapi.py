"""OpenAPI documentation of achievements (documentation only).

Response shapes follow the Trophy wire models (reference §3.5) and what the render functions of
apps.achievements.serializers emit. The application side builds on UserAchievementResponse of
apps.metrics.openapi (metric reads and event responses carry it too), so every achievement
shape documents its fields once. Request bodies are the validating serializers themselves.
"""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import OpenApiParameter, extend_schema_field
from rest_framework import serializers

from apps.accounts.openapi import Badge
from apps.achievements.choices import Status, Trigger
from apps.core.api.params import ATTRIBUTE_FILTER_SCHEMA
from apps.metrics.openapi import UserAchievementResponse
from apps.users.wire import AttributeRef

# --- parameters ---------------------------------------------------------------------------

ACHIEVEMENT_KEY = OpenApiParameter(
    "key", str, OpenApiParameter.PATH, description="The key of an api-trigger achievement."
)
USER_ATTRIBUTES = OpenApiParameter(
    "userAttributes",
    ATTRIBUTE_FILTER_SCHEMA,
    OpenApiParameter.QUERY,
    description=(
        "Comma-separated key:value pairs of user attributes (plan:pro,region:eu): only the "
        "achievements open to a user with these values. A value may itself contain ':'."
    ),
)
INCLUDE_INCOMPLETE = OpenApiParameter(
    "includeIncomplete",
    bool,
    OpenApiParameter.QUERY,
    description=(
        "true: also the achievements the user has not completed but can (achievedAt null). "
        "Default false: completed achievements only."
    ),
)


class AchievementBadgeSerializerExtension(OpenApiSerializerExtension):
    """apps.accounts.serializers has a BadgeSerializer of its own (branding logo and app icon);
    give the achievement one its own component name."""

    target_class = "apps.achievements.serializers.BadgeSerializer"

    def get_name(self, auto_schema: Any, direction: Any) -> str:
        return "AchievementBadge"


# --- achievements (application API) -------------------------------------------------------


def _completions() -> serializers.IntegerField:
    return serializers.IntegerField(help_text="Number of users who completed it.")


def _rarity() -> serializers.FloatField:
    return serializers.FloatField(
        help_text="Percent of the tenant's users who completed it, to two decimals."
    )


class AchievementWithStatsResponse(UserAchievementResponse):
    """An achievement (AchievementResponse) with how many users completed it."""

    completions = _completions()
    rarity = _rarity()

    def get_fields(self) -> dict[str, Any]:
        # AchievementResponse is UserAchievementResponse without the user's achievedAt.
        fields: dict[str, Any] = super().get_fields()
        del fields["achievedAt"]
        return fields


class UserAchievementWithStatsResponse(UserAchievementResponse):
    """An achievement with the user's completion time and how many users completed it."""

    achievedAt = serializers.DateTimeField(
        allow_null=True,
        help_text="When the user completed it; null when not completed (includeIncomplete=true).",
    )
    completions = _completions()
    rarity = _rarity()


# MetricEventPointsResponse is documented by apps.points.openapi, which this app may not import
# (points sits above achievements); refer to its component, which the event endpoint always
# puts in the application API's document.
@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"$ref": "#/components/schemas/MetricEventPointsResponse"},
    }
)
class _PointsByKey(serializers.DictField):
    pass


class AchievementCompletionResponse(serializers.Serializer):
    completionId = serializers.CharField(help_text="The completion's id.")
    achievement = UserAchievementResponse(help_text="The completed achievement.")
    points = _PointsByKey(
        help_text="Points systems changed by the completion's achievement triggers, by key."
    )


# --- achievements (admin API) -------------------------------------------------------------


class AdminAchievement(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    trigger = serializers.ChoiceField(choices=Trigger.choices)
    status = serializers.ChoiceField(
        choices=Status.choices,
        help_text="inactive: invisible and not completable; locked: no new completions, shown "
        "only to the users who completed it.",
    )
    badge = Badge(allow_null=True)
    userAttributes = AttributeRef(
        many=True, help_text="Only users with all these attribute values can complete it."
    )
    key = serializers.CharField(required=False, help_text="api trigger.")
    metricId = serializers.UUIDField(required=False, help_text="metric trigger.")
    metricValue = serializers.FloatField(
        required=False, help_text="metric trigger: the total that completes it."
    )
    eventAttributes = AttributeRef(
        many=True, required=False, help_text="metric trigger: events counted."
    )
    streakLength = serializers.IntegerField(required=False, help_text="streak trigger.")
    anniversaryYears = serializers.IntegerField(required=False, help_text="anniversary trigger.")
    achievementIds = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        help_text="achievement trigger: the achievements to complete first.",
    )
