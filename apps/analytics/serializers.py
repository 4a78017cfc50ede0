"""Wire shapes of the year in review (WrappedResponse, reference §3.8), each one `Shape`
(apps/core/api/shapes.py) that both documents and renders it. They render what
apps.analytics.wrapped computed; no queries. The user, achievement and leaderboard shapes are
those of their own apps.

The periods render a `PeriodActivity` with, as context, the whole `Wrapped` (the achievement
statistics, and the year's longest streak). The wire writes a period's own fields (its date,
its bounds or its month) before the activity, the year's longest streak after it: each period
is a mixin of its own fields, then `WrappedActivityPeriod` (inherited fields come first)."""

from typing import Any, NamedTuple

from rest_framework import serializers

from apps.achievements.wire import UserAchievementWithStatsResponse, user_achievement_render
from apps.analytics.wrapped import LongestStreak, PeriodActivity
from apps.core.api.shapes import OMIT, Shape, out
from apps.leaderboards.wire import UserLeaderboardResponse, user_leaderboard_response_render
from apps.streaks.choices import Frequency
from apps.users.wire import User, user_render


def _current_total(path: str) -> Any:
    return out(serializers.FloatField(help_text="The total at the end of the period."), path)


def _change(path: str) -> Any:
    return out(serializers.FloatField(help_text="The net change within the period."), path)


def _percent_change(path: str) -> Any:
    return out(
        serializers.FloatField(
            help_text="The change relative to the total at the start of the period, in percent "
            "(one decimal); from a start of 0: 100 for a gain, -100 for a loss, 0 without "
            "change."
        ),
        path,
    )


def _percentile() -> Any:
    # Only weeks, months and the year carry a percentile (the SDK models: "only included for
    # weekly, monthly, and yearly aggregation periods"): absent, not null, for a day.
    return out(
        serializers.FloatField(
            required=False,
            help_text="Percent of the users active on it in the same period whose change was "
            "at most the user's (one decimal). Only for weeks, months and the year.",
        ),
        lambda item, _: OMIT if item.figures.percentile is None else item.figures.percentile,
    )


class WrappedMetricByAttributeValue(Shape):
    """The figures of the events carrying one value of an event attribute."""

    # Renders a Figures (never with a percentile) with, as context, its MetricDef.
    name = out(serializers.CharField(required=False), "context.name")
    units = out(
        serializers.CharField(required=False, allow_null=True), lambda _, m: m.units or None
    )
    currentTotal = _current_total("total")
    changeThisPeriod = _change("change")
    percentChange = _percent_change("percent_change")


class WrappedMetric(Shape):
    """A metric's figures in the period."""

    # Renders a MetricFigures.
    name = out(serializers.CharField(), "metric.name")
    units = out(serializers.CharField(allow_null=True), lambda item, _: item.metric.units or None)
    currentTotal = _current_total("figures.total")
    changeThisPeriod = _change("figures.change")
    percentChange = _percent_change("figures.percent_change")
    percentileThisPeriod = _percentile()
    byAttribute = out(
        serializers.DictField(
            child=serializers.DictField(child=WrappedMetricByAttributeValue()),
            help_text="By event attribute key, then value: the values used in the period.",
        ),
        lambda item, _: {
            key: {
                value: WrappedMetricByAttributeValue.render(figures, item.metric)
                for value, figures in values.items()
            }
            for key, values in item.by_attribute.items()
        },
    )


class WrappedPoints(Shape):
    """A points system's figures in the period."""

    # Renders a PointsFigures.
    name = out(serializers.CharField(), "system.name")
    description = out(
        serializers.CharField(allow_null=True), lambda item, _: item.system.description or None
    )
    currentTotal = _current_total("figures.total")
    changeThisPeriod = _change("figures.change")
    percentChange = _percent_change("figures.percent_change")
    percentileThisPeriod = _percentile()


def _iso_or_none(attribute: str) -> Any:
    def get(streak: LongestStreak, _: Any) -> str | None:
        day = getattr(streak, attribute)
        return day.isoformat() if day else None

    return get


