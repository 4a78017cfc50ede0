"""OpenAPI documentation of points systems, triggers, awards, boosts and levels (documentation
only).

Response shapes follow the Trophy wire models (reference §3.6) and what the render functions of
apps.points.ledger and apps.points.views emit: fields those functions always write are required
(possibly null); fields written only for one trigger type are optional. The application shapes
the event response and the achievement completion carry too (PointsTrigger, PointsAward,
PointsBoost, PointsLevel, MetricEventPointsResponse) are declared in apps.points.wire. Request
bodies are the validating serializers of apps.points.serializers, renamed here after the points
resource.
"""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.core.api.params import ATTRIBUTE_FILTER_SCHEMA
from apps.core.openapi import Badge
from apps.metrics.wire import UsersMetricEventSummaryResponseItem
from apps.points.choices import BoostStatus, Rounding, TimeUnit, TriggerStatus, TriggerType
from apps.points.wire import (
    PointsAward,
    PointsLevel,
    PointsResponseBase,
    PointsTrigger,
    badge_url_field,
    description_field,
    max_points_field,
)
from apps.users.wire import AttributeRef

# Labelled, not SystemStatus.choices: TenantStatus has the same (value, label) pairs, and
# sharing its hash would name this enum TenantStatusEnum.
ADMIN_POINTS_SYSTEM_STATUSES = [
    ("active", "Active"),
    ("archived", "Archived: deleted through the API; its ledger is kept"),
]

MAX_AWARDS = 100

# --- parameters ---------------------------------------------------------------------------

POINTS_KEY = OpenApiParameter(
    "key", str, OpenApiParameter.PATH, description="The points system's key."
)
INCLUDE_FINISHED = OpenApiParameter(
    "includeFinished",
    bool,
    OpenApiParameter.QUERY,
    description="true: also the boosts that have ended. Default false: active and scheduled "
    "boosts only.",
)
USER_ATTRIBUTES = OpenApiParameter(
    "userAttributes",
    ATTRIBUTE_FILTER_SCHEMA,
    OpenApiParameter.QUERY,
    description=(
        "Comma-separated key:value pairs of user attributes (plan:pro,region:eu): only the users "
        "with all these values are counted. Keys must be defined user attributes; a value may "
        "itself contain ':'."
    ),
)
AWARDS = OpenApiParameter(
    "awards",
    {"type": "integer", "minimum": 1, "maximum": MAX_AWARDS, "default": 10},
    OpenApiParameter.QUERY,
    description=f"Number of most recent awards to return: 1 to {MAX_AWARDS} (default 10).",
)

# --- points (application API) -------------------------------------------------------------


class GetUserPointsResponse(PointsResponseBase):
    """A user's total, level and most recent awards in one points system."""

    total = serializers.IntegerField(help_text="The user's total (0 before any award).")
    level = PointsLevel(
        allow_null=True, help_text="The user's current level; null when none is reached."
    )
    awards = PointsAward(many=True, help_text="The most recent awards, newest first.")


class PointsSystemResponse(serializers.Serializer):
    """A points system with its active triggers (no key: reference §3.6)."""

    id = serializers.CharField()
    name = serializers.CharField()
    description = description_field()
    badgeUrl = badge_url_field()
    maxPoints = max_points_field()
    triggers = PointsTrigger(many=True, help_text="The active triggers.")


class PointsLevelSummaryResponseItem(serializers.Serializer):
    level = PointsLevel()
    users = serializers.IntegerField(help_text="Number of users at this level.")


class PointsRange(serializers.Serializer):
    """A range of totals (bounds inclusive) and how many users have a total in it. The first
    range is 0 to 0 and also counts users below 0."""

    to = serializers.IntegerField(help_text="Highest total of the range.")
    users = serializers.IntegerField()

    def get_fields(self) -> dict[str, Any]:
        # "from" is a Python keyword: it cannot be declared as a class attribute.
        fields: dict[str, Any] = super().get_fields()
        return {"from": serializers.IntegerField(help_text="Lowest total of the range."), **fields}


# The same buckets as a metric's (summary_render); a component of its own, by the SDKs' name.
class UsersPointsEventSummaryResponseItem(UsersMetricEventSummaryResponseItem):
    pass


# --- points (admin API) -------------------------------------------------------------------


