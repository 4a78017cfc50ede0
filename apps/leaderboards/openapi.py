"""OpenAPI documentation of leaderboards (documentation only).

Response shapes follow the Trophy wire models (reference §3.7) and what apps.leaderboards
emits: services.board_render (the LeaderboardResponse fields, shared by every application
shape), the views' rankings and history items, services._apply (the event response's map
values) and LeaderboardCollection.render (the admin object). Fields those functions always write
are required (possibly null); fields written only for one rankBy are optional.
The shapes other apps carry (LeaderboardResponse, UserLeaderboardResponse and the event
response's MetricEventLeaderboardResponse) are declared in apps.leaderboards.wire. Request bodies
are the validating serializers of apps.leaderboards.serializers.
"""

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.core.api.params import ATTRIBUTE_FILTER_SCHEMA
from apps.leaderboards.choices import RankBy, RunUnit, Status
from apps.leaderboards.wire import LeaderboardResponse, UserLeaderboardResponse
from apps.users.wire import AttributeRef

# Enum value sets of the application API (named in SPECTACULAR_SETTINGS.ENUM_NAME_OVERRIDES).
# Labelled: POINTS_BOOST_STATUSES has the same values, and sharing its hash would name this
# enum PointsBoostStatusEnum.
LEADERBOARD_STATUSES = [
    ("active", "Active: the current run is counting"),
    ("scheduled", "Scheduled: starts later"),
    ("finished", "Finished: past its end date"),
]

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

# --- leaderboards (application API) -------------------------------------------------------


class LeaderboardsAllResponseItem(LeaderboardResponse):
    status = serializers.ChoiceField(choices=LEADERBOARD_STATUSES)


class LeaderboardRanking(serializers.Serializer):
    userId = serializers.CharField()
    userName = serializers.CharField(allow_null=True)
    rank = serializers.IntegerField(help_text="1-based.")
    value = serializers.IntegerField(help_text="The user's value, as an integer.")


class LeaderboardResponseWithRankings(LeaderboardResponse):
    status = serializers.ChoiceField(choices=LEADERBOARD_STATUSES)
    rankings = LeaderboardRanking(many=True, help_text="Best first.")


class LeaderboardEvent(serializers.Serializer):
    date = serializers.DateField(help_text="The day this snapshot closes.")
    timestamp = serializers.DateTimeField(help_text="Deprecated: date (its start, in UTC).")
    previousRank = serializers.IntegerField(
        allow_null=True, help_text="The rank of the previous snapshot; null: none or unranked."
    )
    rank = serializers.IntegerField(allow_null=True, help_text="null: not on the board.")
    previousValue = serializers.IntegerField(allow_null=True)
    value = serializers.IntegerField(allow_null=True)


class UserLeaderboardResponseWithHistory(UserLeaderboardResponse):
    history = LeaderboardEvent(many=True, help_text="Daily snapshots in this run, newest first.")


# --- admin API ----------------------------------------------------------------------------


class AdminLeaderboard(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=Status.choices)
    rankBy = serializers.ChoiceField(choices=RankBy.choices)
    metricId = serializers.UUIDField(allow_null=True, help_text="rankBy metric; null otherwise.")
    pointsSystemId = serializers.UUIDField(
        allow_null=True, help_text="rankBy points; null otherwise."
    )
    maxParticipants = serializers.IntegerField()
    start = serializers.DateField()
    end = serializers.DateField(allow_null=True)
    startTime = serializers.CharField(allow_null=True, help_text="HH:mm")
    endTime = serializers.CharField(allow_null=True, help_text="HH:mm")
    breakdownAttributes = serializers.ListField(
        child=serializers.UUIDField(), help_text="Ids of user attributes (not keys)."
    )
    runUnit = serializers.ChoiceField(choices=RunUnit.choices, allow_null=True)
    runInterval = serializers.IntegerField(allow_null=True)
    userAttributes = AttributeRef(many=True, help_text="Participation filter ([] for everyone).")
