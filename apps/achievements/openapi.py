"""OpenAPI documentation of achievements (documentation only).

Response shapes follow the Trophy wire models (reference §3.5) and what the render functions of
apps.achievements.serializers and apps.achievements.wire emit. The application side builds on
UserAchievementResponse of apps.achievements.wire (event responses and completions carry it
too), so every achievement shape documents its fields once. Request bodies are the validating
serializers themselves.
"""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.achievements.choices import Status, Trigger
from apps.achievements.wire import UserAchievementResponse, completions_field, rarity_field
from apps.core.api.params import ATTRIBUTE_FILTER_SCHEMA
from apps.core.openapi import Badge
from apps.users.wire import AttributeRef

# --- parameters ---------------------------------------------------------------------------

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

    target_class = "apps.achievements.wire.BadgeSerializer"

    def get_name(self, auto_schema: Any, direction: Any) -> str:
        return "AchievementBadge"


# --- achievements (application API) -------------------------------------------------------


class AchievementWithStatsResponse(UserAchievementResponse):
    """An achievement (AchievementResponse) with how many users completed it."""

    completions = completions_field()
    rarity = rarity_field()

    def get_fields(self) -> dict[str, Any]:
        # AchievementResponse is UserAchievementResponse without the user's achievedAt.
        fields: dict[str, Any] = super().get_fields()
        del fields["achievedAt"]
        return fields


class MetricResponse(serializers.Serializer):
    id = serializers.CharField()
    key = serializers.CharField()
    name = serializers.CharField()
    status = serializers.ChoiceField(
        choices=["active"], help_text="Always active (required by the Node SDK)."
    )
    current = serializers.FloatField(help_text="The user's total.")
    achievements = UserAchievementResponse(
        many=True, help_text="The metric's achievements with the user's progress."
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
