"""Hand-written statements of the league's event path (ARCHITECTURE.md §9): an event of a user
already in this week's cohort costs one statement; joining a cohort is exact under
concurrency because the open cohort's row is the arbiter (its lock orders the joiners, its
`members < capacity` condition is checked again after each wait, and the partial unique
constraint lets one cohort per week and tier be open)."""

import datetime as dt
import uuid
from decimal import Decimal

from django.db import connection

from apps.core.db import Table, fetch_one
from apps.leagues.models import LeagueCohort, LeagueEntry

# The week must still be running when the statement runs, by the database's clock on
# PostgreSQL (`clock_timestamp()`, not the transaction's start): an event that reaches its
# entry after the week's end does not count, so the week-end job, which locks the entries it
# finishes, sees every score that ever will be.
_SCORE = """
UPDATE {t} SET {t[score]} = {t[score]} + %s, {t[reached_at]} = %s
WHERE {t[league]} = %s AND {t[user]} = %s AND {t[week_start]} = %s AND %s > {clock}
RETURNING {t[id]}, {t[cohort]}, {t[tier]}, {t[score]}
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


def entry_score(
    *,
    league_pk: int,
    user_pk: int,
    week_start: dt.datetime,
    week_end: dt.datetime,
    gain: Decimal,
    now: dt.datetime,
) -> tuple[int, int, int, Decimal] | None:
    """Add `gain` to the user's entry of this week: (entry pk, cohort pk, tier, score), or
    None when they have none yet (or the week has ended meanwhile)."""
    postgres = connection.vendor == "postgresql"
    clock = "clock_timestamp()" if postgres else "%s"
    params: list[object] = [gain, now, league_pk, user_pk, week_start, week_end]
    if not postgres:
        params.append(now)  # SQLite serialises writers: the event's moment is the clock
    row = fetch_one(_SCORE.replace("{clock}", clock), LeagueEntry, params)
    if row is None:
        return None
    return int(row[0]), int(row[1]), int(row[2]), Decimal(row[3])


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
