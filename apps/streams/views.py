"""The stream routes (Server-Sent Events), served by an ASGI process (README, "Live streams"):

- GET /ext/v1/users/{userId}/stream: what happens to one user;
- GET /ext/v1/leaderboards/{key}/stream?top=N: a board's top N whenever it changes, at most
  once a second;
- GET /admin/ext/v1/stream: everything that happens in the tenant (admin keys).

Each accepts the X-API-KEY header (and Tenant-ID) as the other routes do, or `?token=` with a
stream token minted by POST /admin/ext/v1/streams/tokens, since a browser's EventSource cannot
send headers. An API key is never accepted in the URL."""

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils import timezone
from rest_framework.exceptions import APIException

from apps.accounts.auth import ApiKeyAuthentication
from apps.accounts.choices import TenantStatus
from apps.accounts.models import Tenant
from apps.core.api.fields import user_id_error
from apps.core.api.params import parse_attribute_filter
from apps.core.api.renderers import json_dumps
from apps.core.errors import ApplicationError, BadRequestError
from apps.core.stream_tokens import stream_token_read
from apps.leaderboards import selectors as boards
from apps.streams import domain, services
from apps.streams.hub import CLOSED, Hub, hub_for_loop
from apps.webhooks import payloads

# Clients wait this long before reconnecting after the stream closes.
RETRY_MS = 2000
# A board's stream sends its top N at most this often.
BOARD_INTERVAL = 1.0


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# Where the views' database work runs. A request's own thread (Django's default for sync code
# under ASGI) would pin a database connection for as long as its stream stays open, since the
# request finishes only when the stream ends: thousands of streams, thousands of connections.
# The shared executor's few threads keep a connection each instead. The test suite runs it in
# its own thread, where its test transaction lives (tests/streams/).
IN_REQUEST_THREAD = False


async def _db(function: Callable[..., Any], *args: Any) -> Any:
    """Run `function(*args)` (which reads the database) off the event loop."""
    if IN_REQUEST_THREAD:
        return await sync_to_async(function)(*args)
    return await sync_to_async(_with_fresh_connection, thread_sensitive=False)(function, *args)


def _with_fresh_connection(function: Callable[..., Any], *args: Any) -> Any:
    # These threads never see request_started/finished: drop a connection that is too old
    # or broken before using it, as Django does between requests.
    close_old_connections()
    return function(*args)


def _error(status: int, message: str) -> HttpResponse:
    return JsonResponse({"error": message}, status=status)


def _authorize(
    request: HttpRequest, topic_of: Callable[[Tenant], domain.Topic], admin_only: bool
) -> domain.Topic:
    """The topic the request may read, or _Refused: a token's claims, else the API key's
    scope (an application key only for its own user's stream)."""
    if "apiKey" in request.GET or "api_key" in request.GET:
        raise _Refused(400, "API keys are never accepted in a URL; use a stream token (token=)")
    token = request.GET.get("token")
    if token is not None:
        claims = stream_token_read(token, timezone.now())
        if claims is None:
            raise _Refused(401, "Invalid or expired stream token")
        tenant = Tenant.objects.filter(pk=claims.tenant_pk, status=TenantStatus.ACTIVE).first()
        if tenant is None:
            raise _Refused(401, "Invalid or expired stream token")
        topic = topic_of(tenant)
        if not claims.allows(topic.tenant_pk, topic.kind, topic.user or topic.board):
            raise _Refused(403, "This stream token does not open this stream")
        return topic
    try:
        found = ApiKeyAuthentication().authenticate(request)  # type: ignore[arg-type]
    except APIException as exc:
        raise _Refused(exc.status_code, str(exc.detail)) from exc
    except ApplicationError as exc:
        raise _Refused(exc.status_code, str(exc)) from exc
    if found is None:
        raise _Refused(401, "Authentication credentials were not provided (X-API-KEY or token)")
    scope = found[1]
    if admin_only and not scope.is_admin:
        raise _Refused(403, "This stream needs an admin API key")
    topic = topic_of(scope.tenant)
    if (
        scope.bound_user_id is not None
        and topic.user != scope.bound_user_id
        and topic.board is None
    ):
        raise _Refused(403, "This application API key may only access its own user")
    return topic


