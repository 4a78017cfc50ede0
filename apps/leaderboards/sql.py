"""Hand-written SQL of the leaderboard step (apps/core/db.py says when): the ORM compiled the
standing aggregate, with its OR-ed conditions, in about ten times the query's own time."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from apps.core.db import fetch_one
from apps.leaderboards.models import LeaderboardEntry

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
WHERE leaderboard_id = %s AND run_start = %s AND "group" = %s AND id <> %s
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


def standing(
    board_pk: int,
    run_start: dt.date,
    group: str,
    entry_pk: int | None,
    user_pk: int,
    old: Place | None,
    new: Place | None,
) -> Standing:
    """The standing of a user's entry (`entry_pk`, left out of the others) at its old and new
    place: one statement instead of a COUNT for each rank and two for the threshold."""
    params: list[object] = []
    for place in (old, new):
        value, reached_at = place if place is not None else (None, None)
        params += [value, value, reached_at, reached_at, user_pk]
    params += [board_pk, run_start, group, entry_pk if entry_pk is not None else 0]
    before, after, others, lowest = fetch_one(STANDING, LeaderboardEntry, params) or (0, 0, 0, None)
    return Standing(
        int(before), int(after), int(others), None if lowest is None else Decimal(str(lowest))
    )
