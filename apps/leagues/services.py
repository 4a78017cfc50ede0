"""League writes: what an event adds to a user's week (the pipeline's leagues step, which
joins the user to a cohort with their first qualifying event of the week), and the week-end
job's results. The rewards those results earn are paid by apps/pipeline/leagues.py, which knows
points and achievements as the other jobs do."""

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.core.db import insert, update_many
from apps.leagues import domain, sql
from apps.leagues.choices import ScoreBy
from apps.leagues.models import League, LeagueCohort, LeagueEntry
from apps.leagues.selectors import LeagueDef, league_def, leagues_active, tier_upcoming
from apps.users.domain import attributes_match
from apps.users.models import EndUser

# Cohorts finished per transaction by the week-end job (at most 100 members each).
FINISH_CHUNK = 200


@dataclass(frozen=True)
class LeagueMove:
    """What an event did in one league: the user's entry after it, and before it (the score
    and the moment it was reached; None for the event that joined them)."""

    league: LeagueDef
    week: domain.Week
    entry_pk: int
    cohort_pk: int
    tier: int
    score: Decimal
    reached_at: dt.datetime
    previous: tuple[Decimal, dt.datetime] | None

    @property
    def joined(self) -> bool:
        """This event joined the user to this week's league."""
        return self.previous is None


def leagues_apply_event(
    tenant: Tenant,
    user: EndUser,
    *,
    now: dt.datetime,
    metric_pk: int | None = None,
    value: Decimal | None = None,
    points_added: Mapping[int, int] | None = None,
    join: bool = True,
) -> list[LeagueMove]:
    """Add what the event gained to the user's week in each active league it scores in, for a
    user whose lock the caller holds. One statement per league for a user already in; the
    first qualifying event of a week joins them (a few more, once a week). `join`: False to
    change only a week the user is in already (undoing events takes back, never joins)."""
    moves = []
    for league in leagues_active(tenant):
        gain = _gain(league, metric_pk, value, points_added or {})
        if gain is None or not attributes_match(league.user_filters, user.attributes):
            continue
        week = league.week(now)
        scored = sql.entry_score(
            league_pk=league.pk, user_pk=user.pk, week_start=week.start, gain=gain, now=now
        )
        if scored is None:
            # A week that has ended by the time its event is applied (a batch applied late)
            # takes no one in: its cohorts may already be finished.
            if join and timezone.now() < week.end:
                moves.append(_join(league, user, week, gain, now))
        elif not scored.finished:  # a finished week is left as it is
            previous = (scored.score - gain, scored.previous_reached_at)
            moves.append(
                LeagueMove(
                    league,
                    week,
                    scored.entry_pk,
                    scored.cohort_pk,
                    scored.tier,
                    scored.score,
                    scored.reached_at,
                    previous,
                )
            )
    return moves


def _gain(
    league: LeagueDef, metric_pk: int | None, value: Decimal | None, points: Mapping[int, int]
) -> Decimal | None:
    """What the event adds to the league's score, or None when it does not qualify: any event
    of a metric league's metric (0 too), any points of a points league's system."""
    if league.score_by == ScoreBy.METRIC:
        return value if metric_pk == league.metric_pk and value is not None else None
    added = points.get(league.system_pk or 0)
    return Decimal(added) if added else None


def _join(
    league: LeagueDef, user: EndUser, week: domain.Week, gain: Decimal, now: dt.datetime
) -> LeagueMove:
    """The user's first qualifying event of the week: a place in the open cohort of their tier,
    or a new cohort when it is full. The user's lock orders their own joins (never two
    entries in a week: the unique constraint), the open cohort's row lock everyone's."""
    tier = tier_upcoming(league, user.pk, week, lock=True)
    seat = sql.cohort_seat(league_pk=league.pk, week_start=week.start, tier=tier)
    while seat is None:
        seat = sql.cohort_open(
            league_pk=league.pk,
            week_start=week.start,
            week_end=week.end,
            tier=tier,
            capacity=league.cohort_size,
        ) or sql.cohort_seat(league_pk=league.pk, week_start=week.start, tier=tier)
    cohort_pk, _ = seat
    entry = LeagueEntry(
        cohort_id=cohort_pk,
        league_id=league.pk,
        week_start=week.start,
        user_id=user.pk,
        tier=tier,
        score=gain,
        reached_at=now,
        joined_at=now,
    )
    insert(entry)
    return LeagueMove(league, week, entry.pk, cohort_pk, tier, gain, now, previous=None)


# --- the week's end ---------------------------------------------------------------------------


Finished = Callable[[Tenant, LeagueDef, LeagueCohort, list[LeagueEntry]], None]


def cohorts_finish(
    now: dt.datetime, *, chunk: int = FINISH_CHUNK, react: Finished | None = None
) -> int:
    """Write the results of every cohort whose week has ended, `chunk` cohorts a transaction
    (a finished cohort is never taken again; two runs at once take different cohorts), and
    hand each cohort's results to `react` in that transaction. Returns how many were
    finished."""
    done = 0
    while True:
        with transaction.atomic():
            finished = _finish_chunk(now, chunk, react)
        done += finished
        if finished < chunk:
            return done


