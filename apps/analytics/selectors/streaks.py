"""Live streaks by current length, and active streaks per period of the tenant's frequency,
from streak state and the stored streak periods (definitions in the package docstring)."""

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from django.db.models import Count, Q

from apps.accounts.models import Tenant
from apps.analytics.selectors.ranges import DateRange
from apps.streaks import domain as streaks
from apps.streaks.models import StreakPeriod, StreakState
from apps.streaks.selectors import pauses_for, streak_config, streak_view
from apps.users.models import EndUser

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
    the range, from the stored streak periods (see the package docstring). One query."""
    frequency = streak_config(tenant).frequency
    rows = (
        StreakPeriod.objects.filter(
            tenant=tenant,
            frequency=frequency,
            period_start__lte=period.end,
            period_end__gte=period.start,
            length__gt=0,
        )
        # A reset period counts again once a restore carried the streak through it.
        .filter(Q(reset_at__isnull=True) | Q(restored_at__isnull=False))
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
