"""Ranks without counting: a Redis sorted set per board, run and group (ISSUE 13 item 3).

PostgreSQL keeps the entries and stays the source of truth; Redis keeps, beside it, every
participant of a run and group in rank order, so a rank is a ZLEXCOUNT (O(log n)) instead of a
COUNT over the board. Without LEADERBOARD_RANKS_REDIS_URL (development, the SQLite suite) or
while Redis does not answer, the same questions go to PostgreSQL (apps/leaderboards/sql.py):
the same answers, slower on large boards.

Layout, per run and group (`{prefix}lb:{{board}:{run}:{group hash}}`): the part in braces is
a Redis Cluster hash tag, so that every key of one ranking lives in one slot, where one Lua
script may touch them all; on one Redis node the braces are only characters (one scheme for
both). The prefix must hold no braces.
- `:z` a sorted set of members, all with score 0, so Redis orders them by their bytes: the
  member writes each key of the rank order (leaderboards.domain.RANK_ORDER: value descending,
  reached_at, user id) in fixed-width digits, so that their bytes sort in rank order. A marker
  member `~` sorts after them all: it keeps an empty board's set in existence (Redis deletes
  empty sets).
- `:h` a hash user id -> that user's member, so a change removes the old member; its field `~`
  holds the epoch the set was built in.
- `:p` changes made while the set was not ready (missing, stale) or being rebuilt, replayed
  by the rebuild onto the set it builds; `:b` the rebuild's lock.

Sub-boards (LEADERBOARD_RANKS_SUBBOARDS = N > 1): each ranking is split into N sets of their own
(`{prefix}lb:{{board}:{run}:{group hash}:{i}.{N}}`), each in its own slot, so on its own node
of a cluster; a user lives in sub-board blake2b(user id) mod N. Members sort by the whole rank
order, ties included, so a user's rank is 1 + the members before theirs in every sub-board, and
a page is the sub-boards' pages merged. Each sub-board is ready, stale and rebuilt on its own.
A question asks every sub-board in turn (N calls): the sum is not one atomic snapshot, as the
same question to PostgreSQL under READ COMMITTED is not either. Changing N changes the keys:
the new sets are built from PostgreSQL on first use; the old ones stay until
`forget_board`/`forget_all` drops them.

The key names changed with the hash tags (issue 32): after an upgrade every set is found
missing and rebuilt from PostgreSQL on its first use (inline when small, in the background
with PostgreSQL answering meanwhile otherwise), or at once by `leaderboard_ranks_rebuild`; the
keys of the old scheme (`{prefix}lb:{board}:...`) are dropped by `forget_board`/`forget_all`.

A set is ready when it exists and its epoch is the current one (`{prefix}ranks:epoch`). A
process that lost Redis (an error) bumps the epoch when Redis answers again, since changes made
meanwhile are missing: every set is then rebuilt from PostgreSQL on its next use. Rebuilds of
small sets happen inline; larger ones in the background thread, with PostgreSQL answering until
they finish.

On a Redis Cluster (`redis+cluster://host:port[,host:port...]`, `rediss+cluster://` for TLS)
the epoch key lives in a slot of its own, so the scripts cannot read it: each process reads it
at most every EPOCH_CHECK_SECONDS and passes its copy, and a set stamped newer than the copy
makes it read the epoch again at once; a change recorded during a rebuild is tagged with the
rebuild's epoch when that is newer than the copy, so the rebuild replays it. A failover loses
the writes its old master had not yet sent to the replica, silently: so each process also
watches the cluster's current epoch (which every failover, and a resharding, moves on; a lost
record of it counts as a move) and moves the rank epoch on when it does, and every set is
rebuilt from PostgreSQL. For up to EPOCH_CHECK_SECONDS after a failover, or after another
process moved the epoch, a process may still take a set as ready.

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
import functools
import hashlib
import heapq
import itertools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import unquote

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

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


# On a Redis Cluster, how often a process reads the epoch and the cluster's current epoch.
EPOCH_CHECK_SECONDS = 1.0
CLUSTER_SCHEMES = {"redis+cluster": False, "rediss+cluster": True}  # scheme -> TLS


def subboards() -> int:
    """How many sub-boards each ranking is split into (LEADERBOARD_RANKS_SUBBOARDS)."""
    return max(1, int(settings.LEADERBOARD_RANKS_SUBBOARDS))


def subboard(user_pk: int, count: int) -> int:
    """The sub-board of a user among `count`: a stable hash of the user id (the same in every
    process, unlike hash())."""
    if count == 1:
        return 0
    digest = hashlib.blake2b(str(user_pk).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


@dataclass(frozen=True)
class RunKey:
    """One ranking: a board's run and breakdown group."""

    board_pk: int
    run_start: dt.date
    group: str

    def keys(self, sub: int = 0, count: int | None = None) -> list[str]:
        """The keys of sub-board `sub` of `count` (LEADERBOARD_RANKS_SUBBOARDS): set, hash,
        pending, lock (one hash tag), then the epoch key."""
        count = subboards() if count is None else count
        digest = hashlib.blake2b(self.group.encode(), digest_size=8).hexdigest()
        tag = f"{self.board_pk}:{self.run_start:%Y%m%d}:{digest}"
        if count > 1:
            tag += f":{sub}.{count}"
        base = f"{_prefix()}lb:{{{tag}}}"
        return [base + ":z", base + ":h", base + ":p", base + ":b", _epoch_key()]


