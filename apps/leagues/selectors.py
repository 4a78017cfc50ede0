"""Reads of leagues: the tenant's active leagues as the event path sees them (cached per
configuration version, ARCHITECTURE.md §5), a cohort's standings, a user's league and history."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import Count, F, Q, QuerySet, Sum

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.leagues import domain
from apps.leagues.choices import ScoreBy, Status
from apps.leagues.errors import CohortNotFoundError, LeagueNotFoundError
from apps.leagues.models import League, LeagueCohort, LeagueEntry
from apps.metrics.selectors import metric_definitions
from apps.points.selectors import points_config
from apps.users.models import EndUser
from apps.users.selectors import attribute_filters_resolve


@dataclass(frozen=True)
class LeagueDef:
    pk: int
    public_id: str
    key: str
    name: str
    description: str | None
    status: str
    score_by: str
    metric_pk: int | None
    system_pk: int | None
    week_ends_on: str
    week_ends_at: int
    cohort_size: int
    tiers: tuple[dict[str, Any], ...]
    zone_unit: str
    idle: str
    absent: str
    rewards: tuple[dict[str, Any], ...]
    user_filters: dict[str, str] | None  # by attribute key; None: a deleted attribute
    tz_name: str  # the tenant's reporting time zone

    def week(self, moment: dt.datetime) -> domain.Week:
        return domain.week_of(
            moment, ends_on=self.week_ends_on, ends_at=self.week_ends_at, tz_name=self.tz_name
        )

    def tier_name(self, tier: int) -> str:
        return str(self.tiers[min(tier, len(self.tiers) - 1)]["name"])


def league_def(tenant: Tenant, league: League) -> LeagueDef:
    return LeagueDef(
        pk=league.pk,
        public_id=str(league.public_id),
        key=league.key,
        name=league.name,
        description=league.description,
        status=league.status,
        score_by=league.score_by,
        metric_pk=league.metric_id,
        system_pk=league.points_system_id,
        week_ends_on=league.week_ends_on,
        week_ends_at=league.week_ends_at,
        cohort_size=league.cohort_size,
        tiers=tuple(league.tiers),
        zone_unit=league.zone_unit,
        idle=league.idle,
        absent=league.absent,
        rewards=tuple(league.rewards),
        user_filters=attribute_filters_resolve(tenant, league.user_attributes),
        tz_name=tenant.reporting_tz,
    )


def leagues_config(tenant: Tenant) -> tuple[LeagueDef, ...]:
    """Every league of the tenant but archived ones, oldest first (cached)."""

    def load() -> tuple[LeagueDef, ...]:
        leagues = League.objects.filter(tenant=tenant).exclude(status=Status.ARCHIVED)
        return tuple(league_def(tenant, lg) for lg in leagues.order_by("created", "id"))

    return tenant_cached(tenant, "leagues", load)


def leagues_active(tenant: Tenant) -> tuple[LeagueDef, ...]:
    return tuple(lg for lg in leagues_config(tenant) if lg.status == Status.ACTIVE)


def league_visible(tenant: Tenant, key: str) -> LeagueDef:
    """A league the application API shows (active or inactive; never archived)."""
    for league in leagues_config(tenant):
        if league.key == key:
            return league
    raise LeagueNotFoundError("League not found")


def cohort_get(league: LeagueDef, public_id: str) -> LeagueCohort:
    cohort = LeagueCohort.objects.filter(league_id=league.pk, public_id=public_id).first()
    if cohort is None:
        raise CohortNotFoundError("Cohort not found")
    return cohort


def cohort_entries(cohort_pk: int, *, seen_by: int | None = None) -> QuerySet[LeagueEntry]:
    """A cohort's entries, best first, with their users; none of users excluded from the
    rankings (apps/fairplay), except the user `seen_by` (pk) themself: an excluded user's own
    reads show them among the others, who do not see them."""
    return (
        LeagueEntry.objects.filter(cohort_id=cohort_pk)
        .filter(Q(user__excluded_at__isnull=True) | Q(user_id=seen_by))
        .select_related("user")
        .order_by("-score", "reached_at", "user_id")
    )


def entry_current(league: LeagueDef, user: EndUser, now: dt.datetime) -> LeagueEntry | None:
    """The user's entry in this week of the league, with its cohort."""
    return (
        LeagueEntry.objects.filter(
            league_id=league.pk, user=user, week_start=league.week(now).start
        )
        .select_related("cohort")
        .first()
    )


