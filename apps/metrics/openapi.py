"""OpenAPI documentation of metrics and metric reads (documentation only).

UserAchievementResponse lives here until achievements exist as an app: metric reads and event
responses both carry it (always empty today)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.metrics.choices import Aggregation, UnitType
from apps.users.wire import AttributeKeyValue

ACHIEVEMENT_TRIGGERS = ["metric", "streak", "api", "achievement", "anniversary"]

METRIC_KEY = OpenApiParameter("key", str, OpenApiParameter.PATH, description="The metric's key.")
AGGREGATION = OpenApiParameter(
    "aggregation",
    str,
    OpenApiParameter.QUERY,
    required=True,
    enum=Aggregation.values,
    description="Bucket size. Weeks start on Sunday; buckets follow the user's time zone.",
)
START_DATE = OpenApiParameter(
    "startDate",
    OpenApiTypes.DATE,
    OpenApiParameter.QUERY,
    required=True,
    description="First day (YYYY-MM-DD).",
)
END_DATE = OpenApiParameter(
    "endDate",
    OpenApiTypes.DATE,
    OpenApiParameter.QUERY,
    required=True,
    description="Last day (YYYY-MM-DD), not before startDate, at most 400 days after it.",
)


class UserAchievementResponse(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    trigger = serializers.ChoiceField(choices=ACHIEVEMENT_TRIGGERS)
    description = serializers.CharField(required=False, allow_null=True)
    badgeUrl = serializers.CharField(required=False, allow_null=True)
    key = serializers.CharField(required=False, help_text="api trigger.")
    streakLength = serializers.IntegerField(required=False, help_text="streak trigger.")
    anniversaryYears = serializers.IntegerField(required=False, help_text="anniversary trigger.")
    achievementIds = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="achievement trigger."
    )
    metricId = serializers.CharField(required=False, help_text="metric trigger.")
    metricValue = serializers.FloatField(required=False, help_text="metric trigger.")
    metricName = serializers.CharField(required=False, help_text="metric trigger.")
    userAttributes = AttributeKeyValue(many=True)
    eventAttribute = AttributeKeyValue(required=False, help_text="Deprecated: eventAttributes.")
    eventAttributes = AttributeKeyValue(many=True, required=False)
    achievedAt = serializers.DateTimeField(
        required=False, allow_null=True, help_text="null while not completed."
    )


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


class UsersMetricEventSummaryResponseItem(serializers.Serializer):
    date = serializers.DateField(help_text="First day of the bucket.")
    total = serializers.FloatField(help_text="The user's total at the end of the bucket.")
    change = serializers.FloatField(help_text="The change within the bucket.")


class CreatedMetric(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    unitType = serializers.ChoiceField(choices=UnitType.choices)
    units = serializers.CharField(help_text='"" when none; a currency code for currency.')
