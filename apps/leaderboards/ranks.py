"""Ranks without counting: a Redis sorted set per board, run and group (ISSUE 13 item 3).

PostgreSQL keeps the entries and stays the source of truth; Redis keeps, beside it, every
participant of a run and group in rank order, so a rank is a ZLEXCOUNT (O(log n)) instead of a
COUNT over the board. Without LEADERBOARD_RANKS_REDIS_URL (development, the SQLite suite) or
while Redis does not answer, the same questions go to PostgreSQL (apps/leaderboards/sql.py):
the same answers, slower on large boards.

Layout, per run and group (`{prefix}lb:{board}:{run}:{group hash}`):
- `:z` a sorted set of members, all with score 0, so Redis orders them by their bytes: the
  member writes each key of the rank order (leaderboards.domain.RANK_ORDER: value descending,
  reached_at, user id) in fixed-width digits, so that their bytes sort in rank order. A marker
  member `~` sorts after them all: it keeps an empty board's set in existence (Redis deletes
  empty sets).
- `:h` a hash user id -> that user's member, so a change removes the old member; its field `~`
  holds the epoch the set was built in.
- `:p` changes made while the set was not ready (missing, stale) or being rebuilt, replayed
  by the rebuild onto the set it builds; `:b` the rebuild's lock.

A set is ready when it exists and its epoch is the current one (`{prefix}ranks:epoch`). A
process that lost Redis (an error) bumps the epoch when Redis answers again, since changes made
meanwhile are missing: every set is then rebuilt from PostgreSQL on its next use. Rebuilds of
small sets happen inline; larger ones in the background thread, with PostgreSQL answering until
they finish.

Changes are written in the event's transaction, under the user's lock (so one user's changes
reach Redis in order). A transaction that rolls back after its change, or a process that dies
between the change and the commit, leaves that one user's member ahead of PostgreSQL until the
user's next event, which resets it from PostgreSQL (the member the caller read under the lock is
the truth), or until the set is rebuilt (the snapshot job rebuilds every active board's daily).

A rebuild reads PostgreSQL's committed rows, so it must not miss a change made in Redis by a
transaction still in flight. While a set is not ready, every change is recorded for the rebuild
(`:p`), so a missing or stale set is rebuilt as soon as it is found, and only then: the claim
checks readiness and takes the build lock at once. A ready set is rebuilt on purpose (daily,
`leaderboard_ranks_rebuild`) only after the transactions writing when it began have ended. One
window is left: a set that stops being ready (the epoch moves, a board's sets are dropped) just
as a transaction that changed it commits may miss that change until the user's next event or the
next daily rebuild.
"""

import datetime as dt
import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings

from apps.core.background import background_submit
from apps.core.replicas import primary_reads
from apps.leaderboards import ranks_lua, sql
from apps.leaderboards.domain import RANK_ORDER, group_is_excluded
from apps.leaderboards.models import LeaderboardEntry
from apps.leaderboards.sql import Place, Standing

logger = logging.getLogger("gamify.leaderboards.ranks")

MARKER = "~"  # sorts after every member (digits)
# An entry's value in units of its last decimal place: |value| < 10**max_digits of them.
_VALUE = LeaderboardEntry._meta.get_field("value")
_MICRO = Decimal(10) ** _VALUE.decimal_places
_VALUE_DIGITS: int = _VALUE.max_digits
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _millionths(value: Decimal) -> int:
    return int((value * _MICRO).to_integral_value())


def _micros(moment: dt.datetime) -> int:
    return (moment - _EPOCH) // dt.timedelta(microseconds=1)


@dataclass(frozen=True)
class _Digits:
    """How one key of the rank order is written in a member: as an integer (`number`), plus
    `base`, in `width` digits; a descending key is written as `base` minus it, so that a
    higher one sorts first."""

    width: int
    base: int
    number: Callable[[Any], int]


# A member is the keys of domain.RANK_ORDER in order, each in the digits of its field: the
# value in millionths (25 digits around 10**24 for an amount's 24 digits), reached_at in
# microseconds since the epoch (17 digits), the user's pk (20 digits).
_FIELD_DIGITS = {
    "value": _Digits(_VALUE_DIGITS + 1, 10**_VALUE_DIGITS, _millionths),
    "reached_at": _Digits(17, 0, _micros),
    "user_id": _Digits(20, 0, int),
}
_DESCENDING = {key.field: key.descending for key in RANK_ORDER}
_SPANS: dict[str, slice] = {}
_start = 0
for _key in RANK_ORDER:
    _width = _FIELD_DIGITS[_key.field].width
    _SPANS[_key.field] = slice(_start, _start + _width)
    _start += _width


