"""A user's year in review (GET /v1/users/{id}/wrapped): the numbers of a scripted year sent
through the public API with the clock moved, the rules of active and most active periods,
percent changes and cached percentiles, the year parameter, 404s, tenant isolation, the pure
rules, and a query count that does not grow with a full year of history."""

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.achievements.models import Achievement, AchievementCompletion
from apps.analytics import wrapped
from apps.analytics.wrapped import Period
from apps.core.config_cache import tenant_cache_clear
from apps.leaderboards.jobs import leaderboards_snapshots
from apps.leaderboards.models import Leaderboard, LeaderboardSnapshot
from apps.metrics.models import Metric, MetricDailyChange, MetricEvent
from apps.points.models import PointsDailyChange, PointsSystem
from apps.streaks.models import StreakPeriod
from apps.users.models import EndUser

UTC = dt.UTC
NEW_YORK = "America/New_York"


def at(day: str, hour: int = 17, minute: int = 0) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, minute=minute, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    # Percentile distributions are cached by tenant public id (unique per test), but start clean.
    cache.clear()
    yield
    cache.clear()


def created(response: Any) -> dict[str, Any]:
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["issues"] == [], body
    return body["created"][0]


def send(client: Any, when: dt.datetime, user: str, value: Any, **extra: Any) -> dict[str, Any]:
    attrs = extra.pop("attrs", None)
    body: dict[str, Any] = {"user": {"id": user, **extra}, "value": value}
    if attrs:
        body["attributes"] = attrs
    with time_machine.travel(when, tick=False):
        response = client.post("/v1/metrics/words/event", body)
    assert response.status_code == 201, response.content
    return response.json()


def get_wrapped(client: Any, when: dt.datetime, user: str = "u1", **params: Any) -> Any:
    with time_machine.travel(when, tick=False):
        return client.get(f"/v1/users/{user}/wrapped", params)


def wrapped_ok(client: Any, when: dt.datetime, user: str = "u1", **params: Any) -> dict:
    response = get_wrapped(client, when, user, **params)
    assert response.status_code == 200, response.content
    return response.json()


