"""Hand-written SQL of the leaderboard step (apps/core/db.py says when): the ORM compiled the
standing aggregate, with its OR-ed conditions, in about ten times the query's own time; and
the page of rankings that GET /leaderboards/{key} reads."""

import datetime as dt
import functools
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import connection

from apps.core.db import Table, column_reader, fetch_one, statement, values_rows
from apps.core.replicas import read_connection
from apps.leaderboards.domain import EXCLUDED_PREFIX, RANK_ORDER
from apps.leaderboards.models import LeaderboardEntry, LeaderboardSnapshot
from apps.users.models import EndUser

_ENTRIES = Table(LeaderboardEntry)


def rank_order(t: Table, *, reverse: bool = False) -> str:
    """domain.RANK_ORDER as an ORDER BY list over `t`'s columns, best first (`reverse`: last
    first)."""
    return ", ".join(
        f"{t[key.field]} {'DESC' if key.descending != reverse else 'ASC'}" for key in RANK_ORDER
    )


def _ahead(t: Table) -> str:
    """domain.RANK_ORDER as the condition "ranked ahead of a place": better on the first key,
    or equal on it and ahead on the rest. Its parameters are those of `_ahead_params`. A NULL
    place (none) has nobody ahead."""
    condition = ""
    for key in reversed(RANK_ORDER):
        better = f"{t[key.field]} {'>' if key.descending else '<'} %s"
        condition = f"({better} OR ({t[key.field]} = %s AND {condition}))" if condition else better
    return condition


def _ahead_params(place: dict[str, object]) -> list[object]:
    """The parameters of `_ahead`: each key's value twice (better, equal), the last once."""
    params: list[object] = []
    for key in RANK_ORDER[:-1]:
        params += [place[key.field], place[key.field]]
    return [*params, place[RANK_ORDER[-1].field]]


# Entries ahead of the user's old and new place, the others' count and lowest value, in
# the user's run and group.
STANDING = """
SELECT count(*) FILTER (WHERE {ahead}), count(*) FILTER (WHERE {ahead}), count(*), min({t[value]})
FROM {t}
WHERE {t[leaderboard]} = %s AND {t[run_start]} = %s AND {t[group]} = %s AND {t[user]} <> %s
"""

# The last-ranked entry other than the user's, removed for a newcomer who beats it; checked
# again once its row lock is had (its owner may have just moved it up).
DISPLACE_LOWEST = """
DELETE FROM {t} WHERE {t[id]} = (
    SELECT {t[id]} FROM {t}
    WHERE {t[leaderboard]} = %s AND {t[run_start]} = %s AND {t[group]} = %s AND {t[user]} <> %s
    ORDER BY {last_first}
    LIMIT 1
) AND {t[value]} < %s
RETURNING {t[user]}
"""

# Every participant's rank and value in each group of a run, as of now, for one day.
SNAPSHOT_RUN = """
INSERT INTO {s} ({s[leaderboard]}, {s[run_start]}, {s[user]}, {s[date]}, {s[rank]}, {s[value]})
SELECT {t[leaderboard]}, {t[run_start]}, {t[user]}, %s,
       row_number() OVER (PARTITION BY {t[group]} ORDER BY {order}), {t[value]}
FROM {t}
WHERE {t[leaderboard]} = %s AND {t[run_start]} = %s AND {t[group]} NOT LIKE %s
ON CONFLICT ({s[leaderboard]}, {s[run_start]}, {s[user]}, {s[date]})
DO UPDATE SET {s[rank]} = excluded.{s[rank]}, {s[value]} = excluded.{s[value]}
"""


# A page of a run's rankings, best first: each entry's user id and name and its value. Written
# with the ORM (a filter, a join, the rank order, a slice) it was compiled again on every read of
# a board, in more time than the query takes.
RANKINGS_PAGE = """
SELECT {u[external_id]}, {u[name]}, {t[value]}
FROM {t} t JOIN {u} u ON {u[id]} = {t[user]}
WHERE {t[leaderboard]} = %s AND {t[run_start]} = %s AND {t[group]} = %s
ORDER BY {order}
LIMIT %s OFFSET %s
"""


@functools.cache
def _statements(vendor: str) -> dict[str, str]:
    t = _ENTRIES
    page = Table(LeaderboardEntry, "t")
    return {
        "page": statement(RANKINGS_PAGE, t=page, u=Table(EndUser, "u"), order=rank_order(page)),
        "standing": statement(STANDING, t=t, ahead=_ahead(t)),
        "displace": statement(DISPLACE_LOWEST, t=t, last_first=rank_order(t, reverse=True)),
        "snapshot": statement(SNAPSHOT_RUN, s=LeaderboardSnapshot, t=t, order=rank_order(t)),
    }


@functools.cache
def _value_reader(vendor: str) -> Callable[[Any], Any]:
    return column_reader(LeaderboardEntry, "value")


