"""Reads that may lag go to a streaming replica of the cell (issue 32; docs/architecture.md §8,
README "More than one machine").

The rule. A read goes to a replica of the current cell (`current_cell()`, apps/core/cells.py)
only when all of these hold, and to the cell's primary otherwise:

1. it runs inside a scope that declares that the read tolerates a short lag (`lag_tolerant()`:
   GET requests of the application API, the analytics and impact routes of the admin API, the
   dashboard's analytics page and the lists of recorded state); everything outside one reads
   the primary, and `primary_reads()` makes a read inside one current again (what fills a
   cache: the configuration snapshots, the rank sets);
2. the request or task has written nothing so far: a write through the ORM (the router's
   `db_for_write`), or any statement but a read sent to the primary inside the scope (the
   hand-written statements), sends its later reads to the primary;
3. it is not inside a transaction on the primary (`transaction.atomic`, and so every
   `select_for_update`): what a transaction reads it may write back;
4. the scope does not concern an end-user written in the last DATABASE_REPLICA_STICKY_SECONDS
   (`user_read`: the user of the route's path or of its `userId`), nor a dashboard session
   that wrote in that window (`staff_read`): whoever just wrote reads what they wrote. A write
   marks its user where the user's row is locked or created (`users_written`), and again when
   the request or task ends (`work_ends`, after its commits), in the cache of REDIS_URL, which
   every process shares;
5. the replica is healthy: it answers, and replays the primary's changes at most
   DATABASE_REPLICA_MAX_LAG_SECONDS behind (`pg_last_xact_replay_timestamp()`, asked at most
   once a second per process and replica). A replica that does not answer or lags more is
   skipped, and each change of its state is logged once, not once per request.

A scope keeps the replica it first read from, so that its reads never go back in time. The
hand-written statements of the lag-tolerant reads take their connection from `read_connection()`
(the same choice, for a cursor).

The stickiness window must cover the lag a replica may have and still be read
(MAX_LAG + the second between two checks <= STICKY, checked by the settings).
"""

import functools
import hashlib
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

from apps.core.cells import current_cell, replicas_of

logger = logging.getLogger("gamify.replicas")

# How long a replica's last check holds: a healthy one is asked again after a second (its lag
# moves), one that failed after a few (a dead host may cost a connect timeout each time).
CHECK_SECONDS = 1.0
DEAD_CHECK_SECONDS = 5.0

# The replica's lag in seconds: 0 when it has replayed all it received (an idle primary writes
# nothing, so the last replayed commit grows old without any lag), or when it is no replica at
# all (a test mirror, a promoted server).
LAG_SQL = (
    "SELECT CASE WHEN NOT pg_is_in_recovery() THEN 0"
    " WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0"
    " ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END"
)


@dataclass
class _Scope:
    pinned: bool = False  # its reads go to the primary from now on
    replica: str | None = None  # the replica it reads from, once chosen


_scope: ContextVar[_Scope | None] = ContextVar("gamify_replica_scope", default=None)
_wrote: ContextVar[bool] = ContextVar("gamify_wrote", default=False)


def work_begins() -> None:
    """A request or task begins: nothing written yet (rule 2). Called by the middleware and
    when a Celery task starts."""
    _wrote.set(False)
    _pending.set(set())


def task_begins(**_: Any) -> None:
    """Celery's task_prerun: a task begins (apps/core/apps.py connects it)."""
    work_begins()


def task_ends(**_: Any) -> None:
    """Celery's task_postrun."""
    work_ends()


def has_written() -> bool:
    return _wrote.get()


@contextmanager
def lag_tolerant() -> Iterator[None]:
    """Reads inside may go to a replica, under the module's rule. Nested, the scopes are one
    (a pin holds for the whole); inside `primary_reads()`, reads stay on the primary."""
    outer = _scope.get()
    if outer is not None:
        yield
        return
    token = _scope.set(_Scope())
    try:
        with connections[current_cell()].execute_wrapper(_watch):
            yield
    finally:
        _scope.reset(token)


@contextmanager
def primary_reads() -> Iterator[None]:
    """Reads inside go to the primary, even inside a lag-tolerant scope: what a read fills a
    cache with (a configuration snapshot, a rank set) must be current."""
    token = _scope.set(_Scope(pinned=True))
    try:
        yield
    finally:
        _scope.reset(token)


_WRITES = re.compile(r"\b(?:INSERT|UPDATE|DELETE|MERGE)\b", re.IGNORECASE)
# Reads, and the control of transactions (SQLite's BEGIN is a statement): the writes inside a
# transaction are statements of their own.
_NOT_WRITES = ("SELECT", "BEGIN", "SAVEPOINT", "RELEASE", "ROLLBACK", "COMMIT", "SHOW")


