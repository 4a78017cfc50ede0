"""What a year in review is made of (the periods, the figures of a metric or points system
in each, the achievements, rankings and longest streak) and the pure rules that compute them:
percent change, percentiles, weeks and months, the busiest period. No queries."""

import bisect
import datetime as dt
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from apps.achievements.selectors import AchievementDef, Stats
from apps.leaderboards.selectors import BoardDef
from apps.metrics.selectors import MetricDef
from apps.points.selectors import SystemDef
from apps.users.models import EndUser

CUT_POINTS = 1001
_PLACES = 6  # the decimal places of stored amounts


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
    """The growth of the total over the period, in percent (see the package docstring)."""
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
