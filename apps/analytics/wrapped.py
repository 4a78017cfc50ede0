"""A user's year in review (GET /users/{id}/wrapped, reference §3.8): pure reads of the daily
rollups, in a fixed number of queries whatever the user's history.

The rules (also stated in the README):

- Calendar. Days are the user's local dates, as the rollups recorded them. Weeks run Monday to
  Sunday and are clipped to the year, so the first and last week of a year may be shorter.
- Active. A day is active when the user recorded at least one metric event on it (a daily
  rollup row); a week or a month is active when one of its days is.
- Most active. The day, week and month with the most metric events (all metrics together);
  ties go to the earliest. A year without events yields 1 January, its week and January.
- Figures of a metric or points system in a period: `currentTotal` is the total at the end of
  the period, `changeThisPeriod` the net change within it, and `percentChange` the change
  relative to the total at the start of the period (how much the total grew), to one decimal;
  from a starting total of 0 it is 100 for a gain, -100 for a loss and 0 without change. This
  is the rule Trophy's published examples follow (2,500 added to 12,500 -> 20; a year that
  starts at 0 -> 100).
- `percentileThisPeriod` (weeks, months and the year, not days): the percentage of the
  tenant's users active on that metric (who earned or lost points in that system) during the
  same period whose change was at most the user's, to one decimal; 0 when nobody was. The
  distribution of changes per (tenant, metric or system, period) is computed once and cached
  for PERCENTILE_TTL; past 1,001 users it is kept as 1,001 cut points (0.1 % resolution).
- `byAttribute`: per event attribute key and value, the figures of the events carrying that
  value, for values used in the period (no percentile).
- Achievements: those completed in the period, by local date in the user's current time zone.
- Leaderboards: per leaderboard, the best rank of the user's daily snapshots in the period
  (snapshots are taken per UTC date), the latest one on a tie; boards where the user never
  ranked within the maximum participants are absent.
- Longest streak: the greatest length the user's streak (at the tenant's current frequency)
  reached in a period overlapping the year; `started` is when that streak began (perhaps the
  year before), `periodStart`/`periodEnd` the span from its start to the end of that period.
"""

import bisect
import datetime as dt
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.cache import cache
from django.db.models import Sum

from apps.accounts.models import Tenant
from apps.achievements.models import AchievementCompletion
from apps.achievements.selectors import (
    AchievementDef,
    Stats,
    achievement_definitions,
    achievement_stats,
    visible_to,
)
from apps.leaderboards.choices import Status as BoardStatus
from apps.leaderboards.models import LeaderboardSnapshot
from apps.leaderboards.selectors import BoardDef, board_definitions
from apps.metrics.models import MetricDailyChange, MetricEvent
from apps.metrics.selectors import MetricDef, metric_definitions
from apps.points.models import PointsDailyChange
from apps.points.selectors import SystemDef, points_config
from apps.streaks.models import StreakPeriod
from apps.streaks.selectors import streak_config
from apps.users.domain import local_date
from apps.users.models import EndUser
from apps.users.selectors import attribute_definitions

PERCENTILE_TTL = 60 * 60  # seconds: a percentile may lag the period's latest events by an hour
CUT_POINTS = 1001
VISIBLE_BOARDS = (BoardStatus.ACTIVE, BoardStatus.SCHEDULED, BoardStatus.FINISHED)
_PLACES = 6  # the decimal places of stored amounts
_SECOND_DAY = dt.date.min + dt.timedelta(days=1)


@dataclass(frozen=True)
class Period:
    start: dt.date
    end: dt.date  # inclusive

    def __contains__(self, day: object) -> bool:
        return isinstance(day, dt.date) and self.start <= day <= self.end


@dataclass(frozen=True)
class Figures:
    total: Decimal  # at the end of the period
    change: Decimal
    percent_change: float
    percentile: float | None = None  # None: not given for this kind of period