def configure(client: Any, capture: Any) -> dict[str, Any]:
    """A metric with units, an event attribute, a points system paying 2 points a word, two
    metric achievements, a daily streak on the metric and a perpetual leaderboard."""
    with time_machine.travel(at("2024-12-01"), tick=False):
        words = created(
            client.post("/admin/v1/metrics", [{"key": "words", "name": "Words", "units": "words"}])
        )
        created(
            client.post(
                "/admin/v1/attributes", [{"key": "device", "name": "Device", "type": "event"}]
            )
        )
        trigger = {"type": "metric", "points": 2, "metricId": words["id"], "metricThreshold": 1}
        created(
            client.post(
                "/admin/v1/points",
                [
                    {
                        "key": "xp",
                        "name": "XP",
                        "description": "Experience",
                        "triggers": [{**trigger, "status": "active"}],
                    }
                ],
            )
        )
        with capture(execute=True):
            for value in (100, 200):
                created(
                    client.post(
                        "/admin/v1/achievements",
                        [
                            {
                                "name": f"{value} words",
                                "trigger": "metric",
                                "metricId": words["id"],
                                "metricValue": value,
                                "status": "active",
                            }
                        ],
                    )
                )
        response = client.patch(
            "/admin/v1/streaks/settings",
            {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
        )
        assert response.status_code == 200, response.content
        created(
            client.post(
                "/admin/v1/leaderboards",
                [
                    {
                        "key": "top",
                        "name": "Top",
                        "rankBy": "metric",
                        "metricId": words["id"],
                        "status": "active",
                        "start": "2024-12-01",
                    }
                ],
            )
        )
    return words


@pytest.fixture
def year_2025(api_client: Any, django_capture_on_commit_callbacks: Any) -> Any:
    """u1 lives in New York and writes on these local days (events at 17:00 UTC, noon there):

    2024-12-20: 100 (ios)                            -> 100 before the year
    2025-01-06: 10
    2025-02-03: 20 | 02-04: 30 (ios), 5 (android) | 02-05: 15 (ios)   week of 3 Feb: 4 events
    2025-03-10: 40 | 03-11: 1, 1, 1 | 03-20: 2                         March: 5 events
    2025-12-31: 7 (at 03:00 UTC on 1 January 2026: still the 31st in New York)
    2026-01-02: 1000 (the next year)

    Others (UTC): u2 writes 100 and u3 writes 1 on 4 February, u4 writes 500 on 15 June.
    Leaderboard snapshots are taken on 4 February, 20 March and 15 June.
    """
    client = api_client
    configure(client, django_capture_on_commit_callbacks)
    u1 = {"tz": NEW_YORK}
    send(client, at("2024-12-20"), "u1", 100, attrs={"device": "ios"}, **u1)
    send(client, at("2025-01-06"), "u1", 10, **u1)
    send(client, at("2025-02-03"), "u1", 20, **u1)
    send(client, at("2025-02-04", 16), "u1", 30, attrs={"device": "ios"}, **u1)
    send(client, at("2025-02-04", 17), "u1", 5, attrs={"device": "android"}, **u1)
    send(client, at("2025-02-04", 18), "u2", 100)
    send(client, at("2025-02-04", 19), "u3", 1)
    leaderboards_snapshots(at("2025-02-04", 23))
    send(client, at("2025-02-05"), "u1", 15, attrs={"device": "ios"}, **u1)
    send(client, at("2025-03-10"), "u1", 40, **u1)
    for minute in (0, 1, 2):
        send(client, at("2025-03-11", 17, minute), "u1", 1, **u1)
    send(client, at("2025-03-20"), "u1", 2, **u1)
    leaderboards_snapshots(at("2025-03-20", 23))
    send(client, at("2025-06-15"), "u4", 500)
    leaderboards_snapshots(at("2025-06-15", 23))
    send(client, at("2026-01-01", 3), "u1", 7, **u1)
    send(client, at("2026-01-02"), "u1", 1000, **u1)
    return client


READ_AT = at("2026-01-05")


class TestScriptedYear:
    def test_activity_counts_and_most_active_periods(self, year_2025):
        activity = wrapped_ok(year_2025, READ_AT, year=2025)["activity"]
        # Jan 6; Feb 3, 4, 5; Mar 10, 11, 20; Dec 31 (local).
        assert activity["daysActive"] == 8
        # Weeks of Jan 6, Feb 3, Mar 10, Mar 17 and the clipped Dec 29-31.
        assert activity["weeksActive"] == 5
        assert activity["monthsActive"] == 4
        # 11 March has 3 events; the weeks of 3 Feb and 10 March tie at 4 (the earliest wins);
        # March has 5 events.
        assert activity["mostActiveDay"]["date"] == "2025-03-11"
        week = activity["mostActiveWeek"]
        assert (week["start"], week["end"]) == ("2025-02-03", "2025-02-09")
        assert activity["mostActiveMonth"]["month"] == 2

    def test_metric_figures_of_each_period(self, year_2025):
        activity = wrapped_ok(year_2025, READ_AT, year=2025)["activity"]
        day = activity["mostActiveDay"]["metrics"]["words"]
        assert day == {
            "name": "Words",
            "units": "words",
            "currentTotal": 223,
            "changeThisPeriod": 3,
            "percentChange": 1.4,  # 3 added to 220
            "byAttribute": {},
        }
        week = activity["mostActiveWeek"]["metrics"]["words"]
        assert (week["currentTotal"], week["changeThisPeriod"], week["percentChange"]) == (
            180,
            70,
            63.6,
        )
        # Of the three users active that week (70, 100 and 1), two wrote at most 70.
        assert week["percentileThisPeriod"] == 66.7
        assert week["byAttribute"] == {
            "device": {
                "android": {
                    "name": "Words",
                    "units": "words",
                    "currentTotal": 5,
                    "changeThisPeriod": 5,
                    "percentChange": 100.0,
                },
                "ios": {
                    "name": "Words",
                    "units": "words",
                    "currentTotal": 145,
                    "changeThisPeriod": 45,
                    "percentChange": 45.0,
                },
            }
        }
        month = activity["mostActiveMonth"]["metrics"]["words"]
        assert (month["currentTotal"], month["changeThisPeriod"], month["percentChange"]) == (
            225,
            45,
            25.0,
        )
        assert month["percentileThisPeriod"] == 100.0  # nobody else wrote in March
        assert month["byAttribute"] == {}
        year = activity["entireYear"]["metrics"]["words"]
        # The 1,000 of 2 January 2026 are not in 2025; the 7 of the local 31 December are.
        assert (year["currentTotal"], year["changeThisPeriod"], year["percentChange"]) == (
            232,
            132,
            132.0,
        )
        assert year["percentileThisPeriod"] == 75.0  # 1, 100, 132 of 1, 100, 132, 500
        assert set(year["byAttribute"]["device"]) == {"ios", "android"}

    def test_points_follow_the_points_rollup(self, year_2025):
        activity = wrapped_ok(year_2025, READ_AT, year=2025)["activity"]
        day = activity["mostActiveDay"]["points"]["xp"]
        assert day == {
            "name": "XP",
            "description": "Experience",
            "currentTotal": 446,
            "changeThisPeriod": 6,
            "percentChange": 1.4,
        }
        week = activity["mostActiveWeek"]["points"]["xp"]
        assert (week["currentTotal"], week["changeThisPeriod"], week["percentChange"]) == (
            360,
            140,
            63.6,
        )
        assert week["percentileThisPeriod"] == 66.7
        month = activity["mostActiveMonth"]["points"]["xp"]
        assert (month["currentTotal"], month["changeThisPeriod"]) == (450, 90)
        year = activity["entireYear"]["points"]["xp"]
        assert (year["currentTotal"], year["changeThisPeriod"], year["percentChange"]) == (
            464,
            264,
            132.0,
        )
        assert year["percentileThisPeriod"] == 75.0

    def test_achievements_completed_in_each_period(self, year_2025):
        activity = wrapped_ok(year_2025, READ_AT, year=2025)["activity"]
        # "100 words" was completed in 2024: in no period. "200 words" on 10 March.
        assert activity["mostActiveDay"]["achievements"] == []
        assert activity["mostActiveWeek"]["achievements"] == []
        for period in ("mostActiveMonth", "entireYear"):
            [achievement] = activity[period]["achievements"]
            assert achievement["name"] == "200 words"
            assert achievement["achievedAt"] == "2025-03-10T17:00:00Z"
            assert achievement["metricValue"] == 200
            # u1 and u4 completed it, of four users.
            assert (achievement["completions"], achievement["rarity"]) == (2, 50.0)

    def test_best_leaderboard_rank_of_each_period(self, year_2025):
        activity = wrapped_ok(year_2025, READ_AT, year=2025)["activity"]
        assert activity["mostActiveDay"]["leaderboards"] == {}
        week = activity["mostActiveWeek"]["leaderboards"]["top"]
        assert (week["key"], week["rank"], week["value"], week["metricKey"]) == (
            "top",
            1,
            165,
            "words",
        )
        assert activity["mostActiveMonth"]["leaderboards"]["top"]["value"] == 225
        # Rank 1 on 4 Feb and 20 March, rank 2 on 15 June (behind u4): the latest best.
        year = activity["entireYear"]["leaderboards"]["top"]
        assert (year["rank"], year["value"]) == (1, 225)

    def test_longest_streak_of_the_year(self, year_2025):
        body = wrapped_ok(year_2025, READ_AT, year=2025)
        assert body["activity"]["entireYear"]["longestStreak"] == {
            "length": 3,
            "frequency": "daily",
            "periodStart": "2025-02-03",
            "periodEnd": "2025-02-05",
            "started": "2025-02-03",
        }

    def test_the_user_is_the_user_object(self, year_2025):
        body = wrapped_ok(year_2025, READ_AT, year=2025)
        assert body["user"] == year_2025.get("/v1/users/u1").json()

    def test_percentiles_are_cached_per_period(self, year_2025):
        before = wrapped_ok(year_2025, READ_AT, year=2025)["activity"]["entireYear"]
        send(year_2025, at("2025-07-01"), "u5", 10_000)
        after = wrapped_ok(year_2025, READ_AT, year=2025)["activity"]["entireYear"]
        assert after["metrics"]["words"]["percentileThisPeriod"] == 75.0  # still cached
        cache.clear()
        fresh = wrapped_ok(year_2025, READ_AT, year=2025)["activity"]["entireYear"]
        assert fresh["metrics"]["words"]["percentileThisPeriod"] == 60.0  # 3 of 5
        assert before["metrics"]["words"]["changeThisPeriod"] == 132

    def test_another_year_and_the_api_alias(self, year_2025):
        with time_machine.travel(READ_AT, tick=False):
            body = year_2025.get("/api/users/u1/wrapped", {"year": 2024}).json()
        activity = body["activity"]
        assert (activity["daysActive"], activity["mostActiveDay"]["date"]) == (1, "2024-12-20")
        year = activity["entireYear"]
        assert year["metrics"]["words"]["currentTotal"] == 100
        assert year["metrics"]["words"]["percentChange"] == 100.0  # from 0
        [achievement] = year["achievements"]
        assert achievement["name"] == "100 words"


# =================================================================================================
# The empty year, the current year, validation
# =================================================================================================


def test_a_year_without_events_has_zero_figures(api_client, django_capture_on_commit_callbacks):
    configure(api_client, django_capture_on_commit_callbacks)
    send(api_client, at("2025-03-01"), "u1", 5)
    activity = wrapped_ok(api_client, at("2025-06-01"), year=2024)["activity"]
    assert (activity["daysActive"], activity["weeksActive"], activity["monthsActive"]) == (0, 0, 0)
    assert activity["mostActiveDay"]["date"] == "2024-01-01"
    week = activity["mostActiveWeek"]
    assert (week["start"], week["end"]) == ("2024-01-01", "2024-01-07")
    assert activity["mostActiveMonth"]["month"] == 0
    metric = activity["entireYear"]["metrics"]["words"]
    assert (metric["currentTotal"], metric["changeThisPeriod"], metric["percentChange"]) == (
        0,
        0,
        0.0,
    )
    assert metric["percentileThisPeriod"] == 0.0  # nobody was active
    assert activity["entireYear"]["points"]["xp"]["currentTotal"] == 0
    assert activity["entireYear"]["longestStreak"] == {
        "length": 0,
        "frequency": "daily",
        "periodStart": None,
        "periodEnd": None,
        "started": None,
    }
    assert activity["entireYear"]["achievements"] == []
    assert activity["entireYear"]["leaderboards"] == {}


def test_year_defaults_to_the_current_year(api_client, metric):
    send(api_client, at("2025-03-01"), "u1", 5)
    default = wrapped_ok(api_client, at("2025-06-01"))
    assert default == wrapped_ok(api_client, at("2025-06-01"), year=2025)
    assert default["activity"]["daysActive"] == 1
    assert default["activity"]["entireYear"]["metrics"]["words"]["currentTotal"] == 5


def test_the_current_year_is_the_users_local_year(api_client, metric):
    send(api_client, at("2025-12-31", 12), "tokyo", 5, tz="Asia/Tokyo")
    send(api_client, at("2025-12-31", 12), "london", 5, tz="Europe/London")
    late = at("2025-12-31", 20)  # already 1 January 2026 in Tokyo
    assert get_wrapped(api_client, late, "tokyo", year=2026).status_code == 200
    assert get_wrapped(api_client, late, "london", year=2026).status_code == 422
    assert wrapped_ok(api_client, late, "tokyo")["activity"]["daysActive"] == 0  # 2026
    assert wrapped_ok(api_client, late, "london")["activity"]["daysActive"] == 1  # 2025


@pytest.mark.parametrize(
    ("year", "message"),
    [
        ("abc", "year must be an integer"),
        ("2025.0", "year must be an integer"),
        ("+2025", "year must be an integer"),
        ("0", "year must be between 1 and 2025"),
        ("-1", "year must be between 1 and 2025"),
        ("2026", "year must be between 1 and 2025"),
    ],
)
def test_year_must_be_an_integer_from_1_to_the_current_year(api_client, metric, year, message):
    send(api_client, at("2025-03-01"), "u1", 5)
    response = get_wrapped(api_client, at("2025-06-01"), year=year)
    assert response.status_code == 422
    assert response.json() == {"error": message}


def test_year_1_is_valid(api_client, metric):
    send(api_client, at("2025-03-01"), "u1", 5)
    body = wrapped_ok(api_client, at("2025-06-01"), year=1)
    assert body["activity"]["mostActiveDay"]["date"] == "0001-01-01"
    assert body["activity"]["entireYear"]["metrics"]["words"]["currentTotal"] == 0


def test_unknown_user_is_404(api_client, metric):
    response = get_wrapped(api_client, at("2025-06-01"), "ghost")
    assert response.status_code == 404
    assert response.json() == {"error": 'User not found: "ghost"'}


def test_another_tenants_user_is_not_found(api_client, other_tenant_client, metric):
    send(api_client, at("2025-03-01"), "u1", 5)
    assert get_wrapped(other_tenant_client, at("2025-06-01")).status_code == 404


def test_requires_a_key(anon_client, db):
    assert anon_client.get("/v1/users/u1/wrapped").status_code == 401


def test_an_application_key_reads_only_its_own_user(org, anon_client, metric, api_client):
    send(api_client, at("2025-03-01"), "u1", 5)
    send(api_client, at("2025-03-01"), "u2", 5)
    anon_client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    assert get_wrapped(anon_client, at("2025-06-01"), "u1").status_code == 200
    assert get_wrapped(anon_client, at("2025-06-01"), "u2").status_code == 403


# =================================================================================================
# Query count
# =================================================================================================


def _history(tenant: Any, user: EndUser, days: list[dt.date]) -> None:
    """Rollups, events, streak periods, snapshots and a completion on each of these days, as
    the pipeline and the jobs would have left them."""
    metric = Metric.objects.get(tenant=tenant, key="words")
    system = PointsSystem.objects.get(tenant=tenant, key="xp")
    board = Leaderboard.objects.get(tenant=tenant, key="top")
    MetricDailyChange.objects.bulk_create(
        MetricDailyChange(tenant=tenant, user=user, metric=metric, date=d, change=3, events=2)
        for d in days
    )
    MetricEvent.objects.bulk_create(
        MetricEvent(
            tenant=tenant,
            user=user,
            metric=metric,
            value=Decimal(3),
            total_after=Decimal(3 * (i + 1)),
            attributes={"device": "ios" if i % 2 else "android"},
            occurred_at=dt.datetime.combine(d, dt.time(12), UTC),
            local_date=d,
        )
        for i, d in enumerate(days)
    )
    PointsDailyChange.objects.bulk_create(
        PointsDailyChange(tenant=tenant, user=user, system=system, date=d, change=6) for d in days
    )
    StreakPeriod.objects.bulk_create(
        StreakPeriod(
            tenant=tenant,
            user=user,
            frequency="daily",
            period_start=d,
            period_end=d,
            length=i + 1,
            extended=True,
        )
        for i, d in enumerate(days)
    )
    LeaderboardSnapshot.objects.bulk_create(
        LeaderboardSnapshot(
            leaderboard=board, run_start=board.start, user=user, date=d, rank=1, value=3 * (i + 1)
        )
        for i, d in enumerate(days)
    )
    achievement = Achievement.objects.get(tenant=tenant, name="100 words")
    AchievementCompletion.objects.create(
        tenant=tenant,
        achievement=achievement,
        user=user,
        completed_at=dt.datetime.combine(days[-1], dt.time(12), UTC),
    )


def _queries(client: Any, user: str) -> int:
    cache.clear()
    tenant_cache_clear()
    with CaptureQueriesContext(connection) as captured:
        wrapped_ok(client, at("2026-01-05"), user, year=2025)
    return len(captured)


def test_query_count_does_not_grow_with_history(
    api_client, tenant, django_capture_on_commit_callbacks, django_assert_max_num_queries
):
    configure(api_client, django_capture_on_commit_callbacks)
    first = dt.date(2025, 1, 1)
    year = [first + dt.timedelta(days=i) for i in range(365)]
    _history(tenant, EndUser.objects.create(tenant=tenant, external_id="light"), year[100:101])
    _history(tenant, EndUser.objects.create(tenant=tenant, external_id="heavy"), year)
    light = _queries(api_client, "light")
    # Cold caches: the key, the configuration snapshots, the user, the reads listed in
    # wrapped.user_wrapped and the percentile distributions of the week, month and year.
    assert light <= 36
    cache.clear()
    tenant_cache_clear()
    with django_assert_max_num_queries(light):
        body = wrapped_ok(api_client, at("2026-01-05"), "heavy", year=2025)
    activity = body["activity"]
    assert activity["daysActive"] == 365
    assert activity["weeksActive"] == 53  # 1 Jan 2025 is a Wednesday: a clipped first week
    assert activity["entireYear"]["longestStreak"]["length"] == 365
    assert activity["entireYear"]["metrics"]["words"]["currentTotal"] == 1095
    assert activity["entireYear"]["metrics"]["words"]["byAttribute"]["device"]["ios"] == {
        "name": "Words",
        "units": "words",
        "currentTotal": 546,
        "changeThisPeriod": 546,
        "percentChange": 100.0,
    }
    # Warm caches: the key, the user and the 12 reads of the year; no configuration and no
    # distribution is read again.
    with django_assert_max_num_queries(14):
        wrapped_ok(api_client, at("2026-01-05"), "heavy", year=2025)


# =================================================================================================
# The pure rules
# =================================================================================================


@pytest.mark.parametrize(
    ("change", "start", "expected"),
    [
        ("2500", "12500", 20.0),
        ("8500", "6500", 130.8),
        ("-50", "200", -25.0),
        ("10", "-20", 50.0),
        ("5", "0", 100.0),
        ("-5", "0", -100.0),
        ("0", "0", 0.0),
    ],
)
def test_percent_change_is_the_growth_of_the_total(change, start, expected):
    assert wrapped.percent_change(Decimal(change), Decimal(start)) == expected


def test_percentile_is_the_share_at_or_below():
    assert wrapped.percentile([], 5.0) == 0.0
    assert wrapped.percentile([1.0, 70.0, 100.0], 70.0) == 66.7
    assert wrapped.percentile([1.0, 70.0, 100.0], 100.0) == 100.0
    assert wrapped.percentile([1.0, 70.0, 100.0], 0.0) == 0.0


def test_large_distributions_are_kept_as_cut_points():
    values = [float(v) for v in range(100_000, 0, -1)]
    cuts = wrapped.cut_points(values)
    assert len(cuts) == wrapped.CUT_POINTS
    assert (cuts[0], cuts[-1]) == (1.0, 100_000.0)
    assert cuts == sorted(cuts)
    assert abs(wrapped.percentile(cuts, 25_000.0) - 25.0) <= 0.1
    assert wrapped.cut_points([3.0, 1.0, 2.0]) == [1.0, 2.0, 3.0]


def test_weeks_run_monday_to_sunday_clipped_to_the_year():
    year = Period(dt.date(2025, 1, 1), dt.date(2025, 12, 31))
    assert wrapped.week_of(dt.date(2025, 1, 3), year) == Period(
        dt.date(2025, 1, 1), dt.date(2025, 1, 5)
    )
    assert wrapped.week_of(dt.date(2025, 2, 9), year) == Period(
        dt.date(2025, 2, 3), dt.date(2025, 2, 9)
    )
    assert wrapped.week_of(dt.date(2025, 12, 31), year) == Period(
        dt.date(2025, 12, 29), dt.date(2025, 12, 31)
    )


def test_the_busiest_period_is_the_earliest_on_a_tie():
    days = {dt.date(2025, 3, 2): 4, dt.date(2025, 1, 5): 4, dt.date(2025, 2, 1): 1}
    assert wrapped.busiest(days, default=None) == dt.date(2025, 1, 5)
    assert wrapped.busiest({}, default="none") == "none"
