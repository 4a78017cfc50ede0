"""Reads behind the dashboard's analytics: a tenant's series over a range of local dates.

Every series comes from rollups and state tables (the metric daily rollup, the points ledger,
streak state and periods, completions, leaderboard entries), never from a scan of raw events,
so a page costs a bounded number of aggregate queries whatever the tenant's event volume.

Definitions (they are also the dashboard's and the admin API's documentation):
- A user is *active* on a local date when they recorded at least one metric event that day: a
  row of the metric daily rollup exists for them (in the user's time zone, as the rollup is).
- *MAU* of a day: distinct users active in the 30 days ending that day (inclusive).
- A user's *start* is the local date (in their time zone) their record was created; retention
  cohorts are the Sunday-to-Saturday weeks of that date, and week offset k of a cohort is the
  k-th week after it (0 = the week they started). A cohort's share at offset k is the percent of
  its users active at least once in that week; control-group users are counted apart.
- A *live streak* is one the streak endpoint would show as longer than 0 right now (missed
  periods settled with the user's freezes and pauses, as the streak reads do).
- *Active streaks* of a period: users whose streak was extended, frozen or paused in that
  period (their stored streak period row); days off leave no row, so a daily streak with days
  off dips on those days.
"""

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import islice

from django.db.models import Count, Min, Q, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import TruncDate
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements.domain import rarity
from apps.achievements.models import AchievementCompletion
from apps.achievements.selectors import AchievementDef, achievement_definitions, achievement_stats
from apps.leaderboards.choices import Status as BoardStatus
from apps.leaderboards.models import LeaderboardEntry
from apps.leaderboards.selectors import BoardDef, board_definitions
from apps.metrics.models import MetricDailyChange
from apps.metrics.selectors import MetricDef, metric_definitions
from apps.points.models import PointsAward
from apps.points.selectors import SystemDef, level_counts, points_config
from apps.streaks import domain as streaks
from apps.streaks.models import StreakPeriod, StreakState
from apps.streaks.selectors import pauses_for, streak_config, streak_view
from apps.users.domain import local_date
from apps.users.models import EndUser

RANGES = {"7d": 7, "30d": 30, "90d": 90}
RANGE_ALL = "all"
DEFAULT_RANGE = "30d"
# About three years of daily points: enough for "all" on a chart, and a bound on the work of
# one request. "all" starts at the tenant's first day or this many days before the end.
MAX_RANGE_DAYS = 1096
MAU_DAYS = 30
RETENTION_WEEKS = 12
# Current streak lengths, bucketed (in periods of the tenant's frequency); None = no bound.
STREAK_BUCKETS: tuple[tuple[int, int | None], ...] = (
    (1, 1),
    (2, 3),
    (4, 7),
    (8, 14),
    (15, 30),
    (31, 60),
    (61, 90),
    (91, 180),
    (181, 365),
    (366, None),
)
# Overdue streaks are settled in memory in chunks of this many users (one pauses query each).
_SETTLE_CHUNK = 500


@dataclass(frozen=True)
class DateRange:
    """Local dates start..end, both included."""

    start: dt.date
    end: dt.date

    def __contains__(self, day: object) -> bool:
        return isinstance(day, dt.date) and self.start <= day <= self.end

    @property
    def length(self) -> int:
        return (self.end - self.start).days + 1

    def days(self) -> Iterator[dt.date]:
        for offset in range(self.length):
            yield self.start + dt.timedelta(days=offset)

    def utc_window(self) -> tuple[dt.datetime, dt.datetime]:
        """An instant window holding every moment whose local date, in any time zone (UTC-12
        to UTC+14), falls in the range: rows are read by it, then filtered by their own date."""
        lo = dt.datetime.combine(self.start - dt.timedelta(days=1), dt.time(), dt.UTC)
        hi = dt.datetime.combine(self.end + dt.timedelta(days=2), dt.time(), dt.UTC)
        return lo, hi


def tenant_first_day(tenant: Tenant) -> dt.date:
    """The first local date with data: the tenant's creation, or an earlier event (imports
    may carry past timestamps). One indexed query."""
    first = MetricDailyChange.objects.filter(tenant=tenant).aggregate(first=Min("date"))["first"]
    created = timezone.localdate(tenant.created)
    return min(first, created) if first is not None else created


def date_range_resolve(tenant: Tenant, name: str, today: dt.date) -> DateRange:
    """A named range (RANGES or RANGE_ALL) ending today."""
    if name == RANGE_ALL:
        start = max(tenant_first_day(tenant), today - dt.timedelta(days=MAX_RANGE_DAYS - 1))
        return DateRange(min(start, today), today)
    return DateRange(today - dt.timedelta(days=RANGES[name] - 1), today)