def _last_event_id(request: HttpRequest) -> str | None:
    raw = request.headers.get("Last-Event-ID") or request.GET.get("lastEventId")
    if not raw:
        return None
    if not domain.valid_id(raw):
        raise _Refused(400, "Last-Event-ID is not an id this stream sent")
    return raw


def _hub() -> Hub:
    return hub_for_loop(
        settings.STREAMS_REDIS_URL,
        int(settings.STREAMS_RETENTION_SECONDS),
        float(settings.STREAMS_HEARTBEAT_SECONDS),
    )


def _response(events: AsyncIterator[bytes]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(events, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each message on at once
    return response


async def _open(
    request: HttpRequest, topic_of: Callable[[Tenant], domain.Topic], admin_only: bool = False
) -> domain.Topic | HttpResponseBase:
    if request.method != "GET":
        return _error(405, f'Method "{request.method}" not allowed.')
    if not hasattr(request, "scope"):
        # Under WSGI (gunicorn) Django would read the endless stream to its end before sending
        # a byte, holding a worker thread forever.
        return _error(503, "Live streams are served by the ASGI server (uvicorn gamify.asgi)")
    if not services.enabled():
        return _error(503, "Live streams need Redis: set STREAMS_REDIS_URL (or REDIS_URL)")
    try:
        return await _db(_authorize, request, topic_of, admin_only)
    except _Refused as exc:
        return _error(exc.status, exc.message)
    except ApplicationError as exc:
        return _error(exc.status_code, str(exc))


async def user_stream(request: HttpRequest, user_id: str) -> HttpResponseBase:
    if (problem := user_id_error(user_id)) is not None:
        return _error(400, problem)
    topic = await _open(request, lambda tenant: domain.Topic(tenant.pk, user=user_id))
    if isinstance(topic, HttpResponseBase):
        return topic
    return await _message_stream(request, topic)


async def tenant_stream(request: HttpRequest) -> HttpResponseBase:
    topic = await _open(request, lambda tenant: domain.Topic(tenant.pk), admin_only=True)
    if isinstance(topic, HttpResponseBase):
        return topic
    return await _message_stream(request, topic)


async def _message_stream(request: HttpRequest, topic: domain.Topic) -> HttpResponseBase:
    try:
        since = _last_event_id(request)
    except _Refused as exc:
        return _error(exc.status, exc.message)
    hub, key = _hub(), topic.key(services.prefix())
    queue = await _listen(hub, topic)
    if queue is None:
        return _error(503, UNAVAILABLE)
    return _response(_messages(hub, key, queue, since))


UNAVAILABLE = "Live streams are unavailable: Redis does not answer"


async def _listen(hub: Hub, topic: domain.Topic) -> asyncio.Queue[Any] | None:
    """The topic's live messages from now on (None: Redis does not answer)."""
    try:
        return await hub.listen(topic.key(services.prefix()), topic.watch_key(services.prefix()))
    except (hub.error, OSError):
        return None


async def _messages(
    hub: Hub, key: str, queue: asyncio.Queue[Any], since: str | None
) -> AsyncIterator[bytes]:
    try:
        yield domain.retry(RETRY_MS)
        last = since
        if since is not None:
            missed, gap = await _missed(hub, key, since)
            if gap:
                yield domain.frame(None, domain.RESET, {"lastEventId": since})
            for message_id, fields in missed:
                last = message_id
                yield domain.frame(message_id, fields["t"], fields["d"])
        while True:
            try:
                raw = await asyncio.wait_for(queue.get(), timeout=hub.heartbeat)
            except TimeoutError:
                yield domain.heartbeat()
                continue
            if raw is CLOSED:
                return  # the client reconnects with Last-Event-ID
            message_id, _, rest = raw.partition(" ")
            type, _, data = rest.partition(" ")
            if domain.newer(message_id, last):
                last = message_id
                yield domain.frame(message_id, type, data)
    finally:
        await hub.leave(key, queue)


async def _missed(hub: Hub, key: str, since: str) -> tuple[list[Any], bool]:
    """The messages after `since` still held, and whether some after it are gone (trimmed,
    or the stream expired): the client should read the state again."""
    missed = await hub.client.xrange(key, min=f"({since}", max="+")
    oldest_kept = int(time.time() * 1000) - int(settings.STREAMS_RETENTION_SECONDS) * 1000
    gap = int(since.partition("-")[0]) < oldest_kept
    if not gap:
        with contextlib.suppress(hub.error):
            info = await hub.client.xinfo_stream(key)
            deleted = info.get("max-deleted-entry-id") or "0-0"
            gap = domain.newer(deleted, since)
    return list(missed or []), gap


async def board_stream(request: HttpRequest, key: str) -> HttpResponseBase:
    top = request.GET.get("top", str(domain.DEFAULT_TOP))
    if not top.isdigit() or not 1 <= int(top) <= domain.MAX_TOP:
        return _error(400, f"top must be an integer from 1 to {domain.MAX_TOP}")
    topic = await _open(request, lambda tenant: domain.Topic(tenant.pk, board=key))
    if isinstance(topic, HttpResponseBase):
        return topic
    try:
        reader = await _db(_board_reader, topic, key, request.GET.get("userAttributes"), int(top))
    except ApplicationError as exc:
        return _error(exc.status_code, str(exc))
    hub, channel = _hub(), topic.key(services.prefix())
    queue = await _listen(hub, topic)
    if queue is None:
        return _error(503, UNAVAILABLE)
    return _response(_board_messages(hub, channel, queue, reader))


def _board_reader(
    topic: domain.Topic, key: str, attributes: str | None, top: int
) -> Callable[[], dict[str, Any]]:
    """Checks the board and the group asked for now (404, 400), and returns the read of its
    top N (the webhooks' LeaderboardResponseWithRankings, with N rankings)."""
    tenant = Tenant.objects.get(pk=topic.tenant_pk)
    board = boards.board_visible(tenant, key)
    if board.breakdown_keys:
        group = boards.breakdown_group(board, parse_attribute_filter(attributes))
    elif attributes:
        raise BadRequestError("userAttributes is only valid on breakdown leaderboards")
    else:
        group = ""

    def read() -> dict[str, Any]:
        found = boards.board_definitions(tenant).get(key) or board
        return payloads.board_with_rankings(
            found, found.status, timezone.now(), top=top, group=group
        )

    return read


async def _board_messages(
    hub: Hub, channel: str, queue: asyncio.Queue[Any], read: Callable[[], dict[str, Any]]
) -> AsyncIterator[bytes]:
    """The top N now, then again after each change, at most once a second, when it differs."""
    try:
        yield domain.retry(RETRY_MS)
        sent: str | None = None
        sequence = 0
        while True:
            body = json_dumps(await _db(read)).decode()
            if body != sent:
                sent, sequence = body, sequence + 1
                yield domain.frame(f"{int(time.time() * 1000)}-{sequence}", domain.BOARD_TOP, body)
            read_at = time.monotonic()
            while True:  # until the board changes
                try:
                    raw = await asyncio.wait_for(queue.get(), timeout=hub.heartbeat)
                except TimeoutError:
                    yield domain.heartbeat()
                    continue
                if raw is CLOSED:
                    return
                break
            wait = BOARD_INTERVAL - (time.monotonic() - read_at)
            if wait > 0:
                await asyncio.sleep(wait)
            while not queue.empty():  # changes meanwhile: one read covers them
                if queue.get_nowait() is CLOSED:
                    return
    finally:
        await hub.leave(channel, queue)
