"""Hand-written statements of the league's event path (ARCHITECTURE.md §9): an event of a user
already in this week's cohort costs one statement; joining a cohort is exact under
concurrency because the open cohort's row is the arbiter (its lock orders the joiners, its
`members < capacity` condition is checked again after each wait, and the partial unique
constraint lets one cohort per week and tier be open)."""

import datetime as dt
import functools
import uuid
from dataclasses import dataclass
from decimal import Decimal

from django.db import connection

from apps.core.db import Table, fetch_one
from apps.leagues.models import LeagueCohort, LeagueEntry

# An entry whose results the week-end job has written (`placement`) keeps its score: the job
# locks the entries it finishes, so an event that scored before it committed is counted and one
# that reaches the entry after it (waiting on its lock, then re-reading the row) changes
# nothing, and says so (the entry's placement is returned). A gain of 0 keeps the moment the
# score was reached (ties go to whoever reached it first); the moment before is returned for
# the webhooks' previous rank.
_SCORE = """
UPDATE {t} SET
    {t[score]} = CASE WHEN {t[placement]} IS NULL THEN {t[score]} + %s ELSE {t[score]} END,
    {t[previous_reached_at]} = CASE WHEN {t[placement]} IS NULL
        THEN {t[reached_at]} ELSE {t[previous_reached_at]} END,
    {t[reached_at]} = CASE WHEN {t[placement]} IS NULL
        THEN COALESCE({reached}, {t[reached_at]}) ELSE {t[reached_at]} END
WHERE {t[league]} = %s AND {t[user]} = %s AND {t[week_start]} = %s
RETURNING {t[id]}, {t[cohort]}, {t[tier]}, {t[score]}, {t[reached_at]},
    {t[previous_reached_at]}, {t[placement]}
"""

_SEAT = """
UPDATE {t} SET {t[members]} = {t[members]} + 1, {t[open]} = ({t[members]} + 1 < {t[capacity]})
WHERE {t[league]} = %s AND {t[week_start]} = %s AND {t[tier]} = %s AND {t[open]}
RETURNING {t[id]}, {t[public_id]}
"""

# No conflict target: a joiner who opens a cohort at the same moment as another meets either
# the one-open-cohort constraint or, when both took the same next number, the number's; in
# both cases it inserts nothing and takes a seat in the other's cohort (or opens the next).
_OPEN = """
INSERT INTO {t} ({t[public_id]}, {t[league]}, {t[week_start]}, {t[week_end]}, {t[tier]},
    {t[number]}, {t[capacity]}, {t[members]}, {t[open]})
SELECT %s, %s, %s, %s, %s, COALESCE(MAX({t[number]}), 0) + 1, %s, 1, TRUE FROM {t}
WHERE {t[league]} = %s AND {t[week_start]} = %s AND {t[tier]} = %s
ON CONFLICT DO NOTHING
RETURNING {t[id]}, {t[public_id]}
"""


@dataclass(frozen=True)
class Scored:
    entry_pk: int
    cohort_pk: int
    tier: int
    score: Decimal
    reached_at: dt.datetime
    previous_reached_at: dt.datetime
    finished: bool  # the week-end job had written the entry's result: nothing was added


def entry_score(
    *,
    league_pk: int,
    user_pk: int,
    week_start: dt.datetime,
    gain: Decimal,
    now: dt.datetime,
) -> Scored | None:
    """Add `gain` to the user's entry of this week (unless its week is finished: `finished`),
    or None when they have none yet. One statement on both databases."""
    params = [gain, now if gain else None, league_pk, user_pk, week_start]
    row = fetch_one(_score_template(connection.vendor), LeagueEntry, params)
    if row is None:
        return None
    reached, previous = (_moment(v) for v in row[4:6])
    finished = row[6] is not None
    return Scored(
        int(row[0]), int(row[1]), int(row[2]), Decimal(row[3]), reached, previous, finished
    )


@functools.cache
def _score_template(vendor: str) -> str:
    """_SCORE with the new moment's parameter typed on PostgreSQL (None keeps the old one; a
    bare NULL has no type there). Tables and columns are filled in by fetch_one."""
    if vendor == "postgresql":
        reached = f"CAST(%s AS {Table(LeagueEntry).type('reached_at')})"
    else:
        reached = "%s"
    return _SCORE.replace("{reached}", reached)


def _moment(value: object) -> dt.datetime:
    # SQLite hands a raw statement's timestamp back as its stored text, in UTC.
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC)
    assert isinstance(value, dt.datetime)  # noqa: S101 - PostgreSQL's timestamptz
    return value


def cohort_seat(*, league_pk: int, week_start: dt.datetime, tier: int) -> tuple[int, str] | None:
    """A place in the open cohort of the week and tier, (pk, public id), or None when none is
    open. Filling the last place closes it."""
    row = fetch_one(_SEAT, LeagueCohort, [league_pk, week_start, tier])
    return (int(row[0]), str(uuid.UUID(str(row[1])))) if row else None


def cohort_open(
    *,
    league_pk: int,
    week_start: dt.datetime,
    week_end: dt.datetime,
    tier: int,
    capacity: int,
) -> tuple[int, str] | None:
    """A new open cohort with the caller as its first member, or None when another joiner
    opened one first (the caller then takes a seat in it, or opens the next)."""
    public_id = Table(LeagueCohort).prep("public_id", uuid.uuid4())
    params = [
        public_id,
        league_pk,
        week_start,
        week_end,
        tier,
        capacity,
        league_pk,
        week_start,
        tier,
    ]
    row = fetch_one(_OPEN, LeagueCohort, params)
    return (int(row[0]), str(uuid.UUID(str(row[1])))) if row else None
