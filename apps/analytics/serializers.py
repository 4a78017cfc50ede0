"""Wire shapes of the year in review (WrappedResponse, reference §3.8): each one `Shape`
(apps/core/api/shapes.py) that documents it, and below it the typed function that renders it
(`@renders`). They render what apps.analytics.wrapped computed; no queries. The user,
achievement and leaderboard shapes are those of their own apps.

The periods render a `PeriodActivity` with the whole `Wrapped` (the achievement statistics,
and the year's longest streak). The wire writes a period's own fields (its date, its bounds or
its month) before the activity, the year's longest streak after it: each period is a mixin of
its own fields, then `WrappedActivityPeriod` (inherited fields come first)."""

from typing import Any

from rest_framework import serializers

from apps.accounts.models import Tenant
from apps.achievements.wire import UserAchievementWithStatsResponse, user_achievement_render
from apps.analytics.wrapped import (
    Figures,
    LongestStreak,
    MetricFigures,
    PeriodActivity,
    PointsFigures,
    Wrapped,
)
from apps.core.api.shapes import Shape, renders
from apps.leaderboards.wire import UserLeaderboardResponse, user_leaderboard_response_render
from apps.metrics.selectors import MetricDef
from apps.streaks.choices import Frequency
from apps.users.wire import User, user_render


def _current_total() -> Any:
    return serializers.FloatField(help_text="The total at the end of the period.")


def _change() -> Any:
    return serializers.FloatField(help_text="The net change within the period.")


def _percent_change() -> Any:
    return serializers.FloatField(
        help_text="The change relative to the total at the start of the period, in percent "
        "(one decimal); from a start of 0: 100 for a gain, -100 for a loss, 0 without "
        "change."
    )


def _percentile() -> Any:
    # Only weeks, months and the year carry a percentile (the SDK models: "only included for
    # weekly, monthly, and yearly aggregation periods"): absent, not null, for a day.
    return serializers.FloatField(
        required=False,
        help_text="Percent of the users active on it in the same period whose change was "
        "at most the user's (one decimal). Only for weeks, months and the year.",
    )


class WrappedMetricByAttributeValue(Shape):
    """The figures of the events carrying one value of an event attribute."""

    name = serializers.CharField(required=False)
    units = serializers.CharField(required=False, allow_null=True)
    currentTotal = _current_total()
    changeThisPeriod = _change()
    percentChange = _percent_change()


@renders(WrappedMetricByAttributeValue)
def wrapped_metric_by_attribute_value_render(figures: Figures, metric: MetricDef) -> dict[str, Any]:
    """`figures` (never with a percentile) of events of `metric`."""
    return {
        "name": metric.name,
        "units": metric.units or None,
        "currentTotal": figures.total,
        "changeThisPeriod": figures.change,
        "percentChange": figures.percent_change,
    }


class WrappedMetric(Shape):
    """A metric's figures in the period."""

    name = serializers.CharField()
    units = serializers.CharField(allow_null=True)
    currentTotal = _current_total()
    changeThisPeriod = _change()
    percentChange = _percent_change()
    percentileThisPeriod = _percentile()
    byAttribute = serializers.DictField(
        child=serializers.DictField(child=WrappedMetricByAttributeValue()),
        help_text="By event attribute key, then value: the values used in the period.",
    )


@renders(WrappedMetric)
def wrapped_metric_render(item: MetricFigures) -> dict[str, Any]:
    metric, figures = item.metric, item.figures
    body: dict[str, Any] = {
        "name": metric.name,
        "units": metric.units or None,
        "currentTotal": figures.total,
        "changeThisPeriod": figures.change,
        "percentChange": figures.percent_change,
    }
    if figures.percentile is not None:
        body["percentileThisPeriod"] = figures.percentile
    body["byAttribute"] = {
        key: {
            value: wrapped_metric_by_attribute_value_render(value_figures, metric)
            for value, value_figures in values.items()
        }
        for key, values in item.by_attribute.items()
    }
    return body


class WrappedPoints(Shape):
    """A points system's figures in the period."""

    name = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    currentTotal = _current_total()
    changeThisPeriod = _change()
    percentChange = _percent_change()
    percentileThisPeriod = _percentile()


@renders(WrappedPoints)
def wrapped_points_render(item: PointsFigures) -> dict[str, Any]:
    system, figures = item.system, item.figures
    body: dict[str, Any] = {
        "name": system.name,
        "description": system.description or None,
        "currentTotal": figures.total,
        "changeThisPeriod": figures.change,
        "percentChange": figures.percent_change,
    }
    if figures.percentile is not None:
        body["percentileThisPeriod"] = figures.percentile
    return body


class WrappedStreak(Shape):
    """The longest the user's streak was during the year."""

    length = serializers.IntegerField(help_text="0 when the user had no streak in the year.")
    frequency = serializers.ChoiceField(choices=Frequency.choices)
    periodStart = serializers.DateField(
        allow_null=True, help_text="First day of that streak (same as started)."
    )
    periodEnd = serializers.DateField(
        allow_null=True, help_text="Last day of the period in which it reached this length."
    )
    started = serializers.DateField(
        allow_null=True, help_text="First day of that streak, perhaps in the year before."
    )


@renders(WrappedStreak)
def wrapped_streak_render(streak: LongestStreak) -> dict[str, Any]:
    started = streak.started.isoformat() if streak.started else None
    return {
        "length": streak.length,
        "frequency": streak.frequency,
        "periodStart": started,
        "periodEnd": streak.end.isoformat() if streak.end else None,
        "started": started,
    }


