"""OpenAPI documentation of streaks, streak settings and preferences (documentation only).

Response shapes follow the Trophy wire models (reference §3.2, §3.4) and are declared once,
where they are rendered: the streak object and the streak preferences, which other apps embed,
in apps.streaks.wire, the settings, several users' streaks and an admin pause in
apps.streaks.serializers, as are the answers of the streak operations. What stays here is what
introspection cannot know: the parameters, and the request bodies of the streak operations,
which take {"<key>": [items]} instead of a bare array (reference §2.2), wrapped around the
validating item serializers.
"""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.core.api.params import LIST_ITEM_SCHEMA
from apps.core.openapi import ids_parameter
from apps.streaks.serializers import (
    FreezeItemSerializer,
    PauseItemSerializer,
    UserRefSerializer,
)

# The limits apps.streaks.views enforces (restated: the views import this module).
MAX_HISTORY_PERIODS = 365
MAX_ITEMS = 100

# --- parameters ---------------------------------------------------------------------------

HISTORY_PERIODS = OpenApiParameter(
    "historyPeriods",
    {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY_PERIODS, "default": 7},
    OpenApiParameter.QUERY,
    description=(
        f"Number of periods of history, ending with the current one: 1 to "
        f"{MAX_HISTORY_PERIODS} (default 7)."
    ),
)
USER_IDS = OpenApiParameter(
    "userIds",
    {"type": "array", "items": LIST_ITEM_SCHEMA, "minItems": 1, "maxItems": MAX_ITEMS},
    OpenApiParameter.QUERY,
    required=True,
    style="form",
    explode=True,
    description=(
        f"1 to {MAX_ITEMS} user ids, as repeated keys (?userIds=a&userIds=b) or comma-separated "
        "(?userIds=a,b). Unknown ids are left out of the response."
    ),
)
PAUSE_IDS = ids_parameter(
    f"1 to {MAX_ITEMS} streak pause ids, as repeated keys (?ids=a&ids=b) or comma-separated "
    "(?ids=a,b). An unknown or malformed id is reported in `issues`."
)

# --- streak operations (admin API) --------------------------------------------------------


def _items(child: serializers.Serializer, help_text: str) -> serializers.ListField:
    return serializers.ListField(
        child=child, min_length=1, max_length=MAX_ITEMS, help_text=help_text
    )


class CreateStreakFreezes(serializers.Serializer):
    freezes = _items(FreezeItemSerializer(), "Each item grants one freeze to that user.")


class CreateStreakPauses(serializers.Serializer):
    pauses = _items(PauseItemSerializer(), "Each item pauses that user's streak from start to end.")


class RestoreStreaks(serializers.Serializer):
    users = _items(UserRefSerializer(), "The users whose streaks to restore.")


class ResetStreaks(serializers.Serializer):
    users = _items(UserRefSerializer(), "The users whose streaks to reset to 0.")