def _prefix() -> str:
    return str(settings.LEADERBOARD_RANKS_PREFIX)


def _epoch_key() -> str:
    return _prefix() + "ranks:epoch"


def cluster_nodes(url: str) -> tuple[list[tuple[str, int]], dict[str, Any]] | None:
    """The startup nodes and connection options of a cluster URL
    (`redis+cluster://[user:password@]host:port[,host:port...]`, `rediss+cluster://` for TLS);
    None: a URL of one node."""
    scheme, _, rest = url.partition("://")
    if scheme not in CLUSTER_SCHEMES:
        return None
    netloc, _, path = rest.partition("/")
    if path.split("?")[0] not in ("", "0"):
        raise ImproperlyConfigured(f"A Redis Cluster has only database 0, not {path!r}")
    options: dict[str, Any] = {"ssl": CLUSTER_SCHEMES[scheme]}
    if "@" in netloc:
        credentials, netloc = netloc.rsplit("@", 1)
        user, _, password = credentials.partition(":")
        options["username"] = unquote(user) or None
        options["password"] = unquote(password) or None
    nodes = []
    for node in netloc.split(","):
        host, _, port = node.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ImproperlyConfigured(f"A Redis Cluster node is host:port, not {node!r}")
        nodes.append((host.strip("[]"), int(port)))
    return nodes, options