class WrappedStreak(Shape):
    """The longest the user's streak was during the year."""

    # Renders a LongestStreak.
    length = serializers.IntegerField(help_text="0 when the user had no streak in the year.")
    frequency = serializers.ChoiceField(choices=Frequency.choices)
    periodStart = out(
        serializers.DateField(
            allow_null=True, help_text="First day of that streak (same as started)."
        ),
        _iso_or_none("started"),
    )
    periodEnd = out(
        serializers.DateField(
            allow_null=True, help_text="Last day of the period in which it reached this length."
        ),
        _iso_or_none("end"),
    )
    started = out(
        serializers.DateField(
            allow_null=True, help_text="First day of that streak, perhaps in the year before."
        ),
        _iso_or_none("started"),
    )


class _Rank(NamedTuple):
    """The context of UserLeaderboardResponse: the user's best rank and its value."""

    rank: int
    value: int | None


def _leaderboards(activity: PeriodActivity, _: Any) -> dict[str, Any]:
    render = user_leaderboard_response_render
    return {
        r.board.key: render(
            r.board, r.run_start, r.rank, int(r.value) if r.value is not None else None
        )
        for r in activity.leaderboards
    }


class WrappedActivityPeriod(Shape):
    # No docstring: subclasses would inherit it as their component description.
    # Renders a PeriodActivity with, as context, the Wrapped it belongs to.
    metrics = out(
        serializers.DictField(child=WrappedMetric(), help_text="By metric key."),
        lambda a, _: {item.metric.key: WrappedMetric.render(item) for item in a.metrics},
    )
    points = out(
        serializers.DictField(child=WrappedPoints(), help_text="By points system key."),
        lambda a, _: {item.system.key: WrappedPoints.render(item) for item in a.points},
    )
    achievements = out(
        UserAchievementWithStatsResponse(
            many=True, help_text="Completed in the period, oldest first."
        ),
        # A completion implies statistics were read (wrapped.user_wrapped).
        lambda a, w: [
            user_achievement_render(c.achievement, c.completed_at, w.achievement_stats)
            for c in a.achievements
        ],
    )
    leaderboards = out(
        serializers.DictField(
            child=UserLeaderboardResponse(),
            help_text="By leaderboard key: the user's best daily rank in the period.",
        ),
        _leaderboards,
    )


class _Day(Shape):
    date = out(serializers.DateField(), lambda a, _: a.period.start.isoformat())


class WrappedMostActiveDay(_Day, WrappedActivityPeriod):
    """The day with the most metric events (the earliest on a tie)."""


class _Week(Shape):
    start = out(serializers.DateField(), lambda a, _: a.period.start.isoformat())
    end = out(serializers.DateField(), lambda a, _: a.period.end.isoformat())


class WrappedMostActiveWeek(_Week, WrappedActivityPeriod):
    """The Monday-to-Sunday week (clipped to the year) with the most metric events."""


class _Month(Shape):
    month = out(
        serializers.IntegerField(min_value=0, max_value=11, help_text="0 = January."),
        lambda a, _: a.period.start.month - 1,
    )


class WrappedMostActiveMonth(_Month, WrappedActivityPeriod):
    """The month with the most metric events (the earliest on a tie)."""


class WrappedEntireYear(WrappedActivityPeriod):
    """The whole year."""

    longestStreak = out(WrappedStreak(), lambda _, w: WrappedStreak.render(w.longest_streak))


class WrappedActivity(Shape):
    """A day, week or month is active when the user recorded a metric event on it."""

    # Renders a Wrapped.
    daysActive = serializers.IntegerField()
    weeksActive = serializers.IntegerField()
    monthsActive = serializers.IntegerField()
    mostActiveDay = out(WrappedMostActiveDay(), lambda w, _: WrappedMostActiveDay.render(w.day, w))
    mostActiveWeek = out(
        WrappedMostActiveWeek(), lambda w, _: WrappedMostActiveWeek.render(w.week, w)
    )
    mostActiveMonth = out(
        WrappedMostActiveMonth(), lambda w, _: WrappedMostActiveMonth.render(w.month, w)
    )
    entireYear = out(WrappedEntireYear(), lambda w, _: WrappedEntireYear.render(w.year, w))


class WrappedResponse(Shape):
    """A user's year in review."""

    # Renders a Wrapped with, as context, its Tenant.
    user = out(User(), lambda w, tenant: user_render(w.user, tenant))
    activity = out(WrappedActivity(), lambda w, _: WrappedActivity.render(w))