def entries_history(
    league: LeagueDef, user: EndUser, *, limit: int, before: dt.datetime | None = None
) -> Sequence[LeagueEntry]:
    """The user's weeks in the league, newest first."""
    entries = LeagueEntry.objects.filter(league_id=league.pk, user=user).select_related("cohort")
    if before is not None:
        entries = entries.filter(week_start__lt=before)
    return list(entries.order_by("-week_start")[:limit])


# --- the extension APIs' reads ----------------------------------------------------------------


def leagues_list(tenant: Tenant, limit: int, skip: int) -> Sequence[League]:
    """The admin API's page of leagues, archived ones too, oldest first."""
    leagues = League.objects.filter(tenant=tenant).select_related("metric", "points_system")
    return list(leagues.order_by("created", "id")[skip : skip + limit])


def league_get(tenant: Tenant, public_id: str) -> League | None:
    return (
        League.objects.filter(tenant=tenant, public_id=public_id)
        .select_related("metric", "points_system")
        .first()
    )


def league_scored(tenant: Tenant, league: LeagueDef) -> tuple[str, str] | None:
    """(key, name) of what the league scores, its metric or its points system, from the
    cached configuration; None for a points system no longer active."""
    if league.score_by == ScoreBy.METRIC:
        metrics = metric_definitions(tenant).values()
        found = next((m for m in metrics if m.pk == league.metric_pk), None)
        return (found.key, found.name) if found else None
    systems = points_config(tenant).values()
    system = next((s for s in systems if s.pk == league.system_pk), None)
    return (system.key, system.name) if system else None


def tier_upcoming(league: LeagueDef, user_pk: int, week: domain.Week, *, lock: bool = False) -> int:
    """The tier the user joins `week` in with their first qualifying event: the lowest for a
    newcomer (or one who left), else what their last week earned (worked out from its
    standings if the week-end job has not written it yet), one lower after an absence if the
    league says so. The joining itself (apps/leagues/services.py) reads it with `lock`: the
    finished cohort's entries are locked first on PostgreSQL, so that a score written just
    before the week's end (and not committed yet) is waited for, as the week-end job waits."""
    last = entry_last(league.pk, user_pk, week.start)
    if last is None:
        return 0
    earned = last.next_tier
    if earned is None:
        members = LeagueEntry.objects.filter(cohort_id=last.cohort_id).order_by("pk")
        if lock and connection.vendor == "postgresql":
            members = members.select_for_update(no_key=True, of=("self",))
        rows = list(members.values_list("user_id", "score", "reached_at", "user__excluded_at"))
        if any(u == user_pk and out is not None for u, _, _, out in rows):
            earned = last.tier  # excluded: no result, the same tier (as the week's end writes)
        else:
            standings = included_standings(rows, user_pk)
            results = domain.results(
                standings,
                tier=last.tier,
                tiers=league.tiers,
                unit=league.zone_unit,
                idle=league.idle,
            )
            earned = next(r.next_tier for r in results if r.user_pk == user_pk)
    missed = 0 if last.cohort.week_end >= week.start else 1
    return domain.tier_on_return(
        earned, weeks_missed=missed, absent=league.absent, tiers=len(league.tiers)
    )


@dataclass(frozen=True)
class Placed:
    """A member of a cohort with their rank and zone: the stored results of a finished cohort,
    else what the week's end would give with the standings as they are now."""

    entry: LeagueEntry
    rank: int
    zone: str


def cohort_standings(
    league: LeagueDef, cohort: LeagueCohort, *, seen_by: int | None = None
) -> list[Placed]:
    """A cohort's members, best first (at most 100, with their users; cohort_entries)."""
    return _placed(league, cohort, list(cohort_entries(cohort.pk, seen_by=seen_by)))


@dataclass(frozen=True)
class UserWeek:
    """A user's current week in a league: their tier (the one they would join in, when they
    have not joined yet) and, once they have, their cohort's standings and their own place."""

    week: domain.Week
    tier: int
    cohort: LeagueCohort | None
    standings: Sequence[Placed]
    own: Placed | None


def user_week(league: LeagueDef, user: EndUser, now: dt.datetime) -> UserWeek:
    week = league.week(now)
    entry = entry_current(league, user, now)
    if entry is None:
        return UserWeek(week, tier_upcoming(league, user.pk, week), None, (), None)
    standings = cohort_standings(league, entry.cohort, seen_by=user.pk)
    own = next((p for p in standings if p.entry.pk == entry.pk), None)
    return UserWeek(week, entry.tier, entry.cohort, standings, own)


