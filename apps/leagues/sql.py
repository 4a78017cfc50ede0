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

# The week must still be running when the statement runs, by the database's clock on
# PostgreSQL (`clock_timestamp()`, not the transaction's start): an event that reaches its
# entry after the week's end does not count, so the week-end job, which locks the entries it
# finishes, sees every score that ever will be. A gain of 0 keeps the moment the score was
# reached (ties go to whoever reached it first); the moment before is returned for the
# webhooks' previous rank.
_SCORE = """
WITH previous AS (
    SELECT {t[id]} AS entry_id, {t[reached_at]} AS previous_reached_at FROM {t}
    WHERE {t[league]} = %s AND {t[user]} = %s AND {t[week_start]} = %s FOR UPDATE
)
UPDATE {t} SET {t[score]} = {t[score]} + %s,
    {t[reached_at]} = COALESCE(CAST(%s AS {reached_type}), {t[reached_at]})
FROM previous WHERE {t[id]} = previous.entry_id AND %s > clock_timestamp()
RETURNING {t[id]}, {t[cohort]}, {t[tier]}, {t[score]}, {t[reached_at]},
    previous.previous_reached_at
"""

# SQLite's RETURNING cannot name the FROM's tables: the moment before is read first (its
# writers are serialised, so nothing comes between the two statements).
_PREVIOUS_SQLITE = """
SELECT {t[reached_at]} FROM {t}
WHERE {t[league]} = %s AND {t[user]} = %s AND {t[week_start]} = %s
"""
_SCORE_SQLITE = """
UPDATE {t} SET {t[score]} = {t[score]} + %s, {t[reached_at]} = COALESCE(%s, {t[reached_at]})
WHERE {t[league]} = %s AND {t[user]} = %s AND {t[week_start]} = %s AND %s > %s
RETURNING {t[id]}, {t[cohort]}, {t[tier]}, {t[score]}, {t[reached_at]}
"""

_SEAT = """
UPDATE {t} SET {t[members]} = {t[members]} + 1, {t[open]} = ({t[members]} + 1 < {t[capacity]})
WHERE {t[league]} = %s AND {t[week_start]} = %s AND {t[tier]} = %s AND {t[open]}
RETURNING {t[id]}, {t[public_id]}
"""

_OPEN = """
INSERT INTO {t} ({t[public_id]}, {t[league]}, {t[week_start]}, {t[week_end]}, {t[tier]},
    {t[number]}, {t[capacity]}, {t[members]}, {t[open]})
SELECT %s, %s, %s, %s, %s, COALESCE(MAX({t[number]}), 0) + 1, %s, 1, TRUE FROM {t}
WHERE {t[league]} = %s AND {t[week_start]} = %s AND {t[tier]} = %s
ON CONFLICT ({t[league]}, {t[week_start]}, {t[tier]}) WHERE {t[open]} DO NOTHING
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


def entry_score(
    *,
    league_pk: int,
    user_pk: int,
    week_start: dt.datetime,
    week_end: dt.datetime,
    gain: Decimal,
    now: dt.datetime,
) -> Scored | None:
    """Add `gain` to the user's entry of this week, or None when they have none yet (or the
    week has ended meanwhile)."""
    reached_now = now if gain else None
    if connection.vendor == "postgresql":
        params: list[object] = [league_pk, user_pk, week_start, gain, reached_now, week_end]
        row = fetch_one(_score_template(), LeagueEntry, params)
    else:
        before = fetch_one(_PREVIOUS_SQLITE, LeagueEntry, [league_pk, user_pk, week_start])
        # The event's moment stands for the clock: SQLite serialises its writers.
        params = [gain, reached_now, league_pk, user_pk, week_start, week_end, now]
        found = fetch_one(_SCORE_SQLITE, LeagueEntry, params) if before else None
        row = (*found, before[0]) if found and before else None
    if row is None:
        return None
    reached, previous = (_moment(v) for v in row[4:6])
    return Scored(int(row[0]), int(row[1]), int(row[2]), Decimal(row[3]), reached, previous)


@functools.cache
def _score_template() -> str:
    """_SCORE with PostgreSQL's type (the tables and columns are filled in by fetch_one)."""
    return _SCORE.replace("{reached_type}", Table(LeagueEntry).type("reached_at"))


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
    opened one first (the caller then takes a seat in it)."""
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
