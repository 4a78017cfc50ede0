"""The year in review assembled: everything is read once for the year, then each period (the
busiest day, week and month, and the year) is cut from it."""

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from apps.accounts.models import Tenant
from apps.achievements.selectors import achievement_stats
from apps.analytics.wrapped.figures import (
    Completion,
    Figures,
    MetricFigures,
    Period,
    PeriodActivity,
    PointsFigures,
    Ranking,
    Series,
    Wrapped,
    busiest,
    month_of,
    week_of,
)
from apps.analytics.wrapped.reads import (
    _attribute_series,
    _best_rankings,
    _completions,
    _distributions,
    _longest_streak,
    _metric_series,
    _points_series,
    _snapshots,
)
from apps.metrics.selectors import MetricDef, metric_definitions
from apps.points.selectors import SystemDef, points_config
from apps.users.models import EndUser
from apps.users.selectors import attribute_definitions


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
    """The user's year in review (rules in the package docstring). Queries: 2 for metric
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
