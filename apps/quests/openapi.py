"""OpenAPI documentation of the quests extension routes (documentation only): the parameters
introspection cannot know. The response shapes are declared where they are rendered, in
apps/quests/serializers.py."""

from drf_spectacular.utils import OpenApiParameter

MAX_HISTORY = 100
# The tag of every quests operation in the extension documents (gamify/urls.py describes it).
TAGS = ["quests"]

HISTORY_LIMIT = OpenApiParameter(
    "limit",
    {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY, "default": 20},
    OpenApiParameter.QUERY,
    description=f"Number of past quest periods to return: 1 to {MAX_HISTORY} (default 20).",
)