def _week(day: dt.date) -> dt.date:
    """Weeks run Sunday to Saturday, as streak weeks do (docs/architecture.md §6)."""
    return streaks.period_start(day, streaks.WEEKLY)


# --- users -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActiveUsersDay:
    date: dt.date
    dau: int
    mau: int


def active_users(tenant: Tenant, period: DateRange) -> list[ActiveUsersDay]:
    """DAU and MAU of each day, in one pass over the distinct (user, day) pairs of the rollup
    from 29 days before the range: each active day covers itself and the 29 days after it, and
    a user's overlapping covers are merged, so each day's MAU is a running sum of +1/-1 marks
    (linear in user-days instead of 30 COUNT DISTINCTs per day)."""
    first = period.start - dt.timedelta(days=MAU_DAYS - 1)
    pairs = (
        MetricDailyChange.objects.filter(tenant=tenant, date__gte=first, date__lte=period.end)
        .values_list("user_id", "date")
        .distinct()
        .order_by("user_id", "date")
    )
    dau: Counter[dt.date] = Counter()
    marks: Counter[dt.date] = Counter()  # +1 where a user's cover starts, -1 after it ends
    user, covered_through = None, first
    for user_pk, day in pairs.iterator(chunk_size=5000):
        if user_pk != user:
            user, covered_through = user_pk, first - dt.timedelta(days=1)
        if day in period:
            dau[day] += 1
        lo = max(day, covered_through + dt.timedelta(days=1), period.start)
        hi = min(day + dt.timedelta(days=MAU_DAYS - 1), period.end)
        if lo <= hi:
            marks[lo] += 1
            marks[hi + dt.timedelta(days=1)] -= 1
        covered_through = max(covered_through, day + dt.timedelta(days=MAU_DAYS - 1))
    series, running = [], 0
    for day in period.days():
        running += marks[day]
        series.append(ActiveUsersDay(day, dau[day], running))
    return series


@dataclass(frozen=True)
class DayCount:
    date: dt.date
    count: int


def _creations(tenant: Tenant, period: DateRange) -> Iterator[tuple[int, dt.date, bool]]:
    """(user pk, local date of creation, control) of the users created in the range."""
    lo, hi = period.utc_window()
    rows = EndUser.objects.filter(tenant=tenant, created__gte=lo, created__lt=hi).values_list(
        "pk", "created", "tz", "control"
    )
    for pk, created, tz, control in rows.iterator(chunk_size=5000):
        day = local_date(created, tz)
        if day in period:
            yield pk, day, control


def new_users(tenant: Tenant, period: DateRange) -> list[DayCount]:
    """Users created per local date (their time zone)."""
    per_day = Counter(day for _, day, _ in _creations(tenant, period))
    return [DayCount(day, per_day[day]) for day in period.days()]


# --- events ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricDay:
    date: dt.date
    events: int
    change: Decimal


@dataclass(frozen=True)
class MetricSeries:
    metric: MetricDef
    days: list[MetricDay]

    @property
    def events(self) -> int:
        return sum(day.events for day in self.days)

    @property
    def change(self) -> Decimal:
        return sum((day.change for day in self.days), Decimal(0))


def metric_series(tenant: Tenant, period: DateRange) -> list[MetricSeries]:
    """Events and net change (sum of values) per metric and day, from the daily rollup, which
    counts events as well as summing them. Every metric of the tenant, by key."""
    rows = (
        MetricDailyChange.objects.filter(
            tenant=tenant, date__gte=period.start, date__lte=period.end
        )
        .values("metric_id", "date")
        .annotate(events=Sum("events"), change=Sum("change"))
        .values_list("metric_id", "date", "events", "change")
    )
    found = {(pk, day): (events, change) for pk, day, events, change in rows}

    def day_of(metric: MetricDef, day: dt.date) -> MetricDay:
        events, change = found.get((metric.pk, day), (0, 0))
        return MetricDay(day, int(events), Decimal(str(change)))

    return [
        MetricSeries(metric, [day_of(metric, day) for day in period.days()])
        for _, metric in sorted(metric_definitions(tenant).items())
    ]


# --- retention -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CohortGroup:
    users: int
    active: list[int]  # users active in week offset 0, 1, ... (the weeks begun by the end)