class AdminPointsLevel(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    points = serializers.IntegerField(help_text="Total from which a user is at this level.")
    description = serializers.CharField(allow_blank=True, help_text='"" when none.')
    badge = Badge(allow_null=True)


class AdminPointsBoost(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=BoostStatus.choices)
    start = serializers.DateField(help_text="First day (inclusive).")
    end = serializers.DateField(allow_null=True, help_text="Last day (inclusive); null: open.")
    multiplier = serializers.FloatField()
    rounding = serializers.ChoiceField(choices=Rounding.choices)
    userId = serializers.CharField(
        allow_null=True, help_text="The one user it applies to; null: a global boost."
    )
    userAttributes = AttributeRef(
        many=True, help_text="A global boost applies only to users with all these values."
    )


class AdminPointsTrigger(serializers.Serializer):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=TriggerType.choices)
    points = serializers.IntegerField(help_text="Points each time it fires; negative deducts.")
    status = serializers.ChoiceField(choices=TriggerStatus.choices)
    userAttributes = AttributeRef(
        many=True, help_text="Only users with all these attribute values earn it."
    )
    blockIfOutOfPoints = serializers.BooleanField(
        help_text="A deduction that would take a total below 0 refuses the whole event."
    )
    metricId = serializers.UUIDField(required=False, allow_null=True, help_text="metric trigger.")
    metricThreshold = serializers.IntegerField(required=False, help_text="metric trigger.")
    eventAttributes = AttributeRef(
        many=True, required=False, help_text="metric trigger: events counted."
    )
    achievementId = serializers.UUIDField(
        required=False, allow_null=True, help_text="achievement trigger."
    )
    streakLength = serializers.IntegerField(required=False, help_text="streak trigger.")
    timeUnit = serializers.ChoiceField(
        choices=TimeUnit.choices, required=False, help_text="time trigger."
    )
    timeInterval = serializers.IntegerField(required=False, help_text="time trigger.")


def _nested(serializer: type[serializers.Serializer], noun: str) -> Any:
    return serializer(
        many=True,
        required=False,
        help_text=f"The {noun} created with the system: only in a create response, and only "
        "when the request supplied them.",
    )


class AdminPointsSystem(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    description = serializers.CharField(allow_blank=True, help_text='"" when none.')
    status = serializers.ChoiceField(choices=ADMIN_POINTS_SYSTEM_STATUSES)
    badge = Badge(allow_null=True)
    maxPoints = max_points_field()
    levels = _nested(AdminPointsLevel, "levels")
    boosts = _nested(AdminPointsBoost, "boosts")
    triggers = _nested(AdminPointsTrigger, "triggers")


# --- request bodies (admin API) -----------------------------------------------------------


class _RenamedRequest(OpenApiSerializerExtension):
    """Names a request serializer's component after the points resource (PointsLevelCreate
    rather than LevelCreate; the Request suffix is added)."""

    component = ""

    def get_name(self, auto_schema: Any, direction: Any) -> str:
        return self.component


class _BoostRequest(_RenamedRequest):
    """Also documents `multiplier` as the JSON number it is sent as (a DecimalField would be
    documented as a string)."""

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer(
            self.target, direction, bypass_extensions=True
        )
        schema["properties"]["multiplier"] = {
            "type": "number",
            "minimum": 0,
            "exclusiveMinimum": True,
            "maximum": 100,
            "exclusiveMaximum": True,
            "description": "Greater than 0, less than 100 and not 1; at most 4 decimal places.",
        }
        return schema


class PointsSystemCreateSerializerExtension(_RenamedRequest):
    target_class = "apps.points.serializers.SystemCreateSerializer"
    component = "PointsSystemCreate"


class PointsSystemUpdateSerializerExtension(_RenamedRequest):
    target_class = "apps.points.serializers.SystemUpdateSerializer"
    component = "PointsSystemUpdate"


class PointsLevelCreateSerializerExtension(_RenamedRequest):
    target_class = "apps.points.serializers.LevelCreateSerializer"
    component = "PointsLevelCreate"


class PointsLevelUpdateSerializerExtension(_RenamedRequest):
    target_class = "apps.points.serializers.LevelUpdateSerializer"
    component = "PointsLevelUpdate"


class PointsTriggerCreateSerializerExtension(_RenamedRequest):
    target_class = "apps.points.serializers.TriggerCreateSerializer"
    component = "PointsTriggerCreate"


class PointsTriggerUpdateSerializerExtension(_RenamedRequest):
    target_class = "apps.points.serializers.TriggerUpdateSerializer"
    component = "PointsTriggerUpdate"


class PointsBoostCreateSerializerExtension(_BoostRequest):
    target_class = "apps.points.serializers.BoostCreateSerializer"
    component = "PointsBoostCreate"


class PointsBoostUpdateSerializerExtension(_BoostRequest):
    target_class = "apps.points.serializers.BoostUpdateSerializer"
    component = "PointsBoostUpdate"