class WrappedActivityPeriod(Shape):
    # No docstring: subclasses would inherit it as their component description.
    metrics = serializers.DictField(child=WrappedMetric(), help_text="By metric key.")
    points = serializers.DictField(child=WrappedPoints(), help_text="By points system key.")
    achievements = UserAchievementWithStatsResponse(
        many=True, help_text="Completed in the period, oldest first."
    )
    leaderboards = serializers.DictField(
        child=UserLeaderboardResponse(),
        help_text="By leaderboard key: the user's best daily rank in the period.",
    )


# The values of WrappedActivityPeriod's fields, which each period's render writes after its own.


def _metrics(activity: PeriodActivity) -> dict[str, Any]:
    return {item.metric.key: wrapped_metric_render(item) for item in activity.metrics}


def _points(activity: PeriodActivity) -> dict[str, Any]:
    return {item.system.key: wrapped_points_render(item) for item in activity.points}


def _achievements(activity: PeriodActivity, wrapped: Wrapped) -> list[dict[str, Any]]:
    # A completion implies statistics were read (wrapped.user_wrapped).
    return [
        user_achievement_render(c.achievement, c.completed_at, wrapped.achievement_stats)
        for c in activity.achievements
    ]


def _leaderboards(activity: PeriodActivity) -> dict[str, Any]:
    render = user_leaderboard_response_render
    return {
        r.board.key: render(
            r.board, r.run_start, r.rank, int(r.value) if r.value is not None else None
        )
        for r in activity.leaderboards
    }


class _Day(Shape):
    date = serializers.DateField()


class WrappedMostActiveDay(_Day, WrappedActivityPeriod):
    """The day with the most metric events (the earliest on a tie)."""


@renders(WrappedMostActiveDay)
def wrapped_most_active_day_render(activity: PeriodActivity, wrapped: Wrapped) -> dict[str, Any]:
    return {
        "date": activity.period.start.isoformat(),
        "metrics": _metrics(activity),
        "points": _points(activity),
        "achievements": _achievements(activity, wrapped),
        "leaderboards": _leaderboards(activity),
    }


class _Week(Shape):
    start = serializers.DateField()
    end = serializers.DateField()


class WrappedMostActiveWeek(_Week, WrappedActivityPeriod):
    """The Monday-to-Sunday week (clipped to the year) with the most metric events."""


@renders(WrappedMostActiveWeek)
def wrapped_most_active_week_render(activity: PeriodActivity, wrapped: Wrapped) -> dict[str, Any]:
    return {
        "start": activity.period.start.isoformat(),
        "end": activity.period.end.isoformat(),
        "metrics": _metrics(activity),
        "points": _points(activity),
        "achievements": _achievements(activity, wrapped),
        "leaderboards": _leaderboards(activity),
    }


class _Month(Shape):
    month = serializers.IntegerField(min_value=0, max_value=11, help_text="0 = January.")


class WrappedMostActiveMonth(_Month, WrappedActivityPeriod):
    """The month with the most metric events (the earliest on a tie)."""


@renders(WrappedMostActiveMonth)
def wrapped_most_active_month_render(activity: PeriodActivity, wrapped: Wrapped) -> dict[str, Any]:
    return {
        "month": activity.period.start.month - 1,
        "metrics": _metrics(activity),
        "points": _points(activity),
        "achievements": _achievements(activity, wrapped),
        "leaderboards": _leaderboards(activity),
    }


class WrappedEntireYear(WrappedActivityPeriod):
    """The whole year."""

    longestStreak = WrappedStreak()


@renders(WrappedEntireYear)
def wrapped_entire_year_render(activity: PeriodActivity, wrapped: Wrapped) -> dict[str, Any]:
    return {
        "metrics": _metrics(activity),
        "points": _points(activity),
        "achievements": _achievements(activity, wrapped),
        "leaderboards": _leaderboards(activity),
        "longestStreak": wrapped_streak_render(wrapped.longest_streak),
    }


class WrappedActivity(Shape):
    """A day, week or month is active when the user recorded a metric event on it."""

    daysActive = serializers.IntegerField()
    weeksActive = serializers.IntegerField()
    monthsActive = serializers.IntegerField()
    mostActiveDay = WrappedMostActiveDay()
    mostActiveWeek = WrappedMostActiveWeek()
    mostActiveMonth = WrappedMostActiveMonth()
    entireYear = WrappedEntireYear()


@renders(WrappedActivity)
def wrapped_activity_render(wrapped: Wrapped) -> dict[str, Any]:
    return {
        "daysActive": wrapped.days_active,
        "weeksActive": wrapped.weeks_active,
        "monthsActive": wrapped.months_active,
        "mostActiveDay": wrapped_most_active_day_render(wrapped.day, wrapped),
        "mostActiveWeek": wrapped_most_active_week_render(wrapped.week, wrapped),
        "mostActiveMonth": wrapped_most_active_month_render(wrapped.month, wrapped),
        "entireYear": wrapped_entire_year_render(wrapped.year, wrapped),
    }


class WrappedResponse(Shape):
    """A user's year in review."""

    user = User()
    activity = WrappedActivity()


@renders(WrappedResponse)
def wrapped_response_render(wrapped: Wrapped, tenant: Tenant) -> dict[str, Any]:
    return {"user": user_render(wrapped.user, tenant), "activity": wrapped_activity_render(wrapped)}
