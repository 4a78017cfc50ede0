"""Pure rules of the live streams (README, "Live streams"): what a stream is called in Redis,
who may open it, and how a message is written on the wire (Server-Sent Events). No Redis, no
ORM, no clock."""

import json
from dataclasses import dataclass
from typing import Any

# A user's stream and the tenant's carry the webhooks' event types; a board's stream carries
# one type, its top N.
BOARD_TOP = "leaderboard.top"
# Sent when a client reconnects with a Last-Event-ID older than the retention window: the
# messages in between are gone, and the client should read the state again.
RESET = "stream.reset"
MAX_TOP = 100
DEFAULT_TOP = 10


@dataclass(frozen=True)
class Topic:
    """One stream: a user's (`user` is their external id), a board's (`board` its key) or the
    whole tenant's (neither)."""

    tenant_pk: int
    user: str | None = None
    board: str | None = None

    @property
    def kind(self) -> str:
        return "user" if self.user is not None else "board" if self.board is not None else "tenant"

    def key(self, prefix: str) -> str:
        """The Redis key of its stream (and the channel of its live messages). Every key of a
        tenant shares one hash tag, so one script may write them all (on a Redis Cluster
        too)."""
        tag = f"{prefix}s:{{t{self.tenant_pk}}}"
        if self.user is not None:
            return f"{tag}:u:{_safe(self.user)}"
        if self.board is not None:
            return f"{tag}:b:{_safe(self.board)}"
        return f"{tag}:t"

    def watch_key(self, prefix: str) -> str:
        """Present while a client watches the stream, and for the retention window after
        the last one left (so a client that reconnects finds what it missed)."""
        return self.key(prefix) + ":w"


def _safe(name: str) -> str:
    # External ids may hold any character but control ones; JSON quoting keeps a colon or a
    # brace from reading as another key's separator.
    return json.dumps(name)


def frame(message_id: str | None, event: str, data: Any) -> bytes:
    """One Server-Sent Events message: its id (for Last-Event-ID), its type and its JSON data
    (one line: JSON has no raw newlines)."""
    head = f"id: {message_id}\n" if message_id is not None else ""
    body = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return f"{head}event: {event}\ndata: {body}\n\n".encode()


def heartbeat() -> bytes:
    """A comment line: keeps proxies and the client's reconnect timer from closing an idle
    stream."""
    return b": heartbeat\n\n"


def retry(milliseconds: int) -> bytes:
    """How long a client waits before reconnecting after the stream closes."""
    return f"retry: {milliseconds}\n\n".encode()


def newer(message_id: str, than: str | None) -> bool:
    """Whether a stream id (`<ms>-<seq>`) comes after another (None: any does)."""
    if than is None:
        return True
    return _parts(message_id) > _parts(than)


def _parts(message_id: str) -> tuple[int, int]:
    ms, _, seq = message_id.partition("-")
    return int(ms), int(seq or 0)


def valid_id(message_id: str) -> bool:
    ms, sep, seq = message_id.partition("-")
    return ms.isdigit() and (not sep or seq.isdigit()) and len(message_id) <= 41


def clamp_top(value: int) -> int:
    return max(1, min(MAX_TOP, value))
