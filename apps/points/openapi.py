"""OpenAPI documentation of points systems, triggers, awards, boosts and levels (documentation
only).

Response shapes follow the Trophy wire models (reference §3.6) and are declared once, where they
are rendered: the shapes the event response and the achievement completion carry too
(PointsTrigger, PointsAward, PointsBoost, PointsLevel, MetricEventPointsResponse) in
apps.points.wire, those only the points endpoints return in apps.points.serializers. What stays
here is what introspection cannot know: parameters, and the names and the multiplier of the
request bodies (the validating serializers of apps.points.serializers).
"""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import OpenApiParameter

from apps.core.api.params import ATTRIBUTE_FILTER_SCHEMA
from apps.metrics.wire import UsersMetricEventSummaryResponseItem

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


# The same buckets as a metric's (summary_render); a component of its own, by the SDKs' name.
class UsersPointsEventSummaryResponseItem(UsersMetricEventSummaryResponseItem):
    pass


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
