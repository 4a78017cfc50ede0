"""OpenAPI documentation of leaderboards (documentation only).

Response shapes follow the Trophy wire models (reference §3.7) and are declared once, where they
are rendered: those other apps carry too (LeaderboardResponse, UserLeaderboardResponse, the event
response's MetricEventLeaderboardResponse, LeaderboardRanking) in apps.leaderboards.wire, those
only the leaderboard endpoints return in apps.leaderboards.serializers, beside the validating
serializers of the request bodies. What stays here is what introspection cannot know: the
parameters.
"""

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter

from apps.core.api.params import ATTRIBUTE_FILTER_SCHEMA

# Rankings pages reach as deep as boards do (LEADERBOARD_MAX_PARTICIPANTS, default 1,000).
MAX_OFFSET = settings.LEADERBOARD_MAX_PARTICIPANTS
MAX_LIMIT = 1000
MAX_NUM_EVENTS = 100

# --- parameters ---------------------------------------------------------------------------

LEADERBOARD_KEY = OpenApiParameter(
    "key", str, OpenApiParameter.PATH, description="The leaderboard's key."
)
INCLUDE_FINISHED = OpenApiParameter(
    "includeFinished",
    bool,
    OpenApiParameter.QUERY,
    description="true: also the leaderboards that have finished. Default false: active and "
    "scheduled leaderboards only.",
)
OFFSET = OpenApiParameter(
    "offset",
    {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "default": 0},
    OpenApiParameter.QUERY,
    description=f"Number of rankings to skip: 0 to {MAX_OFFSET} (default 0). With userId, "
    "counted from that user's position.",
)
LIMIT = OpenApiParameter(
    "limit",
    {"type": "integer", "minimum": 0, "maximum": MAX_LIMIT, "default": 10},
    OpenApiParameter.QUERY,
    description=f"Number of rankings to return: 0 to {MAX_LIMIT} (default 10).",
)
RUN = OpenApiParameter(
    "run",
    {"type": "string", "format": "date"},
    OpenApiParameter.QUERY,
    description="A run of a repeating leaderboard: its start date, or any date inside it "
    "(YYYY-MM-DD). Default: the current run (by today's UTC date; the last run of a finished "
    "leaderboard).",
)
RANKINGS_USER_ID = OpenApiParameter(
    "userId",
    str,
    OpenApiParameter.QUERY,
    description="Centre the page on this user: the rankings start at their position (plus "
    "offset). A user not on the leaderboard gets no rankings.",
)
USER_ATTRIBUTES = OpenApiParameter(
    "userAttributes",
    ATTRIBUTE_FILTER_SCHEMA,
    OpenApiParameter.QUERY,
    description=(
        "Breakdown leaderboards only, and then required: comma-separated key:value pairs "
        "(region:eu,plan:pro) giving a value for each breakdown attribute; selects the "
        "rankings of that group. A value may itself contain ':'."
    ),
)
NUM_EVENTS = OpenApiParameter(
    "numEvents",
    {"type": "integer", "minimum": 0, "maximum": MAX_NUM_EVENTS, "default": 10},
    OpenApiParameter.QUERY,
    description=f"Number of most recent daily history entries to return: 0 to {MAX_NUM_EVENTS} "
    "(default 10).",
)