@dataclass(frozen=True)
class MetricFigures:
    metric: MetricDef
    figures: Figures
    by_attribute: dict[str, dict[str, Figures]]


@dataclass(frozen=True)
class PointsFigures:
    system: SystemDef
    figures: Figures


@dataclass(frozen=True)
class Completion:
    achievement: AchievementDef
    completed_at: dt.datetime
    local_date: dt.date


@dataclass(frozen=True)
class Ranking:
    """A daily leaderboard snapshot of the user."""

    board: BoardDef
    run_start: dt.date
    date: dt.date
    rank: int
    value: Decimal | None


@dataclass(frozen=True)
class PeriodActivity:
    period: Period
    metrics: list[MetricFigures]
    points: list[PointsFigures]
    achievements: list[Completion]
    leaderboards: list[Ranking]


@dataclass(frozen=True)
class LongestStreak:
    length: int
    frequency: str
    started: dt.date | None
    end: dt.date | None


@dataclass(frozen=True)
class Wrapped:
    user: EndUser
    days_active: int
    weeks_active: int
    months_active: int
    day: PeriodActivity
    week: PeriodActivity
    month: PeriodActivity
    year: PeriodActivity
    longest_streak: LongestStreak
    achievement_stats: Stats | None  # None when nothing was completed in the year


# --- pure rules -------------------------------------------------------------------------------


def percent_change(change: Decimal, start_total: Decimal) -> float:
    """The growth of the total over the period, in percent (see the module docstring)."""
    if start_total == 0:
        return 0.0 if change == 0 else (100.0 if change > 0 else -100.0)
    return round(float(change / abs(start_total) * 100), 1)


def cut_points(values: Sequence[float]) -> list[float]:
    """A sorted distribution, or CUT_POINTS evenly spaced quantiles of a larger one."""
    ordered = sorted(values)
    n = len(ordered)
    if n <= CUT_POINTS:
        return ordered
    return [ordered[round(i * (n - 1) / (CUT_POINTS - 1))] for i in range(CUT_POINTS)]


def percentile(cuts: Sequence[float], value: float) -> float:
    """Percent of the distribution at most `value`; 0 for an empty one."""
    if not cuts:
        return 0.0
    return round(100 * bisect.bisect_right(cuts, value) / len(cuts), 1)


def week_of(day: dt.date, year: Period) -> Period:
    """The Monday-to-Sunday week of `day`, clipped to the year."""
    monday = day - dt.timedelta(days=day.weekday())
    return Period(max(monday, year.start), min(monday + dt.timedelta(days=6), year.end))


def month_of(day: dt.date) -> Period:
    first = day.replace(day=1)
    following = (first + dt.timedelta(days=32)).replace(day=1)
    return Period(first, following - dt.timedelta(days=1))


def busiest(events: dict[Any, int], default: Any) -> Any:
    """The key with the most events, the earliest on a tie; `default` when there are none."""
    return min(events, key=lambda k: (-events[k], k), default=default)


def _float(amount: Decimal) -> float:
    # Rounded to the stored precision: a SQL SUM may come back as a float with noise in the
    # last bits, and the user's own change must compare equal to its place in the distribution.
    return round(float(amount), _PLACES)


class Series:
    """Daily changes per key over the year, with each key's total before the year."""

    def __init__(
        self, before: dict[Any, Decimal], rows: Iterable[tuple[Hashable, dt.date, Any]]
    ) -> None:
        self.before = before
        self.days: dict[Any, dict[dt.date, Decimal]] = defaultdict(dict)
        for key, day, change in rows:
            self.days[key][day] = self.days[key].get(day, Decimal(0)) + Decimal(change)

    def active_in(self, key: Any, period: Period) -> bool:
        return any(day in period for day in self.days.get(key, ()))

    def figures(self, key: Any, period: Period, cuts: Sequence[float] | None = None) -> Figures:
        days = self.days.get(key, {})
        start = Decimal(self.before.get(key) or 0)
        start += sum((c for d, c in days.items() if d < period.start), Decimal(0))
        change = sum((c for d, c in days.items() if d in period), Decimal(0))
        return Figures(
            total=start + change,
            change=change,
            percent_change=percent_change(change, start),
            percentile=None if cuts is None else percentile(cuts, _float(change)),
        )


