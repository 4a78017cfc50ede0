"""The serving side of the live streams, in an ASGI process (apps/streams/views.py): one Redis
pub/sub connection per process, shared by every client it serves.

A client's stream subscribes its channel here (the first client of a channel subscribes it in
Redis, the last one leaving unsubscribes it), and receives each live message in its own queue.
While a process serves a topic, it keeps the topic's watch key alive (refreshed every
heartbeat), so publishers write the topic's messages. A queue that overflows (a client reading
slower than its messages come) is closed: the client reconnects with Last-Event-ID and reads
what it missed from the stream."""

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger("gamify.streams")

QUEUE_SIZE = 1000
CLOSED = object()  # put in a queue that overflowed: its client must reconnect


@dataclass
class _Channel:
    queues: set[asyncio.Queue[Any]] = field(default_factory=set)
    watch_key: str = ""


class Hub:
    """One event loop's pub/sub connection and listeners."""

    def __init__(self, url: str, retention_seconds: int, heartbeat_seconds: float) -> None:
        import redis.asyncio

        self.error = redis.RedisError
        # Bounded: a Redis that hangs must fail a stream's opening, not queue every opening
        # behind it (the pub/sub reads wait with their own timeout).
        self.client = redis.asyncio.Redis.from_url(
            url, decode_responses=True, socket_connect_timeout=2
        )
        self.pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        self.retention = retention_seconds
        self.heartbeat = heartbeat_seconds
        self.channels: dict[str, _Channel] = {}
        self._reader: asyncio.Task[None] | None = None
        self._refresher: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def listen(self, channel: str, watch_key: str) -> asyncio.Queue[Any]:
        """A queue of the channel's live messages, from now on; the topic is watched (its
        messages written) from before this returns."""
        queue: asyncio.Queue[Any] = asyncio.Queue(QUEUE_SIZE)
        async with self._lock:
            await self.client.set(watch_key, "1", ex=self.retention)
            found = self.channels.get(channel)
            if found is None:
                found = self.channels[channel] = _Channel(watch_key=watch_key)
                await self.pubsub.subscribe(channel)
            found.queues.add(queue)
            self._start()
        return queue

    async def leave(self, channel: str, queue: asyncio.Queue[Any]) -> None:
        async with self._lock:
            found = self.channels.get(channel)
            if found is None:
                return
            found.queues.discard(queue)
            if not found.queues:
                del self.channels[channel]
                with contextlib.suppress(self.error, OSError):
                    await self.pubsub.unsubscribe(channel)

    def listeners(self) -> int:
        return sum(len(c.queues) for c in self.channels.values())

    def _start(self) -> None:
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read())
        if self._refresher is None or self._refresher.done():
            self._refresher = asyncio.get_running_loop().create_task(self._refresh())

    async def _read(self) -> None:
        while self.channels:
            try:
                message = await self.pubsub.get_message(timeout=1.0)
            except (self.error, OSError) as exc:
                logger.warning("Live streams lost Redis (%s): closing their clients", exc)
                self._close_all()
                return
            if message is None or message.get("type") != "message":
                continue
            found = self.channels.get(message["channel"])
            for queue in list(found.queues if found else ()):
                try:
                    queue.put_nowait(message["data"])
                except asyncio.QueueFull:
                    # Its client reconnects and reads the rest from the stream.
                    with contextlib.suppress(asyncio.QueueEmpty):
                        queue.get_nowait()
                    queue.put_nowait(CLOSED)

    async def _refresh(self) -> None:
        """Keep the watch keys of the topics this process serves alive."""
        while self.channels:
            await asyncio.sleep(self.heartbeat)
            keys = {c.watch_key for c in self.channels.values()}
            try:
                async with self.client.pipeline(transaction=False) as pipe:
                    for key in keys:
                        pipe.set(key, "1", ex=self.retention)
                    await pipe.execute()
            except (self.error, OSError) as exc:
                logger.warning("Live streams could not refresh their watch keys (%s)", exc)

    def _close_all(self) -> None:
        for channel in list(self.channels.values()):
            for queue in channel.queues:
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(CLOSED)
        self.channels.clear()
        self.pubsub = self.client.pubsub(ignore_subscribe_messages=True)


_hubs: dict[int, tuple[asyncio.AbstractEventLoop, Hub]] = {}


def hub_for_loop(url: str, retention_seconds: int, heartbeat_seconds: float) -> Hub:
    """This event loop's hub (an ASGI server runs one loop per process; tests may run more)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(id(loop))
    if found is None or found[0] is not loop:
        found = _hubs[id(loop)] = (loop, Hub(url, retention_seconds, heartbeat_seconds))
    return found[1]
