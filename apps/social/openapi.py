"""OpenAPI documentation of the neighbours and friends extension routes (documentation only):
the parameters introspection cannot know. The response shapes are declared where they are
rendered, in apps/social/serializers.py."""

from drf_spectacular.utils import OpenApiParameter

from apps.core.api.params import LIST_ITEM_SCHEMA, MAX_IDS

# The tags of the operations in the extension documents (gamify/urls.py describes them).
NEIGHBOURS_TAGS = ["neighbours"]
FRIENDS_TAGS = ["friends"]

LEADERBOARD_KEY = OpenApiParameter(
    "key", str, OpenApiParameter.PATH, description="The leaderboard's key."
)
LEAGUE_KEY = OpenApiParameter("key", str, OpenApiParameter.PATH, description="The league's key.")
RUN = OpenApiParameter(
    "run",
    {"type": "string", "format": "date"},
    OpenApiParameter.QUERY,
    description="A run of a repeating leaderboard: its start date, or any date inside it "
    "(YYYY-MM-DD). Default: the current run, as the leaderboard routes choose it.",
)
FRIEND_IDS = OpenApiParameter(
    "userIds",
    {"type": "array", "items": LIST_ITEM_SCHEMA, "minItems": 1, "maxItems": MAX_IDS},
    OpenApiParameter.QUERY,
    required=True,
    style="form",
    explode=True,
    description=f"The user ids to take off the list: 1 to {MAX_IDS}, as repeated keys "
    "(?userIds=a&userIds=b) or comma-separated (?userIds=a,b).",
)
