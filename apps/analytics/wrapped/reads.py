"""The reads of a year in review: the user's metric, points and event-attribute changes from
the rollups and events, the tenant's distributions of changes (cached), completions,
leaderboard snapshots and the longest streak; a fixed number of queries."""

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from typing import Any

from django.core.cache import cache
from django.db.models import Sum

from apps.accounts.models import Tenant
from apps.achievements.models import AchievementCompletion
from apps.achievements.selectors import achievement_definitions, visible_to
from apps.analytics.wrapped.figures import (
    Completion,
    LongestStreak,
    Period,
    Ranking,
    Series,
    _float,
    cut_points,
)
from apps.leaderboards.choices import Status as BoardStatus
from apps.leaderboards.models import LeaderboardSnapshot
from apps.leaderboards.selectors import board_definitions
from apps.metrics.models import MetricDailyChange, MetricEvent
from apps.points.models import PointsDailyChange
from apps.streaks.models import StreakPeriod
from apps.streaks.selectors import streak_config
from apps.users.domain import local_date
from apps.users.models import EndUser

PERCENTILE_TTL = 60 * 60  # seconds: a percentile may lag the period's latest events by an hour
VISIBLE_BOARDS = (BoardStatus.ACTIVE, BoardStatus.SCHEDULED, BoardStatus.FINISHED)
_SECOND_DAY = dt.date.min + dt.timedelta(days=1)


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
