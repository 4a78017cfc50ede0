"""Active users (DAU and MAU), new users and weekly retention cohorts, from the metric
daily rollup and the users' creation dates (definitions in the package docstring), and the
home page's overview of them."""

import datetime as dt
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Sum

from apps.accounts.models import Tenant
from apps.analytics.selectors.ranges import DateRange
from apps.metrics.models import MetricDailyChange
from apps.streaks import domain as streaks
from apps.users.domain import local_date
from apps.users.models import EndUser

MAU_DAYS = 30
RETENTION_WEEKS = 12


def cohort_week(day: dt.date) -> dt.date:
    """Weeks run Sunday to Saturday, as streak weeks do (docs/architecture.md §6)."""
    return streaks.period_start(day, streaks.WEEKLY)


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
    """Weekly cohorts of the users who started in the range (see the package docstring). Two
    queries: the users created in the range, and their distinct active days."""
    cohort_of = {pk: (cohort_week(day), control) for pk, day, control in _creations(tenant, period)}
    sizes = Counter(cohort_of.values())
    first_week, last_week = cohort_week(period.start), cohort_week(period.end)
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
        offset = (cohort_week(day) - cohort[0]).days // 7
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


# --- overview --------------------------------------------------------------------------------

OVERVIEW_DAYS = 7


@dataclass(frozen=True)
class Overview:
    date: dt.date
    users: int
    dau: int
    mau: int
    events: list[DayCount]  # the last OVERVIEW_DAYS days, ending `date`
    # Events on users' dates after `date`: users east of the reporting zone, already on
    # tomorrow; counted on that date once it is the tenant's today.
    events_ahead: int = 0


def overview(tenant: Tenant, today: dt.date) -> Overview:
    """The home page's numbers, with the definitions of the series above, for `today` (the
    tenant's reporting-zone date): five indexed queries (the rollup by tenant and date, the
    users count)."""
    rollups = MetricDailyChange.objects.filter(tenant=tenant)
    since = today - dt.timedelta(days=OVERVIEW_DAYS - 1)
    per_day = dict(
        rollups.filter(date__gte=since, date__lte=today)
        .values("date")
        .annotate(events=Sum("events"))
        .values_list("date", "events")
    )
    month = rollups.filter(date__gte=today - dt.timedelta(days=MAU_DAYS - 1), date__lte=today)
    # A user's date is at most two days past the reporting zone's (UTC+14 against UTC-12).
    ahead = rollups.filter(date__gt=today, date__lte=today + dt.timedelta(days=2)).aggregate(
        events=Sum("events")
    )["events"]
    return Overview(
        date=today,
        users=EndUser.objects.filter(tenant=tenant).count(),
        dau=rollups.filter(date=today).values("user_id").distinct().count(),
        mau=month.values("user_id").distinct().count(),
        events=[DayCount(day, per_day.get(day, 0)) for day in DateRange(since, today).days()],
        events_ahead=ahead or 0,
    )