class _Redis:
    """The process's connection and scripts, and its view of Redis's health."""

    def __init__(self, url: str) -> None:
        import redis
        from redis.exceptions import RedisClusterException

        if "{" in _prefix() or "}" in _prefix():
            raise ImproperlyConfigured("LEADERBOARD_RANKS_PREFIX must not hold { or }")
        self.url = url
        # RedisClusterException: a cluster none of whose startup nodes answers (not a RedisError).
        self.error: tuple[type[Exception], ...] = (redis.RedisError, RedisClusterException)
        self.failed_at: float | None = None
        self.cluster = cluster_nodes(url)
        self.client: Any = None
        # A cluster's epoch as this process last read it, and when (monotonic).
        self.epoch: str | None = None
        self.epoch_read_at = 0.0
        if self.cluster is None:
            self._connect()

    def _connect(self) -> None:
        import redis

        timeouts: dict[str, Any] = {"socket_timeout": 0.5, "socket_connect_timeout": 0.5}
        client: Any
        if self.cluster is None:
            client = redis.Redis.from_url(self.url, decode_responses=True, **timeouts)
        else:
            from redis.cluster import ClusterNode, RedisCluster

            nodes, options = self.cluster
            client = RedisCluster(
                startup_nodes=[ClusterNode(host, port) for host, port in nodes],
                decode_responses=True,
                **timeouts,
                **options,
            )
        built = ranks_lua.scripts(cluster=self.cluster is not None)
        self.standing = client.register_script(built["standing"])
        self.set = client.register_script(built["set"])
        self.page = client.register_script(built["page"])
        self.finish = client.register_script(built["finish"])
        self.claim = client.register_script(built["claim"])
        self.neighbours = client.register_script(built["neighbours"])
        self.around = client.register_script(built["around"])
        self.epoch_script = client.register_script(ranks_lua.EPOCH)
        self.failovers = client.register_script(ranks_lua.FAILOVERS)
        self.client = client

    def connected(self) -> bool:
        """Whether there is a client (a cluster's is made on first use, as making it asks the
        cluster for its slots)."""
        if self.client is None:
            try:
                self._connect()
            except self.error as exc:
                _failed(self, exc)
                return False
        return True

    def run(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """Run a board script: on one node as it is; on a cluster without the epoch key and
        with this process's copy of the epoch appended, read again when a set is newer."""
        if self.cluster is None:
            return script(keys=keys, args=args)
        board_keys = [key for key in keys if key != _epoch_key()]
        try:
            return script(keys=board_keys, args=[*args, self.cluster_epoch()])
        except self.error[0] as exc:
            if "GAMIFY-EPOCH" not in str(exc):
                raise
        return script(keys=board_keys, args=[*args, self.cluster_epoch(fresh=True)])

    def cluster_epoch(self, *, fresh: bool = False) -> str:
        """A cluster's epoch, read at most every EPOCH_CHECK_SECONDS; moved on first when the
        cluster has failed over since last seen."""
        now = time.monotonic()
        if fresh or self.epoch is None or now - self.epoch_read_at >= EPOCH_CHECK_SECONDS:
            from redis.cluster import RedisCluster

            # The highest of the masters': a failover's new master has the new epoch at once,
            # where other nodes learn it by gossip, so one node's could move on in steps.
            info = self.client.cluster_info(target_nodes=RedisCluster.PRIMARIES)
            infos = [info] if "cluster_current_epoch" in info else list(info.values())
            current = max(int(one["cluster_current_epoch"]) for one in infos)
            moved = self.failovers(keys=[_prefix() + "ranks:cluster-epoch"], args=[current])
            if moved:
                logger.warning("The Redis Cluster failed over: rank sets will be rebuilt")
            epoch = str(self.epoch_script(keys=[_epoch_key()], args=["1" if moved else "0"]))
            self.epoch, self.epoch_read_at = epoch, now
            return epoch
        return str(self.epoch)

    def bump(self) -> None:
        """Move the epoch on: every set is stale."""
        if self.cluster is None:
            self.client.incr(_epoch_key())
        else:
            self.epoch = str(self.epoch_script(keys=[_epoch_key()], args=["1"]))
            self.epoch_read_at = time.monotonic()


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
            if not conn.connected():
                return None
            conn.bump()
        except conn.error as exc:
            _failed(conn, exc)
            return None
        logger.warning("Redis answers again: rank sets will be rebuilt from PostgreSQL")
        conn.failed_at = None
    elif not conn.connected():
        return None
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
        count = subboards()
        own = subboard(user_pk, count)
        mine, theirs = _encode(old, user_pk), _encode(new, user_pk)
        found: list[Any] | None = []
        try:
            # The other sub-boards first (the user is in none of them: their standing there is
            # a count), so that the user's own is moved only once every count is in.
            for sub in range(count):
                if sub != own and found is not None:
                    found = _sum(found, _ask_standing(conn, run, sub, count, user_pk, mine, theirs))
            if found is not None:
                args = [user_pk, mine, theirs, "1" if locked else "0", "1" if move else "0"]
                answer = _ask(conn, run, own, count, conn.standing, args)
                found = _sum(found, answer[1:] if answer[0] else None)
        except conn.error as exc:
            _failed(conn, exc)
            found = None
        if found is not None:
            before, after, others, lowest = found
            return Standing(
                int(before),
                int(after),
                int(others),
                member_value(lowest) if lowest else None,
                moved=move,
            )
    return sql.standing(run.board_pk, run.run_start, run.group, user_pk, old, new)


def _ask_standing(
    conn: _Redis, run: RunKey, sub: int, count: int, user_pk: int, old: str, new: str
) -> list[Any] | None:
    """A sub-board's standing of a user it does not hold: a count of the members ahead of
    each place, of the members, and the lowest (the one script, neither fixing nor moving)."""
    found = _ask(conn, run, sub, count, conn.standing, [user_pk, old, new, "0", "0"])
    return list(found[1:]) if found[0] else None


def _sum(total: list[Any] | None, part: list[Any] | None) -> list[Any] | None:
    """Standings of sub-boards added up: counts summed, the lowest the one that sorts last."""
    if total is None or part is None:
        return None
    if not total:
        return list(part)
    lowest = max(total[3] or "", part[3] or "")
    return [int(total[i]) + int(part[i]) for i in range(3)] + [lowest]


def _ask(conn: _Redis, run: RunKey, sub: int, count: int, script: Any, args: list[Any]) -> Any:
    """A board script on a sub-board, which is rebuilt first when it is not ready and small."""
    keys = run.keys(sub, count)
    found = conn.run(script, keys, args)
    if _not_ready(conn, script, found) and _rebuild_or_hand_off(run, sub):
        found = conn.run(script, keys, args)
    return found


def _not_ready(conn: _Redis, script: Any, found: Any) -> bool:
    if script is conn.standing:
        return not found[0]
    return bool(found[:1] == ["~not-ready"])


def rank(run: RunKey, user_pk: int, place: Place) -> int:
    """The rank of the user's entry at `place` (1 = first)."""
    return standing(run, user_pk, place, None, locked=False).ahead_before + 1


def _encode(place: Place | None, user_pk: int) -> str:
    return member(place[0], place[1], user_pk) if place is not None else ""


def change(run: RunKey, places: Iterable[tuple[int, Place | None]]) -> None:
    """Users' new places (None: off the board), in the caller's transaction, after the same
    change in PostgreSQL."""
    count = subboards()
    args: dict[int, list[Any]] = {}
    for user_pk, place in places:
        args.setdefault(subboard(user_pk, count), []).extend([user_pk, _encode(place, user_pk)])
    conn = _redis_for(run) if args else None
    if conn is None:
        # Out of reach: this process moves the epoch once Redis answers again, so the sets
        # missing this change are rebuilt from PostgreSQL.
        return
    try:
        for sub, changes in args.items():
            conn.run(conn.set, run.keys(sub, count), changes)
    except conn.error as exc:
        _failed(conn, exc)


def page(run: RunKey, offset: int, count: int) -> list[str] | None:
    """Members ranked offset + 1 .. offset + count; None: ask PostgreSQL. A split board reads
    the first offset + count members of every sub-board and merges them."""
    conn = _redis_for(run)
    if conn is None or count <= 0:
        return None if conn is None else []
    subs = subboards()
    pages: list[list[str]] = []
    try:
        for sub in range(subs):
            args = [offset, count] if subs == 1 else [0, offset + count]
            found = _ask(conn, run, sub, subs, conn.page, args)
            if found[:1] == ["~not-ready"]:
                return None
            pages.append(list(found))
    except conn.error as exc:
        _failed(conn, exc)
        return None
    if subs == 1:
        return pages[0]
    return list(itertools.islice(heapq.merge(*pages), offset, offset + count))


@dataclass(frozen=True)
class Window:
    """A user's place in a ranking and the members around it: `place` is the user's 0-based
    place (None: not on the board) and `first` the 0-based place of `members[0]`."""

    place: int | None
    first: int
    members: list[str]


def neighbours(run: RunKey, user_pk: int, k: int) -> Window | None:
    """The user's place with the members up to `k` places above and below it, in one call
    (O(log n + k)); None: ask PostgreSQL. A split board asks the user's sub-board, then the
    others for what sorts before the user's member and up to k members either side of it."""
    conn = _redis_for(run)
    if conn is None:
        return None
    subs = subboards()
    own = subboard(user_pk, subs)
    try:
        found = _ask(conn, run, own, subs, conn.neighbours, [user_pk, k])
        if found[:1] == ["~not-ready"]:
            return None
        if not found:
            return Window(None, 0, [])
        place, first, members = int(found[0]), int(found[1]), list(found[2:])
        if subs == 1:
            return Window(place, first, members)
        mine = members[place - first]
        above, below = [members[: place - first]], [members[place - first + 1 :]]
        for sub in range(subs):
            if sub == own:
                continue
            found = _ask(conn, run, sub, subs, conn.around, [mine, k])
            if found[:1] == ["~not-ready"]:
                return None
            shown = int(found[1])
            place += int(found[0])
            above.append(list(found[2 : 2 + shown]))
            below.append(list(found[2 + shown :]))
    except conn.error as exc:
        _failed(conn, exc)
        return None
    before = list(heapq.merge(*above))[-k:] if k > 0 else []
    after = list(itertools.islice(heapq.merge(*below), k))
    return Window(place, place - len(before), [*before, mine, *after])


def _rebuild_or_hand_off(run: RunKey, sub: int = 0) -> bool:
    """Rebuild a missing set (of sub-board `sub`) now when the board is small (True), else in
    the background (False)."""
    small = (
        len(_entries(run).values_list("pk", flat=True)[: INLINE_REBUILD_MAX + 1])
        <= INLINE_REBUILD_MAX
    )
    if small:
        return rebuild(run, subs=[sub])
    background_submit(functools.partial(rebuild, run, subs=[sub]))
    return False


def _entries(run: RunKey) -> Any:
    return LeaderboardEntry.objects.filter(
        leaderboard_id=run.board_pk, run_start=run.run_start, group=run.group
    ).order_by()


@dataclass
class _Build:
    """One sub-board's rebuild under way: its keys, lock token and the names it fills."""

    keys: list[str]
    token: str
    fresh_set: str
    fresh_hash: str
    batch: dict[str, str]


def rebuild(run: RunKey, *, force: bool = False, subs: Iterable[int] | None = None) -> bool:
    """Fill a missing or stale set again from PostgreSQL; whether the set is ready after it
    (False: Redis is out of reach, or another process is rebuilding it). Changes made
    meanwhile are recorded and replayed at the end. A split board: every sub-board (`subs`:
    those), from one read of PostgreSQL; whether all are ready.

    `force`: rebuild a ready set too (the daily job, `leaderboard_ranks_rebuild`), and return
    whether this call did. A ready set takes changes without recording them, so the changes of
    transactions in flight when the rebuild begins would be missing from PostgreSQL's rows:
    the rebuild waits for those transactions to end first."""
    conn = _redis_for(run)
    if conn is None:
        return False
    count = subboards()
    builds: dict[int, _Build] = {}
    done = True
    try:
        for sub in range(count) if subs is None else subs:
            keys = run.keys(sub, count)
            token = uuid.uuid4().hex
            claimed = conn.run(conn.claim, keys, [token, "1" if force else "0", BUILD_LOCK_SECONDS])
            if claimed == 1:
                # Built under names of its own, which expire if this process dies before
                # putting them in place.
                builds[sub] = _Build(keys, token, f"{keys[0]}:{token}", f"{keys[1]}:{token}", {})
            else:
                done = done and claimed == 2
    except conn.error as exc:
        _failed(conn, exc)
        done = False
    if not builds:
        return done
    finished: set[int] = set()
    try:
        if force and not sql.await_writers(WRITERS_WAIT_SECONDS):
            logger.warning("Rebuilding %s while transactions still write: see ranks.py", run)
        # From the primary, even for a lag-tolerant read (apps/core/replicas.py): the set
        # takes every later change on top of what it is filled with.
        with primary_reads():
            rows = _entries(run).values_list("user_id", "value", "reached_at")
            for user_pk, value, reached_at in rows.iterator(chunk_size=REBUILD_CHUNK):
                build = builds.get(subboard(user_pk, count))
                if build is None:
                    continue
                build.batch[str(user_pk)] = member(value, reached_at, user_pk)
                if len(build.batch) >= REBUILD_CHUNK:
                    _load(conn, build)
        for sub, build in builds.items():
            _load(conn, build)
            args = [build.token]
            if conn.run(conn.finish, [*build.keys, build.fresh_set, build.fresh_hash], args):
                finished.add(sub)
    except conn.error as exc:
        _failed(conn, exc)
    finally:
        for sub, build in builds.items():
            if sub not in finished:
                _release(conn, build.keys[3], build.token)
    return done and len(finished) == len(builds)


def _release(conn: _Redis, lock: str, token: str) -> None:
    try:
        if (conn.client.get(lock) or "").split(" ")[0] == token:
            conn.client.delete(lock)
    except conn.error as exc:
        _failed(conn, exc)


def _load(conn: _Redis, build: _Build) -> None:
    if not build.batch:
        return
    pipe = conn.client.pipeline(transaction=False)
    pipe.zadd(build.fresh_set, dict.fromkeys(build.batch.values(), 0))
    pipe.hset(build.fresh_hash, mapping=build.batch)
    pipe.expire(build.fresh_set, BUILD_LOCK_SECONDS)
    pipe.expire(build.fresh_hash, BUILD_LOCK_SECONDS)
    pipe.execute()
    build.batch = {}


def forget_board(board_pk: int) -> None:
    """Drop every set of a board (deleted, or trimmed to fewer participants), and its keys of
    the scheme before hash tags."""
    _forget(f"lb:{{{board_pk}:*", f"lb:{board_pk}:*")


def forget_all() -> None:
    """Drop every key under this installation's prefix."""
    _forget("*")


def _forget(*patterns: str) -> None:
    conn = _redis()
    if conn is None:
        return
    try:
        for pattern in patterns:
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
            conn.bump()
        except conn.error as exc:
            _failed(conn, exc)