@dataclass(frozen=True)
class Cohort:
    week: dt.date  # the Sunday starting it
    control: CohortGroup
    treatment: CohortGroup  # everyone not in the control group


@dataclass(frozen=True)
class Retention:
    weeks: int  # the largest week offset reported
    cohorts: list[Cohort]

    def average(self, control: bool) -> list[tuple[int, int]]:
        """Per week offset: (active, users) summed over the cohorts that reached it."""
        sums: list[tuple[int, int]] = []
        for offset in range(self.weeks + 1):
            groups = [c.control if control else c.treatment for c in self.cohorts]
            reached = [g for g in groups if len(g.active) > offset]
            if not reached:
                break
            sums.append((sum(g.active[offset] for g in reached), sum(g.users for g in reached)))
        return sums


def retention(tenant: Tenant, period: DateRange, weeks: int = RETENTION_WEEKS) -> Retention:
    """Weekly cohorts of the users who started in the range (see the module docstring). Two
    queries: the users created in the range, and their distinct active days."""
    cohort_of = {pk: (_week(day), control) for pk, day, control in _creations(tenant, period)}
    sizes = Counter(cohort_of.values())
    first_week, last_week = _week(period.start), _week(period.end)
    lo, hi = period.utc_window()
    pairs = (
        MetricDailyChange.objects.filter(
            tenant=tenant,
            date__gte=first_week,
            date__lte=period.end,
            user__created__gte=lo,
            user__created__lt=hi,
        )
        .values_list("user_id", "date")
        .distinct()
    )
    seen: set[tuple[int, int]] = set()
    active: Counter[tuple[dt.date, bool, int]] = Counter()
    for user_pk, day in pairs.iterator(chunk_size=5000):
        cohort = cohort_of.get(user_pk)
        if cohort is None:
            continue
        offset = (_week(day) - cohort[0]).days // 7
        if 0 <= offset <= weeks and (user_pk, offset) not in seen:
            seen.add((user_pk, offset))
            active[(cohort[0], cohort[1], offset)] += 1

    def group(week: dt.date, control: bool) -> CohortGroup:
        reached = min(weeks, (last_week - week).days // 7)
        return CohortGroup(
            sizes[(week, control)],
            [active[(week, control, offset)] for offset in range(reached + 1)],
        )

    cohorts = []
    week = first_week
    while week <= last_week:
        cohorts.append(Cohort(week, group(week, True), group(week, False)))
        week += dt.timedelta(days=7)
    return Retention(min(weeks, (last_week - first_week).days // 7), cohorts)


# --- streaks ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LengthBucket:
    low: int
    high: int | None
    users: int

    @property
    def label(self) -> str:
        if self.high is None:
            return f"{self.low}+"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


@dataclass(frozen=True)
class StreakLengths:
    frequency: str
    buckets: list[LengthBucket]
    users: int  # every user of the tenant, with a streak or not

    @property
    def with_streak(self) -> int:
        return sum(bucket.users for bucket in self.buckets)


def _live_lengths(tenant: Tenant, frequency: str, now: dt.datetime) -> Iterator[tuple[int, int]]:
    """(current length, users) of the live streaks. A stored streak whose due instant (when a
    period will have been missed) is still ahead is exactly as stored: those are counted in
    SQL. Overdue ones (the freeze job has not settled them yet, normally few) are settled in
    memory like a streak read, pauses and freezes included."""
    live = StreakState.objects.filter(
        tenant=tenant, frequency=frequency, enabled=True, length__gt=0
    )
    current = Q(due_at__isnull=True) | Q(due_at__gt=now)
    yield from (
        live.filter(current).values("length").annotate(n=Count("id")).values_list("length", "n")
    )
    overdue = live.exclude(current).select_related("user").order_by("pk")
    rows = overdue.iterator(chunk_size=_SETTLE_CHUNK)
    while chunk := list(islice(rows, _SETTLE_CHUNK)):
        pauses = pauses_for([state.user for state in chunk])
        for state in chunk:
            view = streak_view(tenant, state.user, state, now, pauses[state.user_id])
            if view.length > 0:
                yield view.length, 1


def streak_lengths(tenant: Tenant, now: dt.datetime) -> StreakLengths:
    """Live streaks bucketed by current length (STREAK_BUCKETS)."""
    frequency = streak_config(tenant).frequency
    counts = [0] * len(STREAK_BUCKETS)
    for length, users in _live_lengths(tenant, frequency, now):
        for index, (low, high) in enumerate(STREAK_BUCKETS):
            if length >= low and (high is None or length <= high):
                counts[index] += users
                break
    return StreakLengths(
        frequency=frequency,
        buckets=[
            LengthBucket(low, high, n)
            for (low, high), n in zip(STREAK_BUCKETS, counts, strict=True)
        ],
        users=EndUser.objects.filter(tenant=tenant).count(),
    )


@dataclass(frozen=True)
class StreakPeriodCount:
    start: dt.date
    end: dt.date
    streaks: int


@dataclass(frozen=True)
class StreakActivity:
    frequency: str
    periods: list[StreakPeriodCount]


def streak_activity(tenant: Tenant, period: DateRange) -> StreakActivity:
    """Active streaks per period (day, week or month of the tenant's frequency) overlapping
    the range, from the stored streak periods (see the module docstring). One query."""
    frequency = streak_config(tenant).frequency
    rows = (
        StreakPeriod.objects.filter(
            tenant=tenant,
            frequency=frequency,
            period_start__lte=period.end,
            period_end__gte=period.start,
            length__gt=0,
            reset_at__isnull=True,
        )
        .values("period_start")
        .annotate(n=Count("id"))
        .values_list("period_start", "n")
    )
    counts = dict(rows)
    periods = []
    start = streaks.period_start(period.start, frequency)
    while start <= period.end:
        end = streaks.period_end(start, frequency)
        periods.append(StreakPeriodCount(start, end, counts.get(start, 0)))
        start = streaks.next_period(start, frequency)
    return StreakActivity(frequency, periods)


# --- points ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PointsDay:
    date: dt.date
    by_trigger_type: dict[str, int]

    @property
    def points(self) -> int:
        return sum(self.by_trigger_type.values())


@dataclass(frozen=True)
class LevelCount:
    key: str | None  # None: below every level
    name: str
    points: int
    users: int


@dataclass(frozen=True)
class SystemPoints:
    system: SystemDef
    trigger_types: list[str]  # every type seen in the range, in TRIGGER_ORDER first
    days: list[PointsDay]
    levels: list[LevelCount] = field(default_factory=list)


TRIGGER_ORDER = ("metric", "streak", "achievement", "time", "user_creation")


def points_summary(tenant: Tenant, period: DateRange) -> list[SystemPoints]:
    """Per active points system: points awarded (net, from the ledger) per local date and
    trigger type (as the award's trigger snapshot records it, so deleted triggers still count),
    and how many users are at each level now. One ledger query, then per system one or two
    for the levels (apps.points.selectors.level_counts) and one user count."""
    systems = list(points_config(tenant).values())
    rows = (
        PointsAward.objects.filter(
            tenant=tenant, local_date__gte=period.start, local_date__lte=period.end
        )
        .values("system_id", "local_date", kind=KT("trigger_snapshot__type"))
        .annotate(points=Sum("awarded"))
        .values_list("system_id", "local_date", "kind", "points")
    )
    awarded: dict[int, dict[dt.date, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for system_pk, day, kind, points in rows:
        kind = kind or "unknown"
        by_type = awarded[system_pk][day]
        by_type[kind] = by_type.get(kind, 0) + int(points)
    users = EndUser.objects.filter(tenant=tenant).count() if systems else 0
    result = []
    for system in systems:
        days = awarded.get(system.pk, {})
        seen = {kind for by_type in days.values() for kind in by_type}
        kinds = [k for k in TRIGGER_ORDER if k in seen] + sorted(seen - set(TRIGGER_ORDER))
        series = [
            PointsDay(day, {kind: days.get(day, {}).get(kind, 0) for kind in kinds})
            for day in period.days()
        ]
        result.append(SystemPoints(system, kinds, series, _levels(tenant, system, users)))
    return result


def _levels(tenant: Tenant, system: SystemDef, users: int) -> list[LevelCount]:
    if not system.levels:
        return []
    counts = level_counts(tenant, system)
    levels = [LevelCount(lv.key, lv.name, lv.points, counts.get(lv.pk, 0)) for lv in system.levels]
    below = users - sum(level.users for level in levels)
    if below > 0:
        levels.insert(0, LevelCount(None, "No level", 0, below))
    return levels


# --- achievements ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CompletionDay:
    date: dt.date
    completions: int
    backdated: int  # of which completed by backdating (an activation or an edit)


@dataclass(frozen=True)
class AchievementRarity:
    achievement: AchievementDef
    completions: int  # ever
    in_range: int
    rarity: float  # percent of the tenant's users who completed it (as the API reports it)


@dataclass(frozen=True)
class AchievementsSummary:
    users: int
    days: list[CompletionDay]
    achievements: list[AchievementRarity]


def achievements_summary(tenant: Tenant, period: DateRange) -> AchievementsSummary:
    """Completions per day and per achievement, and each achievement's rarity. Completions
    carry an instant, not a local date: days here are the server's (TIME_ZONE) dates. Three
    aggregate queries and a user count."""
    tz = timezone.get_current_timezone()
    since = dt.datetime.combine(period.start, dt.time(), tz)
    until = dt.datetime.combine(period.end + dt.timedelta(days=1), dt.time(), tz)
    completions = AchievementCompletion.objects.filter(
        tenant=tenant, completed_at__gte=since, completed_at__lt=until
    )
    per_day = {
        day: (n, backdated)
        for day, n, backdated in completions.annotate(day=TruncDate("completed_at"))
        .values("day")
        .annotate(n=Count("id"), backdated=Count("id", filter=Q(backdated=True)))
        .values_list("day", "n", "backdated")
    }
    in_range = dict(
        completions.values("achievement_id")
        .annotate(n=Count("id"))
        .values_list("achievement_id", "n")
    )
    stats = achievement_stats(tenant)
    return AchievementsSummary(
        users=stats.users,
        days=[CompletionDay(day, *per_day.get(day, (0, 0))) for day in period.days()],
        achievements=[
            AchievementRarity(
                achievement=definition,
                completions=stats.completions.get(pk, 0),
                in_range=in_range.get(pk, 0),
                rarity=rarity(stats.completions.get(pk, 0), stats.users),
            )
            for pk, definition in achievement_definitions(tenant).items()
        ],
    )


# --- leaderboards ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    start: dt.date
    end: dt.date | None
    participants: int


@dataclass(frozen=True)
class BoardParticipation:
    board: BoardDef
    current: Run | None  # the run holding today (active boards), else the last one with entries
    runs: list[Run]  # runs with participants overlapping the range, oldest first


def leaderboard_participation(
    tenant: Tenant, period: DateRange, today: dt.date
) -> list[BoardParticipation]:
    """Participants (distinct users with an entry) per leaderboard run. One aggregate query
    over the entries, grouped by board and run."""
    boards = board_definitions(tenant)
    rows = (
        LeaderboardEntry.objects.filter(leaderboard__tenant=tenant)
        .values("leaderboard_id", "run_start")
        .annotate(n=Count("user_id", distinct=True))
        .values_list("leaderboard_id", "run_start", "n")
    )
    runs: dict[int, dict[dt.date, int]] = defaultdict(dict)
    for board_pk, run_start, n in rows:
        runs[board_pk][run_start] = n
    result = []
    for board in boards.values():
        counts = runs.get(board.pk, {})
        current_start = board.run_for(today) if board.status == BoardStatus.ACTIVE else None
        if current_start is None and counts:
            current_start = max(counts)
        current = (
            Run(current_start, board.run_end(current_start), counts.get(current_start, 0))
            if current_start is not None
            else None
        )
        in_range = []
        for start in sorted(counts):
            end = board.run_end(start)
            if start <= period.end and (end is None or end >= period.start):
                in_range.append(Run(start, end, counts[start]))
        result.append(BoardParticipation(board, current, in_range))
    return result


# --- overview --------------------------------------------------------------------------------

OVERVIEW_DAYS = 7


@dataclass(frozen=True)
class Overview:
    date: dt.date
    users: int
    dau: int
    mau: int
    events: list[DayCount]  # the last OVERVIEW_DAYS days, ending `date`


def overview(tenant: Tenant, today: dt.date) -> Overview:
    """The home page's numbers, with the definitions of the series above: four indexed
    queries (the rollup by tenant and date, the users count)."""
    rollups = MetricDailyChange.objects.filter(tenant=tenant)
    since = today - dt.timedelta(days=OVERVIEW_DAYS - 1)
    per_day = dict(
        rollups.filter(date__gte=since, date__lte=today)
        .values("date")
        .annotate(events=Sum("events"))
        .values_list("date", "events")
    )
    month = rollups.filter(date__gte=today - dt.timedelta(days=MAU_DAYS - 1), date__lte=today)
    return Overview(
        date=today,
        users=EndUser.objects.filter(tenant=tenant).count(),
        dau=rollups.filter(date=today).values("user_id").distinct().count(),
        mau=month.values("user_id").distinct().count(),
        events=[DayCount(day, per_day.get(day, 0)) for day in DateRange(since, today).days()],
    )
