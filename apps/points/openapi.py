"""OpenAPI documentation of points systems, triggers, awards, boosts and levels (documentation
only).

Response shapes follow the Trophy wire models (reference §3.6) and are declared once, where they
are rendered: the shapes the event response and the achievement completion carry too
(PointsTrigger, PointsAward, PointsBoost, PointsLevel, MetricEventPointsResponse) in
apps.points.wire, those only the points endpoints return in apps.points.serializers. What stays
here is what introspection cannot know: the parameters. The request bodies are the validating
serializers of apps.points.serializers, which name their components.
"""

from drf_spectacular.utils import OpenApiParameter

from apps.core.api.params import ATTRIBUTE_FILTER_SCHEMA

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
