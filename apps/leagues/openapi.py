"""OpenAPI documentation of the leagues extension routes (documentation only): the parameters
introspection cannot know. The response shapes are declared where they are rendered, in
apps/leagues/serializers.py."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

MAX_HISTORY = 100
# The tag of every leagues operation in the extension documents (gamify/urls.py describes it).
TAGS = ["leagues"]

LEAGUE_KEY = OpenApiParameter("key", str, OpenApiParameter.PATH, description="The league's key.")
COHORT_ID = OpenApiParameter(
    "cohort_id",
    OpenApiTypes.UUID,
    OpenApiParameter.PATH,
    description="The cohort's id (a UUID; anything else is 404).",
)
HISTORY_LIMIT = OpenApiParameter(
    "limit",
    {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY, "default": 10},
    OpenApiParameter.QUERY,
    description=f"Number of past weeks to return: 1 to {MAX_HISTORY} (default 10).",
)
