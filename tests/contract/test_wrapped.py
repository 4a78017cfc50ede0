"""A user's year in review through the SDK: `users.wrapped` parses the response into its models
(WrappedResponse and everything inside it) with the numbers of a scripted year, and raises the
declared errors for a bad year and an unknown user.

The clock is moved with time-machine, which patches the process clock: the live server's
threads run in this process, so they record the events on the travelled dates. Leaderboard
snapshots are taken by a periodic job, run here in-process (the server shares the database).
"""

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from django.core.cache import cache
from trophy import CreateAchievementRequestItem, TrophyApi
from trophy.errors import NotFoundError, UnprocessableEntityError
from trophy.types import (
    CreatedMetric,
    User,
    UserAchievementResponse,
    UserLeaderboardResponse,
    WrappedActivity,
    WrappedMetric,
    WrappedMetricByAttributeValueValue,
    WrappedPoints,
    WrappedResponse,
    WrappedStreak,
)

from apps.leaderboards.jobs import leaderboards_snapshots
from tests.contract.helpers import CONTRACT_DB, create_attribute, error_message

pytestmark = [pytest.mark.contract, CONTRACT_DB]

UTC = dt.UTC


def at(day: str, hour: int = 12) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


def travel(when: dt.datetime) -> Any:
    # tick: the SDK's HTTP client keeps its own time for timeouts.
    return time_machine.travel(when, tick=True)


@pytest.fixture
def scripted(client: TrophyApi, words: CreatedMetric) -> TrophyApi:
    """10 points a word, a 10-word achievement, a daily streak, a leaderboard; ada writes 4
    (ios) on Monday 3 March 2025 and 6 then 1 on the 4th; bob writes 3 on the 5th."""
    with travel(at("2025-01-10")):
        create_attribute(client, "device", "event")
        response = client.admin.points.systems.create(
            request=[
                {
                    "key": "xp",
                    "name": "XP",
                    "triggers": [
                        {
                            "type": "metric",
                            "points": 10,
                            "metric_id": words.id,
                            "metric_threshold": 1,
                            "status": "active",
                        }
                    ],
                }
            ]
        )
        assert response.issues == []
        response = client.admin.achievements.create(
            request=[
                CreateAchievementRequestItem(
                    name="Ten words",
                    trigger="metric",
                    metric_id=words.id,
                    metric_value=10,
                    status="active",
                )
            ]
        )
        assert response.issues == []
        client.admin.streaks.settings.update(
            frequency="daily", metrics=[{"key": "words", "threshold": 1}]
        )
        response = client.admin.leaderboards.create(
            request=[
                {
                    "key": "top",
                    "name": "Top",
                    "rank_by": "metric",
                    "metric_id": words.id,
                    "status": "active",
                    "start": "2025-01-01",
                }
            ]
        )
        assert response.issues == []
    with travel(at("2025-03-03")):
        client.metrics.event("words", user={"id": "ada"}, value=4, attributes={"device": "ios"})
    with travel(at("2025-03-04")):
        client.metrics.event("words", user={"id": "ada"}, value=6)
        client.metrics.event("words", user={"id": "ada"}, value=1)
    leaderboards_snapshots(at("2025-03-04", 23))
    with travel(at("2025-03-05")):
        client.metrics.event("words", user={"id": "bob"}, value=3)
    return client


def test_the_sdk_parses_a_year_in_review(scripted: TrophyApi) -> None:
    with travel(at("2025-06-01")):
        response = scripted.users.wrapped("ada", year=2025)

    assert isinstance(response, WrappedResponse)
    assert isinstance(response.user, User)
    assert response.user.id == "ada"
    activity = response.activity
    assert isinstance(activity, WrappedActivity)
    assert (activity.days_active, activity.weeks_active, activity.months_active) == (2, 1, 1)

    day = activity.most_active_day
    assert day.date == "2025-03-04"
    words = day.metrics["words"]
    assert isinstance(words, WrappedMetric)
    assert (words.name, words.current_total, words.change_this_period) == ("Words", 11, 7)
    assert words.percent_change == 175.0  # 7 added to 4
    assert words.percentile_this_period is None  # not for a day
    assert words.by_attribute == {}
    xp = day.points["xp"]
    assert isinstance(xp, WrappedPoints)
    assert (xp.name, xp.current_total, xp.change_this_period, xp.percent_change) == (
        "XP",
        110,
        70,
        175.0,
    )
    [achievement] = day.achievements
    assert isinstance(achievement, UserAchievementResponse)
    assert achievement.name == "Ten words"
    assert achievement.achieved_at is not None
    assert achievement.achieved_at.date() == dt.date(2025, 3, 4)
    board = day.leaderboards["top"]
    assert isinstance(board, UserLeaderboardResponse)
    assert (board.key, board.rank, board.value) == ("top", 1, 11)

    week = activity.most_active_week
    assert (week.start, week.end) == ("2025-03-03", "2025-03-09")
    assert week.metrics["words"].percentile_this_period == 100.0  # 11 against bob's 3
    ios = week.metrics["words"].by_attribute["device"]["ios"]
    assert isinstance(ios, WrappedMetricByAttributeValueValue)
    assert (ios.current_total, ios.change_this_period, ios.percent_change) == (4, 4, 100.0)

    month = activity.most_active_month
    assert month.month == 2
    assert month.points["xp"].percentile_this_period == 100.0

    year = activity.entire_year
    assert (year.metrics["words"].current_total, year.metrics["words"].percent_change) == (
        11,
        100.0,
    )
    streak = year.longest_streak
    assert isinstance(streak, WrappedStreak)
    assert (streak.length, streak.frequency, streak.started, streak.period_end) == (
        2,
        "daily",
        "2025-03-03",
        "2025-03-04",
    )


def test_the_year_defaults_to_the_current_one(scripted: TrophyApi) -> None:
    with travel(at("2025-06-01")):
        response = scripted.users.wrapped("bob")
    assert response.activity.days_active == 1
    assert response.activity.most_active_day.date == "2025-03-05"
    assert response.activity.entire_year.longest_streak.length == 1
    assert response.activity.entire_year.achievements == []


def test_a_bad_year_and_an_unknown_user_raise_the_declared_errors(scripted: TrophyApi) -> None:
    with travel(at("2025-06-01")):
        for year in (0, 2026):
            with pytest.raises(UnprocessableEntityError) as caught:
                scripted.users.wrapped("ada", year=year)
            assert error_message(caught.value) == "year must be between 1 and 2025"
        with pytest.raises(NotFoundError) as missing:
            scripted.users.wrapped("ghost")
        assert error_message(missing.value) == 'User not found: "ghost"'
