"""The stream token route (DRF, WSGI or ASGI alike) and the documentation of the stream
routes, whose views (apps/streams/views.py) are async functions outside DRF."""

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.views import AdminApi
from apps.core.bulk import validated
from apps.core.openapi import ADMIN_WRITE_ERRORS, errors
from apps.core.stream_tokens import stream_token_mint
from apps.leaderboards.selectors import board_visible
from apps.streams import openapi, serializers
from apps.users.wire import USER_ID


class StreamTokenApi(AdminApi):
    input_serializer = serializers.StreamTokenRequest

    @extend_schema(
        operation_id="ext_admin_stream_tokens_create",
        summary="Mint a stream token",
        description="A short-lived signed token that opens one stream: a user's, a "
        "leaderboard's or the tenant's. Mint it on your server and hand it to the browser, "
        "whose EventSource cannot send the X-API-KEY header; an API key never goes in a URL.",
        tags=openapi.TAGS,
        request=serializers.StreamTokenRequest,
        responses={201: serializers.StreamToken, **ADMIN_WRITE_ERRORS},
    )
    def post(self, request: Request) -> Response:
        tenant = self.scope(request).tenant
        data = validated(serializers.StreamTokenRequest, request.data)
        stream = data["stream"]
        if stream == "leaderboard":
            board_visible(tenant, data["leaderboardKey"])  # 404 for a board nobody can stream
            kind, name = "board", data["leaderboardKey"]
            path = f"/ext/v1/leaderboards/{quote(name, safe='')}/stream"
        elif stream == "user":
            kind, name = "user", data["userId"]
            path = f"/ext/v1/users/{quote(name, safe='')}/stream"
        else:
            kind, name, path = "tenant", None, "/admin/ext/v1/stream"
        token, expires = stream_token_mint(tenant.pk, kind, name, data["expiresIn"], timezone.now())
        body = serializers.stream_token_render(token, expires, f"{path}?token={token}")
        return Response(body, status=201)


# --- documentation of the async stream views -------------------------------------------------

STREAM_ERRORS = errors(
    400,
    401,
    403,
    404,
    (503, "Live streams are off (no STREAMS_REDIS_URL) or Redis does not answer."),
)


class UserStreamDocs(APIView):
    @extend_schema(
        operation_id="ext_users_stream",
        summary="Stream a user's changes",
        description="Server-Sent Events: every change of the user as it happens (achievement "
        "completed, streak started, extended, lost, freezes, points and level changed, rank "
        "changed on a board, league joined, rank changed, finished), each with the payload of "
        "the webhook of the same name, unthrottled. An application key may open only its own "
        "user's stream.",
        tags=openapi.TAGS,
        parameters=[USER_ID, openapi.TOKEN, openapi.LAST_EVENT_ID],
        responses={200: openapi.EVENT_STREAM, **STREAM_ERRORS},
    )
    def get(self, request: Request, user_id: str) -> Response:
        raise NotImplementedError  # documentation only: views.user_stream serves it


class BoardStreamDocs(APIView):
    @extend_schema(
        operation_id="ext_leaderboards_stream",
        summary="Stream a leaderboard's top",
        description="Server-Sent Events: leaderboard.top messages carrying the board with its "
        "top N rankings, first at once, then whenever they change, at most once a second. On a "
        "breakdown board, userAttributes selects the group.",
        tags=openapi.TAGS,
        parameters=[openapi.BOARD_KEY, openapi.TOP, openapi.USER_ATTRIBUTES, openapi.TOKEN],
        responses={200: openapi.EVENT_STREAM, **STREAM_ERRORS},
    )
    def get(self, request: Request, key: str) -> Response:
        raise NotImplementedError  # documentation only: views.board_stream serves it


class TenantStreamDocs(APIView):
    @extend_schema(
        operation_id="ext_admin_stream",
        summary="Stream the tenant's events",
        description="Server-Sent Events for internal tools (admin keys or a tenant stream "
        "token): every user's events of the user streams, with the emails.*_due events.",
        tags=openapi.TAGS,
        parameters=[openapi.TOKEN, openapi.LAST_EVENT_ID],
        responses={200: openapi.EVENT_STREAM, **STREAM_ERRORS},
    )
    def get(self, request: Request) -> Response:
        raise NotImplementedError  # documentation only: views.tenant_stream serves it


def documented(view: Callable[..., Any], docs: type[APIView]) -> Callable[..., Any]:
    """The async view `view`, routed as it is, documented by the DRF view `docs` (which
    drf-spectacular reads from the route's callback, as it reads `as_view()`'s)."""
    view.cls = docs  # type: ignore[attr-defined]
    view.initkwargs = {}  # type: ignore[attr-defined]
    return view