# --- reads --------------------------------------------------------------------------------


def _metric_series(user: EndUser, year: Period) -> tuple[Series, dict[dt.date, int]]:
    """The user's metric changes in the year, and their events per day (1 query + 1)."""
    rollups = MetricDailyChange.objects.filter(user=user)
    rows = list(
        rollups.filter(date__gte=year.start, date__lte=year.end).values_list(
            "metric_id", "date", "change", "events"
        )
    )
    before = dict(
        rollups.filter(date__lt=year.start)
        .values("metric_id")
        .annotate(total=Sum("change"))
        .values_list("metric_id", "total")
    )
    events: dict[dt.date, int] = defaultdict(int)
    for _, day, _, count in rows:
        events[day] += count
    return Series(before, ((m, d, c) for m, d, c, _ in rows)), events


def _points_series(user: EndUser, year: Period) -> Series:
    rollups = PointsDailyChange.objects.filter(user=user)
    before = dict(
        rollups.filter(date__lt=year.start)
        .values("system_id")
        .annotate(total=Sum("change"))
        .values_list("system_id", "total")
    )
    rows = rollups.filter(date__gte=year.start, date__lte=year.end).values_list(
        "system_id", "date", "change"
    )
    return Series(before, rows)


def _attribute_series(user: EndUser, year: Period, keys: frozenset[str]) -> Series:
    """Changes per (metric, event attribute key, value). Attributes have no rollup, so this
    groups the user's events in the database: two aggregate queries."""
    events = MetricEvent.objects.filter(user=user)
    grouped = events.filter(local_date__gte=year.start, local_date__lte=year.end).values(
        "metric_id", "local_date", "attributes"
    )
    rows = grouped.annotate(change=Sum("value")).values_list(
        "metric_id", "local_date", "attributes", "change"
    )
    earlier = (
        events.filter(local_date__lt=year.start)
        .values("metric_id", "attributes")
        .annotate(total=Sum("value"))
        .values_list("metric_id", "attributes", "total")
    )
    before: dict[Any, Decimal] = defaultdict(Decimal)
    for metric_pk, attributes, total in earlier:
        for key, value in (attributes or {}).items():
            if key in keys:
                before[(metric_pk, key, value)] += Decimal(total)
    return Series(
        before,
        (
            ((metric_pk, key, value), day, change)
            for metric_pk, day, attributes, change in rows
            for key, value in (attributes or {}).items()
            if key in keys
        ),
    )


def _distributions(tenant: Tenant, kind: str, pks: list[int], period: Period) -> dict[int, list]:
    """Cut points of every user's change in `period`, per metric or points system, from the
    cache; the missing ones in one aggregate query."""
    keys = {
        pk: f"wrapped:distribution:{tenant.public_id}:{kind}:{pk}:{period.start}:{period.end}"
        for pk in pks
    }
    cached = cache.get_many(list(keys.values()))
    found = {pk: cached[key] for pk, key in keys.items() if key in cached}
    missing = [pk for pk in pks if pk not in found]
    if missing:
        model: Any = MetricDailyChange if kind == "metric" else PointsDailyChange
        field = "metric_id" if kind == "metric" else "system_id"
        rows = (
            model.objects.filter(
                tenant=tenant,
                date__gte=period.start,
                date__lte=period.end,
                **{f"{field}__in": missing},
            )
            .values(field, "user_id")
            .annotate(change=Sum("change"))
            .values_list(field, "change")
        )
        values: dict[int, list[float]] = {pk: [] for pk in missing}
        for pk, change in rows:
            values[pk].append(_float(Decimal(change)))
        computed = {pk: cut_points(v) for pk, v in values.items()}
        cache.set_many({keys[pk]: cuts for pk, cuts in computed.items()}, PERCENTILE_TTL)
        found.update(computed)
    return found


