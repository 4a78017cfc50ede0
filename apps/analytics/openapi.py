"""OpenAPI documentation of the year in review (documentation only).

Shapes follow the Trophy wire models (reference §3.8) and what apps.analytics.serializers
emits; the user, achievement and leaderboard shapes are those of their own apps.
"""

import datetime as dt
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.achievements.wire import UserAchievementWithStatsResponse
from apps.leaderboards.wire import UserLeaderboardResponse
from apps.streaks.choices import Frequency
from apps.users.wire import User


def wrapped_year_maximum(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: `year` goes up to the current year, the user's (on 1 January in
    Tokyo it is already the new one). The document, made now, gives the year of the zone that
    is furthest behind (UTC-12), which no user's current year is behind."""
    year = (timezone.now() - dt.timedelta(hours=12)).year
    operation = result.get("paths", {}).get("/users/{user_id}/wrapped", {}).get("get", {})
    for parameter in operation.get("parameters", []):
        if parameter.get("name") == "year":
            parameter["schema"]["maximum"] = year
    return result


YEAR = OpenApiParameter(
    "year",
    {"type": "integer", "minimum": 1},
    OpenApiParameter.QUERY,
    description=(
        "The calendar year, in the user's time zone: an integer from 1 to the current year "
        "(the default)."
    ),
)


def _current_total() -> serializers.FloatField:
    return serializers.FloatField(help_text="The total at the end of the period.")


def _change() -> serializers.FloatField:
    return serializers.FloatField(help_text="The net change within the period.")


def _percent_change() -> serializers.FloatField:
    return serializers.FloatField(
        help_text="The change relative to the total at the start of the period, in percent "
        "(one decimal); from a start of 0: 100 for a gain, -100 for a loss, 0 without change."
    )


def _percentile() -> serializers.FloatField:
    return serializers.FloatField(
        required=False,
        help_text="Percent of the users active on it in the same period whose change was at "
        "most the user's (one decimal). Only for weeks, months and the year.",
    )


class WrappedMetricByAttributeValue(serializers.Serializer):
    """The figures of the events carrying one value of an event attribute."""

    name = serializers.CharField(required=False)
    units = serializers.CharField(required=False, allow_null=True)
    currentTotal = _current_total()
    changeThisPeriod = _change()
    percentChange = _percent_change()


class WrappedMetric(serializers.Serializer):
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


class WrappedPoints(serializers.Serializer):
    """A points system's figures in the period."""

    name = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    currentTotal = _current_total()
    changeThisPeriod = _change()
    percentChange = _percent_change()
    percentileThisPeriod = _percentile()


class WrappedStreak(serializers.Serializer):
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


class WrappedActivityPeriod(serializers.Serializer):
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


class WrappedMostActiveDay(WrappedActivityPeriod):
    """The day with the most metric events (the earliest on a tie)."""

    date = serializers.DateField()


class WrappedMostActiveWeek(WrappedActivityPeriod):
    """The Monday-to-Sunday week (clipped to the year) with the most metric events."""

    start = serializers.DateField()
    end = serializers.DateField()


class WrappedMostActiveMonth(WrappedActivityPeriod):
    """The month with the most metric events (the earliest on a tie)."""

    month = serializers.IntegerField(min_value=0, max_value=11, help_text="0 = January.")


class WrappedEntireYear(WrappedActivityPeriod):
    """The whole year."""

    longestStreak = WrappedStreak()


class WrappedActivity(serializers.Serializer):
    """A day, week or month is active when the user recorded a metric event on it."""

    daysActive = serializers.IntegerField()
    weeksActive = serializers.IntegerField()
    monthsActive = serializers.IntegerField()
    mostActiveDay = WrappedMostActiveDay()
    mostActiveWeek = WrappedMostActiveWeek()
    mostActiveMonth = WrappedMostActiveMonth()
    entireYear = WrappedEntireYear()


class WrappedResponse(serializers.Serializer):
    """A user's year in review."""

    user = User()
    activity = WrappedActivity()
