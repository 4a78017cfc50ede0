"""Hand-written SQL of the leaderboard step (apps/core/db.py says when): the ORM compiled the
standing aggregate, with its OR-ed conditions, in about ten times the query's own time."""

import datetime as dt
import hashlib
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import connection

from apps.core.db import fetch_one, values_rows
from apps.leaderboards.models import LeaderboardEntry, LeaderboardSnapshot

# Entries ahead of a place (value, reached_at, user): a higher value, the same value reached
# earlier, or reached at the same moment by a lower user id: ranks are 1..n without ties. A
# NULL place (none) has nobody ahead, so its count is 0.
STANDING = """
SELECT count(*) FILTER (WHERE value > %s OR (value = %s AND
           (reached_at < %s OR (reached_at = %s AND user_id < %s)))),
       count(*) FILTER (WHERE value > %s OR (value = %s AND
           (reached_at < %s OR (reached_at = %s AND user_id < %s)))),
       count(*),
       min(value)
FROM {t}
WHERE leaderboard_id = %s AND run_start = %s AND "group" = %s AND user_id <> %s
"""

# The last-ranked entry other than the user's, removed for a newcomer who beats it; checked
# again once its row lock is had (its owner may have just moved it up).
DISPLACE_LOWEST = """
DELETE FROM {t} WHERE id = (
    SELECT id FROM {t}
    WHERE leaderboard_id = %s AND run_start = %s AND "group" = %s AND user_id <> %s
    ORDER BY value, reached_at DESC, user_id DESC
    LIMIT 1
) AND value < %s
RETURNING user_id
"""

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
        params += [value, value, reached_at, reached_at, user_pk]
    params += [board_pk, run_start, group, user_pk]
    before, after, others, lowest = fetch_one(STANDING, LeaderboardEntry, params) or (0, 0, 0, None)
    return Standing(
        int(before), int(after), int(others), None if lowest is None else Decimal(str(lowest))
    )


def entries_move(moves: list[tuple[int, Decimal, dt.datetime]]) -> set[int]:
    """Move the user's entries (pk, value, reached_at) to their new places, in one statement;
    the pks of those still there (an entry displaced by a newcomer since it was read is
    gone)."""
    t = _entries_table()
    rows = values_rows(len(moves), ["bigint", "numeric", "timestamptz"])
    sql = (
        f"UPDATE {t} SET value = v.column2, reached_at = v.column3 "  # noqa: S608
        f"FROM (VALUES {rows}) v WHERE {t}.id = v.column1 RETURNING {t}.id"
    )
    ops = connection.ops
    params: list[Any] = []
    for pk, value, reached_at in moves:
        params += [
            pk,
            ops.adapt_decimalfield_value(value, 24, 6),
            ops.adapt_datetimefield_value(reached_at),
        ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {int(row[0]) for row in cursor.fetchall()}


def displace_lowest(
    board_pk: int, run_start: dt.date, group: str, user_pk: int, below: Decimal
) -> int | None:
    """Delete the last-ranked entry other than the user's if its value is below `below`; the
    user id it belonged to, or None when the lowest entry is not below it (any more)."""
    params = [board_pk, run_start, group, user_pk, below]
    row = fetch_one(DISPLACE_LOWEST, LeaderboardEntry, params)
    return int(row[0]) if row else None


# Every participant's rank and value in each group of a run, as of now, for one day.
SNAPSHOT_RUN = """
INSERT INTO {snapshots} (leaderboard_id, run_start, user_id, date, rank, value)
SELECT leaderboard_id, run_start, user_id, %s, row_number() OVER (
           PARTITION BY "group" ORDER BY value DESC, reached_at, user_id),
       value
FROM {t}
WHERE leaderboard_id = %s AND run_start = %s
ON CONFLICT (leaderboard_id, run_start, user_id, date)
DO UPDATE SET rank = excluded.rank, value = excluded.value
"""


def snapshot_run(board_pk: int, run_start: dt.date, day: dt.date) -> int:
    """Write (or rewrite) the day's snapshot of a run; the number of rows written."""
    table = connection.ops.quote_name(LeaderboardSnapshot._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            SNAPSHOT_RUN.format(snapshots=table, t=_entries_table()),
            [
                connection.ops.adapt_datefield_value(day),
                board_pk,
                connection.ops.adapt_datefield_value(run_start),
            ],
        )
        return int(cursor.rowcount)


def _entries_table() -> str:
    return str(connection.ops.quote_name(LeaderboardEntry._meta.db_table))


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