def _completions(tenant: Tenant, user: EndUser, year: Period) -> list[Completion]:
    """Completions whose local date (current time zone) falls in the year: one query over a
    UTC window wide enough for every zone."""
    definitions = achievement_definitions(tenant)
    since = dt.datetime.combine(max(year.start, _SECOND_DAY), dt.time.min, dt.UTC)
    since -= dt.timedelta(days=1)  # no earlier than datetime.min (year 1)
    until = dt.datetime.combine(year.end, dt.time.max, dt.UTC) + dt.timedelta(days=1)
    rows = (
        AchievementCompletion.objects.filter(
            user=user, completed_at__gte=since, completed_at__lte=until
        )
        .order_by("completed_at", "id")
        .values_list("achievement_id", "completed_at")
    )
    completions = []
    for pk, completed_at in rows:
        definition = definitions.get(pk)
        day = local_date(completed_at, user.tz)
        if definition is not None and visible_to(definition, True) and day in year:
            completions.append(Completion(definition, completed_at, day))
    return completions


def _snapshots(tenant: Tenant, user: EndUser, year: Period) -> list[Ranking]:
    """The user's daily leaderboard snapshots of the year where they were on the board."""
    boards = {b.pk: b for b in board_definitions(tenant).values() if b.status in VISIBLE_BOARDS}
    if not boards:
        return []
    rows = LeaderboardSnapshot.objects.filter(
        user=user,
        leaderboard_id__in=list(boards),
        date__gte=year.start,
        date__lte=year.end,
        rank__isnull=False,
    ).values_list("leaderboard_id", "run_start", "date", "rank", "value")
    return [
        Ranking(board=boards[pk], run_start=run_start, date=day, rank=rank, value=value)
        for pk, run_start, day, rank, value in rows
        # Ranked beyond the board's maximum participants: not on the board.
        if rank is not None and rank <= boards[pk].max_participants
    ]


def _best_rankings(snapshots: list[Ranking], period: Period) -> list[Ranking]:
    """Per board, the best rank in the period; the latest snapshot on a tie."""
    best: dict[int, Ranking] = {}
    for snapshot in snapshots:
        if snapshot.date not in period:
            continue
        current = best.get(snapshot.board.pk)
        if current is None or (snapshot.rank, current.date) < (current.rank, snapshot.date):
            best[snapshot.board.pk] = snapshot
    return sorted(best.values(), key=lambda ranking: ranking.board.key)


def _longest_streak(tenant: Tenant, user: EndUser, year: Period) -> LongestStreak:
    frequency = streak_config(tenant).frequency
    periods = StreakPeriod.objects.filter(user=user, frequency=frequency)
    best = (
        periods.filter(period_end__gte=year.start, period_start__lte=year.end, length__gt=0)
        .order_by("-length", "period_start")
        .values_list("length", "period_start", "period_end")
        .first()
    )
    if best is None:
        return LongestStreak(length=0, frequency=frequency, started=None, end=None)
    length, reached_in, end = best
    # A streak begins with a period extended to length 1; freezes, pauses and days off keep
    # the length, so the nearest such period before is where this one began.
    started = (
        periods.filter(period_start__lte=reached_in, length=1, extended=True)
        .order_by("-period_start")
        .values_list("period_start", flat=True)
        .first()
    )
    return LongestStreak(length=length, frequency=frequency, started=started or reached_in, end=end)


# --- the year in review -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Sources:
    """Everything read for the year, from which each period is cut."""

    tenant: Tenant
    metrics: list[MetricDef]
    systems: list[SystemDef]
    event_keys: list[str]
    metric_series: Series
    points_series: Series
    attribute_series: Series | None
    completions: list[Completion]
    snapshots: list[Ranking]