def entry_last(league_pk: int, user_pk: int, before: dt.datetime) -> LeagueEntry | None:
    """The user's last week in the league before `before` (the unique constraint's index),
    with its cohort."""
    return (
        LeagueEntry.objects.filter(league_id=league_pk, user_id=user_pk, week_start__lt=before)
        .select_related("cohort")
        .order_by("-week_start")
        .first()
    )


@dataclass(frozen=True)
class CohortRanks:
    """Where a user stands in their cohort now (with the zone the week's end would give them),
    and stood before a change."""

    cohort_id: str
    members: int
    rank: int
    zone: str
    previous_rank: int | None


def cohort_ranks(
    league: LeagueDef,
    cohort_pk: int,
    tier: int,
    user_pk: int,
    previous: tuple[Decimal, dt.datetime] | None,
) -> CohortRanks:
    """The user's rank and zone in the cohort (one read of its at most 100 entries), and their
    rank with their `previous` score and moment instead (None: they were not in it)."""
    rows = list(
        LeagueEntry.objects.filter(cohort_id=cohort_pk).values_list(
            "user_id", "score", "reached_at", "user__excluded_at", "cohort__public_id"
        )
    )
    standings = included_standings([row[:4] for row in rows], user_pk)
    results = domain.results(
        standings, tier=tier, tiers=league.tiers, unit=league.zone_unit, idle=league.idle
    )
    mine = next(r for r in results if r.user_pk == user_pk)
    before = None
    if previous is not None:
        moved = [
            domain.Standing(s.user_pk, *previous) if s.user_pk == user_pk else s for s in standings
        ]
        before = _rank_of(moved, user_pk)
    return CohortRanks(str(rows[0][4]), len(standings), mine.placement, mine.zone, before)


def included_standings(
    rows: Sequence[tuple[int, Decimal, dt.datetime, dt.datetime | None]], user_pk: int
) -> list[domain.Standing]:
    """The standings of a cohort's entries (user pk, score, reached_at, the user's exclusion)
    without the users excluded from the rankings (apps/fairplay), but with `user_pk` whatever:
    an excluded user's own reads rank them among the others, who do not see them."""
    return [
        domain.Standing(u, score, at)
        for u, score, at, excluded_at in rows
        if excluded_at is None or u == user_pk
    ]


def _rank_of(standings: Sequence[domain.Standing], user_pk: int) -> int:
    return next(i for i, s in enumerate(domain.ranked(standings), 1) if s.user_pk == user_pk)


# --- the dashboard's reads (apps/leagues/admin/, the end-user page) ---------------------------


@dataclass(frozen=True)
class TierCount:
    """One tier of one week: its cohorts (those still open) and their members."""

    tier: int
    cohorts: int
    open: int
    members: int


def week_tier_counts(
    tenant: Tenant, league_pk: int, week_start: dt.datetime
) -> dict[int, TierCount]:
    """Per tier, the week's cohorts and members: one aggregate over the week's cohorts (the
    cohort's unique index leads with league and week), never over its entries."""
    rows = (
        LeagueCohort.objects.filter(
            league__tenant=tenant, league_id=league_pk, week_start=week_start
        )
        .values("tier")
        .annotate(
            cohorts=Count("pk"), open=Count("pk", filter=Q(open=True)), members=Sum("members")
        )
        .order_by("tier")
    )
    return {
        row["tier"]: TierCount(row["tier"], row["cohorts"], row["open"], row["members"] or 0)
        for row in rows
    }


def cohorts_of_week(
    tenant: Tenant, league_pk: int, week_start: dt.datetime, *, tier: int | None = None
) -> QuerySet[LeagueCohort]:
    """The week's cohorts, top tier first, then in the order they opened (a page slices it)."""
    cohorts = LeagueCohort.objects.filter(
        league__tenant=tenant, league_id=league_pk, week_start=week_start
    )
    if tier is not None:
        cohorts = cohorts.filter(tier=tier)
    return cohorts.order_by("-tier", "number")


def cohort_of_league(tenant: Tenant, league_pk: int, public_id: str) -> LeagueCohort | None:
    """One cohort of the league, by its public id (None: not one of this league's)."""
    return LeagueCohort.objects.filter(
        league__tenant=tenant, league_id=league_pk, public_id=public_id
    ).first()


