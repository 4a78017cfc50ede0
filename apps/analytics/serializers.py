"""Wire shapes of the year in review (WrappedResponse, reference §3.8). Renders what
apps.analytics.wrapped computed; no queries."""

from typing import Any

from apps.accounts.models import Tenant
from apps.achievements.selectors import Stats
from apps.achievements.wire import user_achievement_render
from apps.analytics.wrapped import (
    Completion,
    Figures,
    LongestStreak,
    MetricFigures,
    PeriodActivity,
    PointsFigures,
    Ranking,
    Wrapped,
)
from apps.leaderboards.services import board_render
from apps.users.wire import user_render


def _figures(figures: Figures) -> dict[str, Any]:
    body: dict[str, Any] = {
        "currentTotal": figures.total,
        "changeThisPeriod": figures.change,
        "percentChange": figures.percent_change,
    }
    # Only weeks, months and the year carry a percentile (the SDK models: "only included for
    # weekly, monthly, and yearly aggregation periods"): absent, not null, for a day.
    if figures.percentile is not None:
        body["percentileThisPeriod"] = figures.percentile
    return body


def _metric(item: MetricFigures) -> dict[str, Any]:
    name, units = item.metric.name, item.metric.units or None
    return {
        "name": name,
        "units": units,
        **_figures(item.figures),
        "byAttribute": {
            key: {
                value: {"name": name, "units": units, **_figures(figures)}
                for value, figures in values.items()
            }
            for key, values in item.by_attribute.items()
        },
    }


def _points(item: PointsFigures) -> dict[str, Any]:
    return {
        "name": item.system.name,
        "description": item.system.description or None,
        **_figures(item.figures),
    }


def _achievement(completion: Completion, stats: Stats | None) -> dict[str, Any]:
    # A completion implies statistics were read (wrapped.user_wrapped).
    return user_achievement_render(completion.achievement, completion.completed_at, stats)


def _ranking(ranking: Ranking) -> dict[str, Any]:
    return {
        **board_render(ranking.board, ranking.run_start),
        "rank": ranking.rank,
        "value": int(ranking.value) if ranking.value is not None else None,
    }


def _period(activity: PeriodActivity, stats: Stats | None) -> dict[str, Any]:
    """WrappedActivityPeriod."""
    return {
        "metrics": {item.metric.key: _metric(item) for item in activity.metrics},
        "points": {item.system.key: _points(item) for item in activity.points},
        "achievements": [_achievement(c, stats) for c in activity.achievements],
        "leaderboards": {r.board.key: _ranking(r) for r in activity.leaderboards},
    }


def _streak(streak: LongestStreak) -> dict[str, Any]:
    return {
        "length": streak.length,
        "frequency": streak.frequency,
        "periodStart": streak.started.isoformat() if streak.started else None,
        "periodEnd": streak.end.isoformat() if streak.end else None,
        "started": streak.started.isoformat() if streak.started else None,
    }


def wrapped_render(wrapped: Wrapped, tenant: Tenant) -> dict[str, Any]:
    stats = wrapped.achievement_stats
    return {
        "user": user_render(wrapped.user, tenant),
        "activity": {
            "daysActive": wrapped.days_active,
            "weeksActive": wrapped.weeks_active,
            "monthsActive": wrapped.months_active,
            "mostActiveDay": {
                "date": wrapped.day.period.start.isoformat(),
                **_period(wrapped.day, stats),
            },
            "mostActiveWeek": {
                "start": wrapped.week.period.start.isoformat(),
                "end": wrapped.week.period.end.isoformat(),
                **_period(wrapped.week, stats),
            },
            "mostActiveMonth": {
                "month": wrapped.month.period.start.month - 1,  # 0 = January
                **_period(wrapped.month, stats),
            },
            "entireYear": {
                **_period(wrapped.year, stats),
                "longestStreak": _streak(wrapped.longest_streak),
            },
        },
    }
