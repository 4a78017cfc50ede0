"""OpenAPI documentation of metric events (documentation only).

EventResponse follows the Trophy wire model in full. The achievements, points and leaderboards
parts are always empty until those features exist; their item shapes are documented now so that
generated clients match Trophy's."""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.metrics.openapi import AttributeKeyValue, UserAchievementResponse
from apps.pipeline.serializers import MAX_IDEMPOTENCY_KEY
from apps.streaks.choices import Frequency

# Enum value sets of features not built yet (named in SPECTACULAR_SETTINGS.ENUM_NAME_OVERRIDES).
POINTS_TRIGGER_TYPES = ["metric", "achievement", "streak", "time", "user_creation"]
POINTS_TRIGGER_STATUSES = ["active", "inactive", "archived"]
POINTS_TRIGGER_TIME_UNITS = ["hour", "day"]
POINTS_BOOST_STATUSES = ["active", "scheduled", "finished"]
POINTS_BOOST_ROUNDINGS = ["down", "up", "nearest"]
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


class PointsLevel(serializers.Serializer):
    id = serializers.CharField()
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    badgeUrl = serializers.CharField(required=False, allow_null=True)
    points = serializers.IntegerField(help_text="Threshold.")


class PointsTrigger(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.ChoiceField(choices=POINTS_TRIGGER_TYPES)
    points = serializers.IntegerField()
    status = serializers.ChoiceField(choices=POINTS_TRIGGER_STATUSES)
    achievementId = serializers.CharField(required=False)
    metricId = serializers.CharField(required=False)
    metricName = serializers.CharField(required=False)
    metricThreshold = serializers.IntegerField(required=False)
    streakLengthThreshold = serializers.IntegerField(required=False)
    achievementName = serializers.CharField(required=False)
    timeUnit = serializers.ChoiceField(choices=POINTS_TRIGGER_TIME_UNITS, required=False)
    timeInterval = serializers.IntegerField(required=False)
    userAttributes = AttributeKeyValue(many=True)
    eventAttribute = AttributeKeyValue(required=False, help_text="Deprecated: eventAttributes.")
    eventAttributes = AttributeKeyValue(many=True, required=False)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class PointsBoost(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=POINTS_BOOST_STATUSES)
    start = serializers.DateField()
    end = serializers.DateField(required=False, allow_null=True)
    multiplier = serializers.FloatField()
    rounding = serializers.ChoiceField(choices=POINTS_BOOST_ROUNDINGS)


class PointsAward(serializers.Serializer):
    id = serializers.CharField(required=False)
    awarded = serializers.IntegerField(required=False)
    date = serializers.DateTimeField(required=False)
    total = serializers.IntegerField(required=False, help_text="Balance after the award.")
    trigger = PointsTrigger(required=False)
    boosts = PointsBoost(many=True, required=False)


class MetricEventPointsResponse(serializers.Serializer):
    id = serializers.CharField()
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(required=False, allow_null=True)
    badgeUrl = serializers.CharField(required=False, allow_null=True)
    maxPoints = serializers.FloatField(required=False, allow_null=True)
    total = serializers.IntegerField()
    level = PointsLevel(required=False, help_text="Present only when the level changed.")
    added = serializers.IntegerField()
    awards = PointsAward(many=True)


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