def rankings_page(
    board_pk: int, run_start: dt.date, group: str, offset: int, limit: int
) -> list[tuple[str, str | None, Decimal]]:
    """(user id, user name, value) of the entries at places offset + 1 to offset + limit."""
    if limit <= 0:
        return []
    reading = read_connection()  # a replica's in a lag-tolerant read (apps/core/replicas.py)
    with reading.cursor() as cursor:
        cursor.execute(
            _statements(reading.vendor)["page"], [board_pk, run_start, group, limit, offset]
        )
        rows = cursor.fetchall()
    value = _value_reader(reading.vendor)
    return [(external_id, name, value(v)) for external_id, name, v in rows]


Place = tuple[Decimal, dt.datetime]  # (value, reached_at) of an entry


@dataclass(frozen=True)
class Standing:
    """Where an entry stands among the others of its run and group: how many others are ahead
    of its old and of its new place (rank - 1), how many others there are, and the lowest of
    their values."""

    ahead_before: int
    ahead_after: int
    others: int
    lowest_other: Decimal | None
    moved: bool = False  # Redis moved the entry to its new place while answering


def standing(
    board_pk: int,
    run_start: dt.date,
    group: str,
    user_pk: int,
    old: Place | None,
    new: Place | None,
) -> Standing:
    """The standing of a user's entry (left out of the others) at its old and new place: one
    statement instead of a COUNT for each rank and two for the threshold."""
    params: list[object] = []
    for place in (old, new):
        value, reached_at = place if place is not None else (None, None)
        params += _ahead_params({"value": value, "reached_at": reached_at, "user_id": user_pk})
    params += [board_pk, run_start, group, user_pk]
    sql = _statements(connection.vendor)["standing"]
    # The event path reads under the user's lock, in its transaction: the primary's. A
    # lag-tolerant read of a rank may take a replica's (apps/core/replicas.py).
    found = fetch_one(sql, LeaderboardEntry, params, using=read_connection())
    before, after, others, lowest = found or (0, 0, 0, None)
    return Standing(
        int(before), int(after), int(others), None if lowest is None else Decimal(str(lowest))
    )


def entries_move(moves: list[tuple[int, Decimal, dt.datetime]]) -> set[int]:
    """Move the user's entries (pk, value, reached_at) to their new places, in one statement;
    the pks of those still there (an entry displaced by a newcomer since it was read is
    gone)."""
    e = _ENTRIES
    params: list[Any] = []
    for pk, value, reached_at in moves:
        params += [pk, e.prep("value", value), e.prep("reached_at", reached_at)]
    with connection.cursor() as cursor:
        cursor.execute(_move_sql(connection.vendor, len(moves)), params)
        return {int(row[0]) for row in cursor.fetchall()}


@functools.cache
def _move_sql(vendor: str, count: int) -> str:
    e = _ENTRIES
    rows = values_rows(count, [e.type("id"), e.type("value"), e.type("reached_at")])
    return statement(
        # Identifiers from the model, placeholders: values are parameters.
        "UPDATE {t} SET {t[value]} = v.column2, {t[reached_at]} = v.column3 "  # noqa: S608
        f"FROM (VALUES {rows}) v WHERE {{t}}.{{t[id]}} = v.column1 RETURNING {{t}}.{{t[id]}}",
        t=e,
    )


def displace_lowest(
    board_pk: int, run_start: dt.date, group: str, user_pk: int, below: Decimal
) -> int | None:
    """Delete the last-ranked entry other than the user's if its value is below `below`; the
    user id it belonged to, or None when the lowest entry is not below it (any more)."""
    params = [board_pk, run_start, group, user_pk, below]
    row = fetch_one(_statements(connection.vendor)["displace"], LeaderboardEntry, params)
    return int(row[0]) if row else None


def snapshot_run(board_pk: int, run_start: dt.date, day: dt.date) -> int:
    """Write (or rewrite) the day's snapshot of a run; the number of rows written."""
    snapshots = Table(LeaderboardSnapshot)
    # Excluded users' entries (apps/fairplay) have no rank to keep.
    params = [
        snapshots.prep("date", day),
        board_pk,
        _ENTRIES.prep("run_start", run_start),
        EXCLUDED_PREFIX + "%",
    ]
    with connection.cursor() as cursor:
        cursor.execute(_statements(connection.vendor)["snapshot"], params)
        return int(cursor.rowcount)


def await_writers(timeout: float) -> bool:
    """Wait until the transactions writing at this moment (those holding a transaction id:
    each holds the lock of its own) have ended, at most `timeout` seconds; whether they all
    did. SQLite has one writer at a time: ours, when there is one."""
    if connection.vendor != "postgresql":
        return True
    writing = (
        "SELECT transactionid::text FROM pg_locks WHERE locktype = 'transactionid'"
        " AND mode = 'ExclusiveLock' AND pid <> pg_backend_pid()"
    )
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        cursor.execute(writing)
        writers = [row[0] for row in cursor.fetchall()]
        while writers:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
            cursor.execute(f"{writing} AND transactionid::text = ANY(%s)", [writers])
            writers = [row[0] for row in cursor.fetchall()]
    return True


