"""Writes of the live streams: an event's messages, published after its transaction commits,
and the stream tokens that let a browser open a stream (README, "Live streams").

A stream is a Redis stream (XADD, trimmed to the retention window) beside a pub/sub channel of
the same name: the channel carries each message live to the processes serving it, the stream
keeps it for a client that reconnects with Last-Event-ID. Only watched streams are written: a
client's connection keeps a watch key alive, and for the retention window after it left. So an
event costs one Redis call (apps/streams/lua.py), or two when a watched user's event carries a
message that reads the database to build (a league's cohort, a due email's subject)."""

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.accounts.models import Tenant
from apps.core.api.renderers import json_dumps
from apps.core.facts import Fact
from apps.core.stream_tokens import streams_enabled
from apps.streams import lua
from apps.streams.domain import Topic
from apps.streams.messages import Message, boards_moved, fact_messages
from apps.users.models import EndUser

logger = logging.getLogger("gamify.streams")


def enabled() -> bool:
    return streams_enabled()


def prefix() -> str:
    return str(settings.STREAMS_PREFIX)


def retention_ms() -> int:
    return int(settings.STREAMS_RETENTION_SECONDS) * 1000


class _Publisher:
    """The process's connection for publishing (the serving side is async: apps/streams/hub.py)."""

    def __init__(self, url: str) -> None:
        import redis

        self.error = redis.RedisError
        self.client = redis.Redis.from_url(
            url, socket_timeout=0.5, socket_connect_timeout=0.5, decode_responses=True
        )
        self.publish = self.client.register_script(lua.PUBLISH)


_lock = threading.Lock()
_publishers: dict[str, _Publisher] = {}
# After an error, publishing rests this long: every event would otherwise wait the timeout.
REST_SECONDS = 5.0
_failed_at: float | None = None


def _publisher() -> _Publisher | None:
    url = settings.STREAMS_REDIS_URL
    if not url or (_failed_at is not None and time.monotonic() - _failed_at < REST_SECONDS):
        return None
    with _lock:
        found = _publishers.get(url)
        if found is None:
            found = _publishers[url] = _Publisher(url)
    return found


def streams_record(tenant: Tenant, user: EndUser, facts: Sequence[Fact]) -> None:
    """Publish what an event (or a job) did to the user, once the caller's transaction
    commits: a rolled-back event publishes nothing."""
    if not facts or not enabled():
        return
    messages = fact_messages(tenant, user, facts)
    boards = boards_moved(facts)
    if messages or boards:
        transaction.on_commit(lambda: _publish(tenant, user, messages, boards), robust=True)


def _publish(tenant: Tenant, user: EndUser, messages: list[Message], boards: list[str]) -> None:
    user_topic = Topic(tenant.pk, user=user.external_id)
    tenant_topic = Topic(tenant.pk)
    cheap = [m for m in messages if not m.costly]
    watched = _send(tenant_topic, user_topic, cheap, boards)
    costly = [m for m in messages if m.costly]
    if costly and watched and any(watched[:2]):
        _send(tenant_topic, user_topic, costly, [], watched=watched)


def _send(
    tenant_topic: Topic,
    user_topic: Topic,
    messages: list[Message],
    boards: list[str],
    watched: list[int] | None = None,
) -> list[int] | None:
    """One call: the messages to the user's and the tenant's streams (those watched), and
    "changed" to the boards' channels; which were watched."""
    conn = _publisher()
    if conn is None:
        return None
    built = []
    for message in messages:
        if watched is not None and not (watched[0] or (watched[1] and message.user)):
            continue
        body = message.build()
        if body is not None:
            built.append((message, json_dumps(body).decode()))
    p = prefix()
    keys: list[str] = []
    args: list[Any] = [retention_ms()]
    for topic, wanted in ((tenant_topic, built), (user_topic, [b for b in built if b[0].user])):
        keys += [topic.key(p), topic.watch_key(p)]
        args.append(len(wanted))
        for message, data in wanted:
            args += [message.type, data]
    for key in boards:
        board = Topic(tenant_topic.tenant_pk, board=key)
        keys += [board.key(p), board.watch_key(p)]
        args.append(-1)
    try:
        return [int(w) for w in conn.publish(keys=keys, args=args)]
    except conn.error as exc:
        global _failed_at
        if _failed_at is None:
            logger.warning("Redis failed (%s): live streams miss messages for now", exc)
        _failed_at = time.monotonic()
        return None