def _watch(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
    # A statement on the primary inside a scope that is not a plain read: a write the router
    # may not have seen, such as a hand-written one (rule 2).
    head = sql.lstrip()[:9].upper()
    if not head.startswith(_NOT_WRITES) and (not head.startswith("WITH") or _WRITES.search(sql)):
        _wrote.set(True)
    return execute(sql, params, many, context)


def read_alias() -> str:
    """The database alias a read made now goes to (the module's rule)."""
    cell = current_cell()
    scope = _scope.get()
    if scope is None or scope.pinned or _wrote.get():
        return cell
    if scope.replica is not None:
        if _health.usable(scope.replica):
            return scope.replica
        scope.pinned = True  # from the primary on: another replica might be further behind
        return cell
    replicas = replicas_of(cell)
    if not replicas or connections[cell].in_atomic_block:
        return cell
    usable = [alias for alias in replicas if _health.usable(alias)]
    if not usable:
        return cell
    # Spread over the healthy replicas; the scope keeps its choice (monotonic reads).
    scope.replica = usable[0] if len(usable) == 1 else random.choice(usable)  # noqa: S311 - load spreading, not secrecy
    return scope.replica


def read_connection() -> BaseDatabaseWrapper:
    """The connection for a hand-written read (`connection.cursor()` would always be the
    primary's): the replica's when the read may lag, else the cell's primary."""
    return connections[read_alias()]


class ReplicaRouter:
    """Django's database router (settings.DATABASE_ROUTERS): reads by `read_alias`, writes to
    the current cell's primary, always (an instance read from a replica is saved to the
    primary), and no migrations on a replica."""

    def db_for_read(self, model: Any, **hints: Any) -> str | None:
        alias = read_alias()
        if alias == current_cell():
            # The primary: Django's own choice, which follows a related object's database
            # (a row read `.using()` another cell reads its relations there), else "default".
            return None
        instance = hints.get("instance")
        if instance is not None and _primary_of(instance._state.db) not in (
            DEFAULT_DB_ALIAS,
            current_cell(),
        ):
            return None  # a row of another database: its relations are there
        return alias

    def db_for_write(self, model: Any, **hints: Any) -> str | None:
        _wrote.set(True)
        instance = hints.get("instance")
        if instance is not None and _primary_of(instance._state.db) != instance._state.db:
            return current_cell()  # a row read from a replica is saved to its primary
        return None  # the primary: the instance's database, else "default" (the current cell's)

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        # A row read from a replica and one from its primary are the same database's rows.
        first, second = _primary_of(obj1._state.db), _primary_of(obj2._state.db)
        return first == second if first and second else None

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        return False if _primary_of(db) != db else None


def _primary_of(alias: str | None) -> str | None:
    if alias is None:
        return None
    for cell, replicas in getattr(settings, "DATABASE_REPLICAS", {}).items():
        if alias in replicas:
            return str(cell)
    return alias


# --- replica health (rule 5) -----------------------------------------------------------------


@dataclass
class _State:
    state: str = "ok"  # "ok", "lagging" or "down"
    checked: float = float("-inf")
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Health:
    """Each replica's last known state in this process, asked again when it is older than
    CHECK_SECONDS (DEAD_CHECK_SECONDS once down)."""

    def __init__(self) -> None:
        self.states: dict[str, _State] = {}

    def usable(self, alias: str) -> bool:
        known = self.states.get(alias)
        if known is None:
            known = self.states.setdefault(alias, _State())
        wait = DEAD_CHECK_SECONDS if known.state == "down" else CHECK_SECONDS
        if time.monotonic() - known.checked >= wait and known.lock.acquire(blocking=False):
            # One thread asks; the others go by the last answer meanwhile.
            try:
                state, detail = _probe(alias)
                known.checked = time.monotonic()
                if state != known.state:
                    _log_change(alias, known.state, state, detail)
                    known.state = state
            finally:
                known.lock.release()
        return known.state == "ok"

    def reset(self) -> None:
        self.states.clear()


_health = _Health()


def replica_state(alias: str) -> str:
    """ "ok", "lagging" or "down": what this process last found (for tests and health pages)."""
    known = _health.states.get(alias)
    return known.state if known is not None else "ok"


def health_reset() -> None:
    """Forget what this process knows of the replicas (tests)."""
    _health.reset()


def replica_lag(alias: str) -> float:
    """Seconds the replica `alias` replays behind its primary (0 on SQLite, the test mirror)."""
    conn = connections[alias]
    with conn.cursor() as cursor:
        if conn.vendor != "postgresql":
            cursor.execute("SELECT 1")
            return 0.0
        cursor.execute(LAG_SQL)
        row = cursor.fetchone()
    return float(row[0] or 0) if row else 0.0


def _probe(alias: str) -> tuple[str, str]:
    try:
        lag = replica_lag(alias)
    except DatabaseError as exc:
        # Dropped, so that the next check connects again rather than reuse a broken one.
        try:
            connections[alias].close()
        except DatabaseError:
            logger.debug("closing %s failed", alias)
        return "down", str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if lag > settings.DATABASE_REPLICA_MAX_LAG_SECONDS:
        return "lagging", f"{lag:.1f} s behind"
    return "ok", f"{lag:.1f} s behind"


def _log_change(alias: str, before: str, after: str, detail: str) -> None:
    if after == "ok":
        logger.warning("replica %s is usable again (%s): lag-tolerant reads use it", alias, detail)
    elif after == "down":
        logger.warning(
            "replica %s does not answer (%s): its reads go to the primary", alias, detail
        )
    else:
        max_lag = settings.DATABASE_REPLICA_MAX_LAG_SECONDS
        logger.warning(
            "replica %s lags beyond %s s (%s): its reads go to the primary", alias, max_lag, detail
        )


# --- who was just written (rule 4) -----------------------------------------------------------


def _key(kind: str, *parts: object) -> str:
    # Customers' ids may hold any character and be long: the cache key holds a digest.
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=16).hexdigest()
    return f"gamify:written:{kind}:{digest}"


