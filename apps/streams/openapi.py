"""OpenAPI documentation of the stream routes (documentation only)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse

from apps.streams.domain import DEFAULT_TOP, MAX_TOP

TAGS = ["streams"]

TOKEN = OpenApiParameter(
    "token",
    str,
    OpenApiParameter.QUERY,
    description="A stream token (POST /admin/ext/v1/streams/tokens), for clients that cannot "
    "send the X-API-KEY header (a browser's EventSource).",
)
TOP = OpenApiParameter(
    "top",
    {"type": "integer", "minimum": 1, "maximum": MAX_TOP, "default": DEFAULT_TOP},
    OpenApiParameter.QUERY,
    description=f"How many of the top rankings each message carries: 1 to {MAX_TOP}.",
)
LAST_EVENT_ID = OpenApiParameter(
    "Last-Event-ID",
    str,
    OpenApiParameter.HEADER,
    description="The id of the last message the client received: the stream starts with what "
    "came after it, within the retention window (a stream.reset message when some is gone).",
)
EVENT_STREAM = OpenApiResponse(
    OpenApiTypes.STR,
    description="text/event-stream: messages `id`, `event` (a webhook event type, or "
    "leaderboard.top) and `data` (JSON, the webhook payload of that type); a comment line "
    "every 15 s as a heartbeat.",
)

BOARD_KEY = OpenApiParameter(
    "key", str, OpenApiParameter.PATH, description="The leaderboard's key."
)
USER_ATTRIBUTES = OpenApiParameter(
    "userAttributes",
    str,
    OpenApiParameter.QUERY,
    description="On a breakdown leaderboard, the group: key:value pairs, comma-separated.",
)