def _write(field: str, value: Any) -> str:
    digits = _FIELD_DIGITS[field]
    number = digits.number(value)
    written = digits.base - number if _DESCENDING[field] else digits.base + number
    return str(written).zfill(digits.width)


def _read(encoded: str, field: str) -> int:
    written = int(encoded[_SPANS[field]])
    base = _FIELD_DIGITS[field].base
    return base - written if _DESCENDING[field] else written - base


def member(value: Decimal, reached_at: dt.datetime, user_pk: int) -> str:
    """The member of an entry: its keys in rank order, so that members sort as ranks do."""
    place = {"value": value, "reached_at": reached_at, "user_id": user_pk}
    return "".join(_write(key.field, place[key.field]) for key in RANK_ORDER)


def member_value(encoded: str) -> Decimal:
    return Decimal(_read(encoded, "value")) / _MICRO


def member_user(encoded: str) -> int:
    return _read(encoded, "user_id")


# A set with at most this many entries is rebuilt inside the request that found it missing.
INLINE_REBUILD_MAX = 5_000
REBUILD_CHUNK = 10_000
# After a Redis error, PostgreSQL answers for this long before Redis is tried again.
RETRY_AFTER = 5.0
BUILD_LOCK_SECONDS = 600
# A forced rebuild waits at most this long for the transactions writing when it began (an
# event's transaction lasts milliseconds; a longer one is some other job's).
WRITERS_WAIT_SECONDS = 5.0


@dataclass(frozen=True)
class RunKey:
    """One ranking: a board's run and breakdown group."""

    board_pk: int
    run_start: dt.date
    group: str

    def keys(self) -> list[str]:
        digest = hashlib.blake2b(self.group.encode(), digest_size=8).hexdigest()
        base = f"{_prefix()}lb:{self.board_pk}:{self.run_start:%Y%m%d}:{digest}"
        return [base + ":z", base + ":h", base + ":p", base + ":b", _prefix() + "ranks:epoch"]


def _prefix() -> str:
    return str(settings.LEADERBOARD_RANKS_PREFIX)


class _Redis:
    """The process's connection and scripts, and its view of Redis's health."""

    def __init__(self, url: str) -> None:
        import redis

        self.url = url
        self.error = redis.RedisError
        self.client = redis.Redis.from_url(
            url, socket_timeout=0.5, socket_connect_timeout=0.5, decode_responses=True
        )
        self.standing = self.client.register_script(ranks_lua.STANDING)
        self.set = self.client.register_script(ranks_lua.SET)
        self.page = self.client.register_script(ranks_lua.PAGE)
        self.finish = self.client.register_script(ranks_lua.FINISH)
        self.claim = self.client.register_script(ranks_lua.CLAIM)
        self.neighbours = self.client.register_script(ranks_lua.NEIGHBOURS)
        self.failed_at: float | None = None


_lock = threading.Lock()
_shared: dict[str, _Redis] = {}


def _redis() -> _Redis | None:
    url = settings.LEADERBOARD_RANKS_REDIS_URL
    if not url:
        return None
    with _lock:
        conn = _shared.get(url)
        if conn is None:
            conn = _shared[url] = _Redis(url)
    if conn.failed_at is not None:
        if time.monotonic() - conn.failed_at < RETRY_AFTER:
            return None
        try:
            # Changes made while Redis was out of reach are missing from every set.
            conn.client.incr(_prefix() + "ranks:epoch")
        except conn.error:
            conn.failed_at = time.monotonic()
            return None
        logger.warning("Redis answers again: rank sets will be rebuilt from PostgreSQL")
        conn.failed_at = None
    return conn


def _redis_for(run: RunKey) -> _Redis | None:
    """_redis for a ranking Redis keeps: an excluded user's entries, kept apart in a group no
    reader asks for (domain.EXCLUDED_PREFIX), are only in PostgreSQL."""
    return None if group_is_excluded(run.group) else _redis()