def _replicated(cell: str) -> bool:
    return bool(replicas_of(cell))


def users_written(tenant_pk: int, external_ids: Iterable[str]) -> None:
    """These users of the tenant are being written: reads that concern them go to the primary
    for DATABASE_REPLICA_STICKY_SECONDS from now on, and again from the end of the request or
    task (`work_ends`), after its commits. Nothing without replicas."""
    if _replicated(current_cell()):
        _mark([_key("user", tenant_pk, external_id) for external_id in external_ids])


def staff_wrote(staff_pk: int) -> None:
    """A dashboard session wrote: its next pages read the primary for the window."""
    if _replicated(current_cell()):
        _mark([_key("staff", staff_pk)])


def work_ends() -> None:
    """A request or task ends, its transactions committed: the users it wrote are marked again,
    so that the window runs from their commit (a long transaction, a batch, would otherwise
    eat into it). Called by the middleware and when a Celery task ends. Not with on_commit:
    the window must not depend on which transaction wrote, and a hook per user would be one
    per event."""
    pending = _pending.get()
    _pending.set(None)
    if pending:
        _mark(list(pending), again=False)


_pending: ContextVar[set[str] | None] = ContextVar("gamify_marked", default=None)
_mark_failed_at: float | None = None


def _mark(keys: list[str], *, again: bool = True) -> None:
    global _mark_failed_at
    if not keys:
        return
    if again and (pending := _pending.get()) is not None:
        pending.update(keys)
    try:
        cache.set_many(dict.fromkeys(keys, 1), timeout=settings.DATABASE_REPLICA_STICKY_SECONDS)
    except redis.RedisError as exc:
        # Readers cannot reach the cache either: they read the primary (`_written`).
        if _mark_failed_at is None or time.monotonic() - _mark_failed_at > 60:
            logger.warning("could not record recent writes (%s): reads go to the primary", exc)
        _mark_failed_at = time.monotonic()


def _written(key: str) -> bool:
    try:
        return cache.get(key) is not None
    except redis.RedisError:
        return True  # cannot tell: the primary is always right


def user_read(tenant_pk: int, external_id: str) -> None:
    """The running lag-tolerant scope reads the user `external_id` of the tenant: when the user
    was written within the window, the scope's reads go to the primary from now on."""
    scope = _scope.get()
    if scope is None or scope.pinned or not _replicated(current_cell()):
        return
    if _written(_key("user", tenant_pk, external_id)):
        scope.pinned = True


def staff_read(staff_pk: int) -> None:
    """The running lag-tolerant scope serves a dashboard page to this staff member: when their
    session wrote within the window, the scope reads the primary."""
    scope = _scope.get()
    if scope is None or scope.pinned or not _replicated(current_cell()):
        return
    if _written(_key("staff", staff_pk)):
        scope.pinned = True


def lag_tolerant_page(view: Callable[..., Any]) -> Callable[..., Any]:
    """A dashboard view whose GET may read a replica: unless the staff member's session wrote
    within the window (`staff_read`). Its other methods read the primary."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        request = next(a for a in args if hasattr(a, "method") and hasattr(a, "META"))
        if request.method not in ("GET", "HEAD"):
            return view(*args, **kwargs)
        with lag_tolerant():
            staff = getattr(request, "user", None)
            if staff is not None and staff.is_authenticated:
                staff_read(staff.pk)
            return view(*args, **kwargs)

    return wrapped