def lock_run(board_pk: int, run_start: dt.date, group: str) -> None:
    """Serialize, until the transaction ends, the newcomers of one run and group whose entry
    could fill the board (two would otherwise both take the last place, or both displace the
    same lowest entry). SQLite serializes every write transaction already."""
    if connection.vendor != "postgresql":
        return
    digest = hashlib.blake2b(f"lb:{board_pk}:{run_start}:{group}".encode(), digest_size=8)
    key = int.from_bytes(digest.digest(), "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def _ahead_of(a: Any, b: Any) -> str:
    """domain.RANK_ORDER as the condition "a's entry is ranked ahead of b's", both rows of a
    statement (`_ahead` compares with parameters instead). The first key is bounded on its own
    as well, so that PostgreSQL walks the rank index from b's place instead of filtering the
    whole run."""
    condition = ""
    for key in reversed(RANK_ORDER):
        better = f"{a[key.field]} {'>' if key.descending else '<'} {b[key.field]}"
        same = f"{a[key.field]} = {b[key.field]}"
        condition = f"({better} OR ({same} AND {condition}))" if condition else better
    first = RANK_ORDER[0]
    bound = f"{a[first.field]} {'>=' if first.descending else '<='} {b[first.field]}"
    return f"{bound} AND {condition}"


class _Mine:
    """The user's entry in the neighbours statement, column by column, each a scalar subquery
    of its `me`: a value PostgreSQL knows before it walks the index, so that the bound on the
    first key of the rank order is a condition of the index scan (a join would filter the
    scanned rows instead)."""

    def __getitem__(self, name: str) -> str:
        column = Table(LeaderboardEntry)[name]
        return f"(SELECT {column} FROM me)"  # noqa: S608 - a column from the model


# The user's place in a run and group with the entries up to k places above and below it: the
# count of those ahead (the rank index, from the user's place up) and two windows of at most k
# entries each side (the rank index, from the user's place out), never a scan of the run. No row
# when the user has no entry. Each row: the count ahead, the side (-1 above, 0 the user, 1
# below), the entry's user id, name and value, best first.
NEIGHBOURS = """
WITH me AS (
    SELECT {t[user]}, {t[value]}, {t[reached_at]} FROM {t} t
    WHERE {t[leaderboard]} = %s AND {t[run_start]} = %s AND {t[group]} = %s AND {t[user]} = %s
), near AS (
    SELECT * FROM (
        SELECT -1 AS side, {e[user]}, {e[value]}, {e[reached_at]} FROM {t} e
        WHERE {e[leaderboard]} = %s AND {e[run_start]} = %s AND {e[group]} = %s AND {e_ahead}
        ORDER BY {last_first} LIMIT %s
    ) above
    UNION ALL
    SELECT 0, {t[user]}, {t[value]}, {t[reached_at]} FROM me t
    UNION ALL
    SELECT * FROM (
        SELECT 1, {e[user]}, {e[value]}, {e[reached_at]} FROM {t} e
        WHERE {e[leaderboard]} = %s AND {e[run_start]} = %s AND {e[group]} = %s AND {me_ahead}
        ORDER BY {best_first} LIMIT %s
    ) below
)
SELECT (
    SELECT count(*) FROM {t} e
    WHERE {e[leaderboard]} = %s AND {e[run_start]} = %s AND {e[group]} = %s AND {e_ahead}
), n.side, {u[external_id]}, {u[name]}, {n[value]}
FROM near n JOIN {u} u ON {u[id]} = {n[user]}
ORDER BY n.side, {n_order}
"""


@functools.cache
def _neighbours_sql(vendor: str) -> str:
    t, e, n = (Table(LeaderboardEntry, alias) for alias in ("t", "e", "n"))
    mine: Any = _Mine()
    return statement(
        NEIGHBOURS,
        t=t,
        e=e,
        n=n,
        u=Table(EndUser, "u"),
        e_ahead=_ahead_of(e, mine),
        me_ahead=_ahead_of(mine, e),
        last_first=rank_order(e, reverse=True),
        best_first=rank_order(e),
        n_order=rank_order(n),
    )


@dataclass(frozen=True)
class Neighbours:
    """A user's place in a run and group (0-based; None: no entry) and the entries around it,
    best first: (user id, user name, value), the first at place `first`."""

    place: int | None
    first: int
    rows: list[tuple[str, str | None, Decimal]]


def neighbours(board_pk: int, run_start: dt.date, group: str, user_pk: int, k: int) -> Neighbours:
    """The user's place with the entries up to `k` places above and below it: one statement."""
    run: list[Any] = [board_pk, run_start, group]
    params = [*run, user_pk, *run, k, *run, k, *run]
    reading = read_connection()  # a replica's in a lag-tolerant read (apps/core/replicas.py)
    with reading.cursor() as cursor:
        cursor.execute(_neighbours_sql(reading.vendor), params)
        rows = cursor.fetchall()
    if not rows:
        return Neighbours(None, 0, [])
    value = _value_reader(reading.vendor)
    place = int(rows[0][0])
    above = sum(1 for row in rows if row[1] < 0)
    return Neighbours(
        place, place - above, [(external_id, name, value(v)) for _, _, external_id, name, v in rows]
    )