def cohorts_standings(tenant: Tenant, cohort_pks: Sequence[int]) -> dict[int, list[LeagueEntry]]:
    """The entries of each of these cohorts, best first, with their users: one query for a
    page of cohorts (at most 100 members each)."""
    entries = (
        LeagueEntry.objects.filter(
            league__tenant=tenant, cohort_id__in=cohort_pks, user__excluded_at__isnull=True
        )
        .select_related("user")
        .order_by("cohort_id", "-score", "reached_at", "user_id")
    )
    standings: dict[int, list[LeagueEntry]] = {pk: [] for pk in cohort_pks}
    for entry in entries:
        standings[entry.cohort_id].append(entry)
    return standings


@dataclass(frozen=True)
class WeekCounts:
    """One week of a league in numbers: who took part, and where the results moved them."""

    week_start: dt.datetime
    week_end: dt.datetime
    cohorts: int
    finished: int  # cohorts the week-end job has finished
    members: int
    promoted: int
    demoted: int
    left: int


def league_week_counts(tenant: Tenant, league_pk: int, *, since: dt.datetime) -> list[WeekCounts]:
    """The league's weeks that started at or after `since`, newest first: participation from the
    cohorts, moves (next tier above or below the tier, leaving) from the finished entries. Two
    aggregates, bounded by the weeks asked for."""
    cohorts = (
        LeagueCohort.objects.filter(
            league__tenant=tenant, league_id=league_pk, week_start__gte=since
        )
        .values("week_start", "week_end")
        .annotate(
            cohorts=Count("pk"),
            finished=Count("pk", filter=Q(finished_at__isnull=False)),
            members=Sum("members"),
        )
    )
    moves = {
        row["week_start"]: (row["promoted"], row["demoted"], row["left"])
        for row in LeagueEntry.objects.filter(
            league__tenant=tenant,
            league_id=league_pk,
            week_start__gte=since,
            next_tier__isnull=False,
        )
        .values("week_start")
        .annotate(
            promoted=Count("pk", filter=Q(next_tier__gt=F("tier"), left=False)),
            demoted=Count("pk", filter=Q(next_tier__lt=F("tier"), left=False)),
            left=Count("pk", filter=Q(left=True)),
        )
        .order_by()
    }
    weeks = []
    for row in cohorts.order_by("-week_start"):
        promoted, demoted, left = moves.get(row["week_start"], (0, 0, 0))
        weeks.append(
            WeekCounts(
                week_start=row["week_start"],
                week_end=row["week_end"],
                cohorts=row["cohorts"],
                finished=row["finished"],
                members=row["members"] or 0,
                promoted=promoted,
                demoted=demoted,
                left=left,
            )
        )
    return weeks


def league_has_history(tenant: Tenant, league_pk: int) -> bool:
    """Whether anyone ever took part (such a league cannot be deleted, only archived)."""
    return LeagueEntry.objects.filter(league__tenant=tenant, league_id=league_pk).exists()


def cohorts_placed(
    tenant: Tenant, league: LeagueDef, cohorts: Sequence[LeagueCohort]
) -> dict[int, list[Placed]]:
    """cohort_standings for a page of cohorts (the dashboard's): each one's members, best
    first, with their rank and zone, from one query for all of their entries."""
    entries = cohorts_standings(tenant, [cohort.pk for cohort in cohorts])
    return {cohort.pk: _placed(league, cohort, entries[cohort.pk]) for cohort in cohorts}


def _placed(league: LeagueDef, cohort: LeagueCohort, entries: list[LeagueEntry]) -> list[Placed]:
    """The stored results of a finished cohort, else what the week's end would give now."""
    if cohort.finished_at is not None:
        # An entry without a placement was excluded from the rankings when the week ended.
        placed = (Placed(e, e.placement, e.zone or "") for e in entries if e.placement)
        return sorted(placed, key=_by_rank)
    by_user = {e.user_id: e for e in entries}
    standings = [domain.Standing(e.user_id, e.score, e.reached_at) for e in entries]
    results = domain.results(
        standings, tier=cohort.tier, tiers=league.tiers, unit=league.zone_unit, idle=league.idle
    )
    return [Placed(by_user[r.user_pk], r.placement, r.zone) for r in results]


def _by_rank(placed: Placed) -> int:
    return placed.rank