def _finish_chunk(now: dt.datetime, chunk: int, react: Finished | None) -> int:
    cohorts = list(
        LeagueCohort.objects.filter(finished_at__isnull=True, week_end__lte=now)
        .select_for_update(skip_locked=True, of=("self",))
        .order_by("week_end", "pk")[:chunk]
    )
    if not cohorts:
        return 0
    rows = {
        lg.pk: lg
        for lg in League.objects.filter(pk__in={c.league_id for c in cohorts}).select_related(
            "tenant"
        )
    }
    # Each league's definition once a chunk (its participation filters are resolved by a
    # query), not once a cohort.
    definitions = {pk: league_def(lg.tenant, lg) for pk, lg in rows.items()}
    members: dict[int, list[LeagueEntry]] = defaultdict(list)
    # Locked: an event that scored just before the week's end has committed when this returns.
    entries = LeagueEntry.objects.filter(cohort__in=cohorts).select_for_update(of=("self",))
    excluded: list[LeagueEntry] = []
    for entry in entries.annotate(excluded_at=F("user__excluded_at")).order_by("pk"):
        # A user excluded from the rankings (apps/fairplay) gets no result: no placement,
        # zone or rewards, the same tier next week; the others are ranked without them.
        if getattr(entry, "excluded_at", None) is None:
            members[entry.cohort_id].append(entry)
        else:
            entry.next_tier = entry.tier
            excluded.append(entry)
    changed: list[LeagueEntry] = excluded
    for cohort in cohorts:
        changed += _results_apply(definitions[cohort.league_id], cohort, members[cohort.pk])
    _results_write(changed)
    LeagueCohort.objects.filter(pk__in=[c.pk for c in cohorts]).update(finished_at=now, open=False)
    if react is not None:
        for cohort in cohorts:
            cohort.finished_at, cohort.open = now, False
            for member in members[cohort.pk]:
                member.cohort = cohort
            league = rows[cohort.league_id]
            react(league.tenant, definitions[league.pk], cohort, members[cohort.pk])
    return len(cohorts)


_RESULT_FIELDS = ("placement", "zone", "next_tier", "left", "rewards", "rewards_due")


def _results_write(entries: Sequence[LeagueEntry]) -> None:
    """The results of a chunk's entries, in one statement on PostgreSQL: an UPDATE ... FROM
    unnest with one array parameter a column (apps/core/db.update_many). bulk_update's CASE
    per field binds 13 parameters an entry, over the 65,535 PostgreSQL takes from ~5,000
    entries on (a chunk of 200 full cohorts of 30 failed), and PostgreSQL tries each entry's
    WHEN in turn for every row, so its time grew with the square of the chunk
    (bench/leagues_week_end.py)."""
    if connection.vendor != "postgresql":
        LeagueEntry.objects.bulk_update(entries, list(_RESULT_FIELDS))
        return
    rows = [
        (e.pk, e.placement, e.zone, e.next_tier, e.left, json.dumps(e.rewards), e.rewards_due)
        for e in entries
    ]
    update_many(LeagueEntry, _RESULT_FIELDS, rows)


def _results_apply(
    league: LeagueDef, cohort: LeagueCohort, entries: Sequence[LeagueEntry]
) -> list[LeagueEntry]:
    by_user = {e.user_id: e for e in entries}
    standings = [domain.Standing(e.user_id, e.score, e.reached_at) for e in entries]
    tier_name = league.tier_name(cohort.tier)
    for result in domain.results(
        standings, tier=cohort.tier, tiers=league.tiers, unit=league.zone_unit, idle=league.idle
    ):
        entry = by_user[result.user_pk]
        entry.placement, entry.zone = result.placement, result.zone
        entry.next_tier, entry.left = result.next_tier, result.left
        entry.rewards = domain.rewards_for(
            league.rewards, placement=result.placement, tier_name=tier_name
        )
        entry.rewards_due = bool(entry.rewards)
    return list(entries)


def rewards_due(limit: int = 500) -> list[tuple[int, int]]:
    """(entry pk, user pk) of finished entries whose rewards are not paid yet."""
    rows = LeagueEntry.objects.filter(rewards_due=True).order_by("pk")
    return list(rows.values_list("pk", "user_id")[:limit])


def rewards_take(entry_pk: int) -> LeagueEntry | None:
    """The entry, locked, if its rewards are still due; they are marked paid in the caller's
    transaction (which pays them), so that each is paid once."""
    entry = (
        LeagueEntry.objects.filter(pk=entry_pk, rewards_due=True)
        .select_related("cohort")
        .select_for_update(of=("self",))
        .first()
    )
    if entry is not None:
        LeagueEntry.objects.filter(pk=entry_pk).update(rewards_due=False)
    return entry
