"""The wire shapes of the stream token route (the streams themselves are text/event-stream,
documented in apps/streams/openapi.py)."""

import datetime as dt
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer
from apps.core.api.shapes import Shape, renders
from apps.core.stream_tokens import TOKEN_DEFAULT_SECONDS, TOKEN_MAX_SECONDS

STREAMS = [
    ("user", "A user's stream"),
    ("leaderboard", "A leaderboard's stream"),
    ("tenant", "The tenant's stream"),
]


class StreamTokenRequest(StrictSerializer):
    stream = serializers.ChoiceField(
        choices=STREAMS, help_text="Which stream the token opens: user, leaderboard or tenant."
    )
    userId = serializers.CharField(
        required=False, max_length=255, help_text="The user whose stream it opens (stream user)."
    )
    leaderboardKey = serializers.CharField(
        required=False,
        max_length=255,
        help_text="The board whose stream it opens (stream leaderboard).",
    )
    expiresIn = serializers.IntegerField(
        required=False,
        min_value=60,
        max_value=TOKEN_MAX_SECONDS,
        default=TOKEN_DEFAULT_SECONDS,
        help_text="Seconds until the token expires: 60 to 86400 (default 3600). A stream "
        "opened with it stays open after that; reconnecting needs a new token.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        stream = attrs["stream"]
        needs = {"user": "userId", "leaderboard": "leaderboardKey"}.get(stream)
        for name in ("userId", "leaderboardKey"):
            if name == needs and not attrs.get(name):
                raise serializers.ValidationError({name: f"Required for a {stream} stream."})
            if name != needs and name in attrs:
                raise serializers.ValidationError({name: f"Not allowed for a {stream} stream."})
        return attrs


class StreamToken(Shape):
    token = serializers.CharField(help_text="Put it in the stream's URL: ?token=...")
    expires = serializers.DateTimeField(help_text="When it stops opening streams.")
    url = serializers.CharField(
        help_text="The stream's path with the token, to hand to EventSource."
    )


@renders(StreamToken)
def stream_token_render(token: str, expires: dt.datetime, url: str) -> dict[str, Any]:
    return {"token": token, "expires": expires, "url": url}
