"""OpenAPI documentation of metric events and of achievement completion (documentation only).

EventResponse follows the Trophy wire model in full. The achievement, streak, points and
leaderboard shapes it carries are declared by their apps' wire modules (apps.achievements.wire,
apps.streaks.wire, apps.points.wire, apps.leaderboards.wire), shared with those apps' own
endpoints."""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.achievements.wire import UserAchievementResponse
from apps.leaderboards.wire import MetricEventLeaderboardResponse
from apps.pipeline.serializers import MAX_IDEMPOTENCY_KEY
from apps.points.wire import MetricEventPointsResponse
from apps.streaks.wire import MetricEventStreakResponse

# What a client can send in a header and get back unchanged: visible ASCII, inner spaces (HTTP
# strips the outer ones).
IDEMPOTENCY_KEY_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_IDEMPOTENCY_KEY,
    "pattern": "^[!-~]([ -~]*[!-~])?$",
}
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    IDEMPOTENCY_KEY_SCHEMA,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        f"1 to {MAX_IDEMPOTENCY_KEY} characters. Reusing a key for the same user and metric "
        "applies nothing and answers 202 with the current state and idempotentReplayed: true."
    ),
)
BATCH_IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    IDEMPOTENCY_KEY_SCHEMA,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        f"1 to {MAX_IDEMPOTENCY_KEY} characters. Sending a batch again with a key the tenant "
        "used before stores nothing and answers 202 with the first batch's accepted count "
        "(keys are kept QUEUED_EVENTS_RETENTION_DAYS)."
    ),
)

ACHIEVEMENT_KEY = OpenApiParameter(
    "key", str, OpenApiParameter.PATH, description="The key of an api-trigger achievement."
)


class MetricValueFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "apps.pipeline.serializers.MetricValueField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return {
            "type": "number",
            "description": "Added to the user's total; may be negative or decimal (at most "
            "±1e12, rounded to 6 decimal places).",
        }


class EventResponse(serializers.Serializer):
    eventId = serializers.CharField()
    metricId = serializers.CharField()
    total = serializers.FloatField(help_text="The user's new total of the metric.")
    achievements = UserAchievementResponse(
        many=True, help_text="Achievements this event completed."
    )
    currentStreak = MetricEventStreakResponse()
    points = serializers.DictField(
        child=MetricEventPointsResponse(), help_text="Points systems changed, by system key."
    )
    leaderboards = serializers.DictField(
        child=MetricEventLeaderboardResponse(),
        help_text="Leaderboards affected, by leaderboard key.",
    )
    idempotencyKey = serializers.CharField(
        required=False, help_text="Present when an Idempotency-Key was sent."
    )
    idempotentReplayed = serializers.BooleanField(
        required=False, help_text="Present when an Idempotency-Key was sent."
    )


class BatchEventsResponse(serializers.Serializer):
    accepted = serializers.IntegerField(help_text="Number of events queued.")


class AchievementCompletionResponse(serializers.Serializer):
    completionId = serializers.CharField(help_text="The completion's id.")
    achievement = UserAchievementResponse(help_text="The completed achievement.")
    points = serializers.DictField(
        child=MetricEventPointsResponse(),
        help_text="Points systems changed by the completion's achievement triggers, by key.",
    )