def _failed(conn: _Redis, exc: Exception) -> None:
    if conn.failed_at is None:
        logger.warning("Redis failed (%s): ranks come from PostgreSQL for now", exc)
    conn.failed_at = time.monotonic()


def standing(
    run: RunKey,
    user_pk: int,
    old: Place | None,
    new: Place | None,
    *,
    locked: bool = True,
    move: bool = False,
) -> Standing:
    """Where the user's entry stands among the others of its run and group at its old and new
    place (either None: not on the board), from Redis when it can answer. `locked`: the
    caller holds the user's lock and read `old` under it, so Redis is set right to it.
    `move`: the entry has moved to `new` in PostgreSQL; Redis moves it in the same call, and
    the standing says so (`moved`), else the caller still owes `change`."""
    conn = _redis_for(run)
    if conn is not None:
        args: list[Any] = [
            user_pk,
            _encode(old, user_pk),
            _encode(new, user_pk),
            "1" if locked else "0",
            "1" if move else "0",
        ]
        try:
            found = conn.standing(keys=run.keys(), args=args)
            if not found[0] and _rebuild_or_hand_off(run):
                found = conn.standing(keys=run.keys(), args=args)
        except conn.error as exc:
            _failed(conn, exc)
            found = [0]
        if found[0]:
            _, before, after, others, lowest = found
            return Standing(
                int(before),
                int(after),
                int(others),
                member_value(lowest) if lowest else None,
                moved=move,
            )
    return sql.standing(run.board_pk, run.run_start, run.group, user_pk, old, new)


def rank(run: RunKey, user_pk: int, place: Place) -> int:
    """The rank of the user's entry at `place` (1 = first)."""
    return standing(run, user_pk, place, None, locked=False).ahead_before + 1


def _encode(place: Place | None, user_pk: int) -> str:
    return member(place[0], place[1], user_pk) if place is not None else ""


def change(run: RunKey, places: Iterable[tuple[int, Place | None]]) -> None:
    """Users' new places (None: off the board), in the caller's transaction, after the same
    change in PostgreSQL."""
    args: list[Any] = []
    for user_pk, place in places:
        args += [user_pk, _encode(place, user_pk)]
    conn = _redis_for(run) if args else None
    if conn is None:
        # Out of reach: this process moves the epoch once Redis answers again, so the sets
        # missing this change are rebuilt from PostgreSQL.
        return
    try:
        conn.set(keys=run.keys(), args=args)
    except conn.error as exc:
        _failed(conn, exc)


def page(run: RunKey, offset: int, count: int) -> list[str] | None:
    """Members ranked offset + 1 .. offset + count; None: ask PostgreSQL."""
    conn = _redis_for(run)
    if conn is None or count <= 0:
        return None if conn is None else []
    try:
        found = conn.page(keys=run.keys(), args=[offset, count])
        if found[:1] == ["~not-ready"] and _rebuild_or_hand_off(run):
            found = conn.page(keys=run.keys(), args=[offset, count])
    except conn.error as exc:
        _failed(conn, exc)
        return None
    return None if found[:1] == ["~not-ready"] else list(found)


@dataclass(frozen=True)
class Window:
    """A user's place in a ranking and the members around it: `place` is the user's 0-based
    place (None: not on the board) and `first` the 0-based place of `members[0]`."""

    place: int | None
    first: int
    members: list[str]


def neighbours(run: RunKey, user_pk: int, k: int) -> Window | None:
    """The user's place with the members up to `k` places above and below it, in one call
    (O(log n + k)); None: ask PostgreSQL."""
    conn = _redis_for(run)
    if conn is None:
        return None
    try:
        found = conn.neighbours(keys=run.keys(), args=[user_pk, k])
        if found[:1] == ["~not-ready"] and _rebuild_or_hand_off(run):
            found = conn.neighbours(keys=run.keys(), args=[user_pk, k])
    except conn.error as exc:
        _failed(conn, exc)
        return None
    if found[:1] == ["~not-ready"]:
        return None
    if not found:
        return Window(None, 0, [])
    return Window(int(found[0]), int(found[1]), list(found[2:]))