def _period_activity(sources: _Sources, period: Period, percentiles: bool) -> PeriodActivity:
    metric_cuts: dict[int, list] = {}
    points_cuts: dict[int, list] = {}
    if percentiles:
        metric_cuts = _distributions(
            sources.tenant, "metric", [m.pk for m in sources.metrics], period
        )
        points_cuts = _distributions(
            sources.tenant, "points", [s.pk for s in sources.systems], period
        )
    return PeriodActivity(
        period=period,
        metrics=[
            MetricFigures(
                metric=metric,
                figures=sources.metric_series.figures(
                    metric.pk, period, metric_cuts.get(metric.pk)
                ),
                by_attribute=_by_attribute(sources, metric, period),
            )
            for metric in sources.metrics
        ],
        points=[
            PointsFigures(
                system, sources.points_series.figures(system.pk, period, points_cuts.get(system.pk))
            )
            for system in sources.systems
        ],
        achievements=[c for c in sources.completions if c.local_date in period],
        leaderboards=_best_rankings(sources.snapshots, period),
    )


def _by_attribute(
    sources: _Sources, metric: MetricDef, period: Period
) -> dict[str, dict[str, Figures]]:
    series = sources.attribute_series
    if series is None:
        return {}
    result: dict[str, dict[str, Figures]] = {}
    for key in sources.event_keys:
        values = sorted(
            value
            for (metric_pk, attribute, value) in series.days
            if metric_pk == metric.pk
            and attribute == key
            and series.active_in((metric_pk, attribute, value), period)
        )
        if values:
            result[key] = {v: series.figures((metric.pk, key, v), period) for v in values}
    return result


def user_wrapped(tenant: Tenant, user: EndUser, year: int) -> Wrapped:
    """The user's year in review (rules in the module docstring). Queries: 2 for metric
    rollups, 2 for points rollups, 2 for event attributes (only when the tenant defines event
    attributes), 1 for completions (+2 for achievement statistics when one falls in the
    year), 1 for leaderboard snapshots (only when there are leaderboards), 2 for the longest
    streak, and on a cache miss 1 per period and kind for the percentile distributions; plus
    the configuration snapshots when the tenant's configuration changed."""
    whole = Period(dt.date(year, 1, 1), dt.date(year, 12, 31))
    event_keys = sorted(attribute_definitions(tenant).event_keys)
    metrics = list(metric_definitions(tenant).values())
    metric_series, events = _metric_series(user, whole)
    sources = _Sources(
        tenant=tenant,
        metrics=metrics,
        systems=list(points_config(tenant).values()),
        event_keys=event_keys,
        metric_series=metric_series,
        points_series=_points_series(user, whole),
        attribute_series=(
            _attribute_series(user, whole, frozenset(event_keys))
            if event_keys and metrics
            else None
        ),
        completions=_completions(tenant, user, whole),
        snapshots=_snapshots(tenant, user, whole),
    )
    active = [day for day, count in events.items() if count > 0]
    per_week: dict[dt.date, int] = defaultdict(int)
    per_month: dict[dt.date, int] = defaultdict(int)
    for day in active:
        per_week[week_of(day, whole).start] += events[day]
        per_month[day.replace(day=1)] += events[day]
    day = busiest({d: events[d] for d in active}, default=whole.start)
    week = week_of(busiest(per_week, default=whole.start), whole)
    month = month_of(busiest(per_month, default=whole.start))
    return Wrapped(
        user=user,
        days_active=len(active),
        weeks_active=len(per_week),
        months_active=len(per_month),
        day=_period_activity(sources, Period(day, day), percentiles=False),
        week=_period_activity(sources, week, percentiles=True),
        month=_period_activity(sources, month, percentiles=True),
        year=_period_activity(sources, whole, percentiles=True),
        longest_streak=_longest_streak(tenant, user, whole),
        achievement_stats=achievement_stats(tenant) if sources.completions else None,
    )
