"""OpenAPI documentation of metric events (documentation only).

EventResponse follows the Trophy wire model in full. The points shapes are documented by
apps.points.openapi (shared with the points endpoints). The leaderboards part is always empty
until that feature exists; its item shape is documented now so that generated clients match
Trophy's."""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.metrics.openapi import AttributeKeyValue, UserAchievementResponse
from apps.pipeline.serializers import MAX_IDEMPOTENCY_KEY
from apps.points.openapi import MetricEventPointsResponse
from apps.streaks.choices import Frequency

# Enum value sets of features not built yet (named in SPECTACULAR_SETTINGS.ENUM_NAME_OVERRIDES).
LEADERBOARD_RANK_BY = ["metric", "streak", "points"]
LEADERBOARD_RUN_UNITS = ["day", "month", "year"]

IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        f"1 to {MAX_IDEMPOTENCY_KEY} characters. Reusing a key for the same user and metric "
        "applies nothing and answers 202 with the current state and idempotentReplayed: true."
    ),
)


class MetricValueFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "apps.pipeline.serializers.MetricValueField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return {
            "type": "number",
            "description": "Added to the user's total; may be negative or decimal (at most "
            "±1e12, rounded to 6 decimal places).",
        }


class MetricEventStreakResponse(serializers.Serializer):
    length = serializers.IntegerField()
    frequency = serializers.ChoiceField(choices=Frequency.choices)
    started = serializers.DateField(allow_null=True)
    periodStart = serializers.DateField(allow_null=True)
    periodEnd = serializers.DateField(allow_null=True)
    expires = serializers.DateField(allow_null=True)
    extended = serializers.BooleanField(help_text="Whether this event extended the streak.")
    freezes = serializers.IntegerField(required=False, help_text="Only when freezes are on.")
    maxFreezes = serializers.IntegerField(required=False, help_text="Only when freezes are on.")
    freezeAutoEarnInterval = serializers.IntegerField(required=False)
    freezeAutoEarnAmount = serializers.IntegerField(required=False)


class MetricEventLeaderboardResponse(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    key = serializers.CharField()
    rankBy = serializers.ChoiceField(choices=LEADERBOARD_RANK_BY)
    breakdownAttribute = serializers.CharField(
        required=False, allow_null=True, help_text="Deprecated: breakdownAttributes."
    )
    breakdownAttributes = serializers.ListField(child=serializers.CharField())
    metricKey = serializers.CharField(required=False)
    metricName = serializers.CharField(required=False)
    pointsSystemKey = serializers.CharField(required=False)
    pointsSystemName = serializers.CharField(required=False)
    description = serializers.CharField(required=False, allow_null=True)
    start = serializers.DateField()
    end = serializers.DateField(allow_null=True, help_text="End of the current run.")
    startTime = serializers.CharField(required=False, allow_null=True, help_text="HH:mm")
    endTime = serializers.CharField(required=False, allow_null=True, help_text="HH:mm")
    maxParticipants = serializers.IntegerField(required=False, allow_null=True)
    runUnit = serializers.ChoiceField(
        choices=LEADERBOARD_RUN_UNITS, required=False, allow_null=True
    )
    runInterval = serializers.IntegerField(required=False, allow_null=True)
    userAttributes = AttributeKeyValue(many=True)
    rank = serializers.IntegerField(required=False, allow_null=True)
    previousRank = serializers.IntegerField(required=False, allow_null=True)
    threshold = serializers.IntegerField(help_text="Minimum value currently needed to enter.")
    breakdownAttributeValue = serializers.CharField(
        required=False, allow_null=True, help_text="Deprecated: breakdownAttributeValues."
    )
    breakdownAttributeValues = AttributeKeyValue(many=True, required=False)


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