def _rebuild_or_hand_off(run: RunKey) -> bool:
    """Rebuild a missing set now when it is small (True), else in the background (False)."""
    small = (
        len(_entries(run).values_list("pk", flat=True)[: INLINE_REBUILD_MAX + 1])
        <= INLINE_REBUILD_MAX
    )
    if small:
        return rebuild(run)
    background_submit(rebuild, run)
    return False


def _entries(run: RunKey) -> Any:
    return LeaderboardEntry.objects.filter(
        leaderboard_id=run.board_pk, run_start=run.run_start, group=run.group
    ).order_by()


def rebuild(run: RunKey, *, force: bool = False) -> bool:
    """Fill a missing or stale set again from PostgreSQL; whether the set is ready after it
    (False: Redis is out of reach, or another process is rebuilding it). Changes made
    meanwhile are recorded and replayed at the end.

    `force`: rebuild a ready set too (the daily job, `leaderboard_ranks_rebuild`), and return
    whether this call did. A ready set takes changes without recording them, so the changes of
    transactions in flight when the rebuild begins would be missing from PostgreSQL's rows:
    the rebuild waits for those transactions to end first."""
    conn = _redis_for(run)
    if conn is None:
        return False
    zset, hash_, _, lock, _ = keys = run.keys()
    token = uuid.uuid4().hex
    # Built under names of its own, which expire if this process dies before putting them in
    # place.
    fresh_set, fresh_hash = f"{zset}:{token}", f"{hash_}:{token}"
    try:
        claimed = conn.claim(keys=keys, args=[token, "1" if force else "0", BUILD_LOCK_SECONDS])
    except conn.error as exc:
        _failed(conn, exc)
        return False
    if claimed != 1:
        return claimed == 2
    finished = False
    try:
        if force and not sql.await_writers(WRITERS_WAIT_SECONDS):
            logger.warning("Rebuilding %s while transactions still write: see ranks.py", run)
        # From the primary, even for a lag-tolerant read (apps/core/replicas.py): the set
        # takes every later change on top of what it is filled with.
        with primary_reads():
            rows = _entries(run).values_list("user_id", "value", "reached_at")
            batch: dict[Any, Any] = {}
            for user_pk, value, reached_at in rows.iterator(chunk_size=REBUILD_CHUNK):
                batch[str(user_pk)] = member(value, reached_at, user_pk)
                if len(batch) >= REBUILD_CHUNK:
                    _load(conn, fresh_set, fresh_hash, batch)
                    batch = {}
            _load(conn, fresh_set, fresh_hash, batch)
        finished = bool(conn.finish(keys=[*keys, fresh_set, fresh_hash], args=[token]))
    except conn.error as exc:
        _failed(conn, exc)
    finally:
        if not finished:
            _release(conn, lock, token)
    return finished


def _release(conn: _Redis, lock: str, token: str) -> None:
    try:
        if conn.client.get(lock) == token:
            conn.client.delete(lock)
    except conn.error as exc:
        _failed(conn, exc)


def _load(conn: _Redis, zset: str, hash_: str, batch: dict[Any, Any]) -> None:
    if not batch:
        return
    pipe = conn.client.pipeline(transaction=False)
    pipe.zadd(zset, dict.fromkeys(batch.values(), 0))
    pipe.hset(hash_, mapping=batch)
    pipe.expire(zset, BUILD_LOCK_SECONDS)
    pipe.expire(hash_, BUILD_LOCK_SECONDS)
    pipe.execute()


def forget_board(board_pk: int) -> None:
    """Drop every set of a board (deleted, or trimmed to fewer participants)."""
    _forget(f"lb:{board_pk}:*")


def forget_all() -> None:
    """Drop every key under this installation's prefix."""
    _forget("*")


def _forget(pattern: str) -> None:
    conn = _redis()
    if conn is None:
        return
    try:
        doomed = list(conn.client.scan_iter(match=_prefix() + pattern, count=1000))
        for start in range(0, len(doomed), 500):
            conn.client.delete(*doomed[start : start + 500])
    except conn.error as exc:
        _failed(conn, exc)


def reset() -> None:
    """Make every set stale (tests; operators after restoring the database from a backup)."""
    conn = _redis()
    if conn is not None:
        try:
            conn.client.incr(_prefix() + "ranks:epoch")
        except conn.error as exc:
            _failed(conn, exc)
