"""The Impact Score (GET /admin/ext/v1/analytics/impact): day-14 retention of treated users
against the control group, on data written straight into the users and the metric daily rollup
(the pipeline that fills the rollup is tested in its own app), with answers computed by hand."""

import datetime as dt
import json
import math
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Tenant
from apps.analytics import selectors
from apps.analytics.choices import Verdict
from apps.analytics.domain import MIN_GROUP_USERS, Share, difference_estimate
from apps.metrics.models import Metric, MetricDailyChange
from apps.users.models import EndUser
from tests.factories import EndUserFactory, MetricFactory, bump

# The rollup aggregate's date arithmetic is SQL that each vendor gets in its own words (Django's
# temporal subtraction): the tests that exercise its windows also run on PostgreSQL in
# `make unit` (tests/postgres_subset.py).
on_both = pytest.mark.sql

D = dt.date
URL = "/admin/ext/v1/analytics/impact"
NOW = dt.datetime(2024, 4, 15, 12, tzinfo=dt.UTC)


def at(day: str, hour: int = 12) -> dt.datetime:
    return dt.datetime.combine(D.fromisoformat(day), dt.time(hour), dt.UTC)


def make_user(
    tenant: Tenant, created: dt.datetime, *, control: bool = False, tz: Any = None
) -> Any:
    user = EndUserFactory(tenant=tenant, tz=tz, control=control)
    # `created` is auto_now_add: set it after the insert.
    EndUser.objects.filter(pk=user.pk).update(created=created)
    return user


def active(user: Any, metric: Metric, day: str) -> None:
    MetricDailyChange.objects.create(
        tenant=metric.tenant,
        user=user,
        metric=metric,
        date=D.fromisoformat(day),
        events=1,
        change=Decimal(1),
    )


def cohort(tenant: Tenant, created: str, days: list[str | None], metric: Metric, **kw: Any) -> None:
    """One user created at noon UTC on `created` per entry, active on that day (None: never)."""
    for day in days:
        user = make_user(tenant, at(created), **kw)
        if day is not None:
            active(user, metric, day)


def get(client: Any, **params: Any) -> Any:
    with time_machine.travel(NOW, tick=False):
        return client.get(URL, params)


# --- by hand --------------------------------------------------------------------------------

Z = 1.959963984540054


def wilson(retained: int, users: int) -> tuple[float, float]:
    p = retained / users
    centre = (p + Z * Z / (2 * users)) / (1 + Z * Z / users)
    half = Z / (1 + Z * Z / users) * math.sqrt(p * (1 - p) / users + Z * Z / (4 * users**2))
    return centre - half, centre + half


def by_hand(treated: tuple[int, int], control: tuple[int, int]) -> tuple[float, float, float]:
    """(difference, low, high) in percentage points: Newcombe's hybrid score interval."""
    p1, p2 = treated[0] / treated[1], control[0] / control[1]
    (l1, u1), (l2, u2) = wilson(*treated), wilson(*control)
    low = p1 - p2 - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = p1 - p2 + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return round(100 * (p1 - p2), 1), round(100 * low, 1), round(100 * high, 1)


@pytest.mark.parametrize(
    ("treated", "control", "expected"),
    [
        # Newcombe (1998), Statistics in Medicine 17:873-890, table II, method 10.
        ((56, 70), (48, 80), (0.2, 0.0524, 0.3339)),
        ((9, 10), (3, 10), (0.6, 0.1705, 0.8090)),
        ((5, 56), (0, 29), (0.0893, -0.0381, 0.1926)),
        ((6, 7), (2, 7), (0.5714, 0.0582, 0.8062)),
    ],
)
def test_the_interval_is_newcombes_published_one(
    treated: tuple[int, int], control: tuple[int, int], expected: tuple[float, float, float]
) -> None:
    estimate = difference_estimate(Share(treated[1], treated[0]), Share(control[1], control[0]))

    assert estimate.difference is not None
    assert estimate.low is not None
    assert estimate.high is not None
    got = (estimate.difference, estimate.low, estimate.high)
    assert [round(value, 4) for value in got] == list(expected)


def test_verdicts_need_both_groups_large_enough_and_an_interval_without_zero() -> None:
    def verdict(treated: tuple[int, int], control: tuple[int, int]) -> Verdict:
        return difference_estimate(Share(*treated), Share(*control)).verdict

    assert verdict((70, 56), (80, 48)) is Verdict.SIGNIFICANT
    assert verdict((56, 5), (29, 0)) is Verdict.NOT_SIGNIFICANT
    # A big difference, but the control group is one user short.
    assert verdict((50, 50), (MIN_GROUP_USERS - 1, 0)) is Verdict.TOO_FEW_USERS
    assert verdict((50, 50), (MIN_GROUP_USERS, 0)) is Verdict.SIGNIFICANT
    assert verdict((5, 1), (0, 0)) is Verdict.TOO_FEW_USERS
    assert verdict((0, 0), (0, 0)) is Verdict.NO_USERS


# --- the constructed tenant -----------------------------------------------------------------


@pytest.fixture
def words(tenant: Tenant) -> Metric:
    metric = MetricFactory(tenant=tenant, key="words", name="Words")
    bump(tenant)
    return metric


@pytest.fixture
def lessons(tenant: Tenant, words: Metric) -> Metric:
    metric = MetricFactory(tenant=tenant, key="lessons", name="Lessons")
    bump(tenant)
    return metric


@pytest.fixture
def known(tenant: Tenant, words: Metric, lessons: Metric) -> None:
    """Two cohort weeks of users in UTC, created at noon UTC.

    Week of Sunday 3 March 2024: 20 treated users start on Monday 4 March (days 8-14 are 12 to
    18 March): 6 active on day 8, 6 on day 14 (retained: 12), 4 only on day 7 and 4 only on day
    15 (not retained). 10 control users start on 5 March (days 8-14: 13 to 19 March): 3 active
    on 15 March, 7 only on their first day.
    Week of 10 March: 10 treated users start on 12 March, 9 of them active on day 10 (22 March)
    in lessons only; 10 control users start on 13 March, 3 active on day 10 (23 March) in words.
    """
    cohort(tenant, "2024-03-04", ["2024-03-12"] * 6 + ["2024-03-18"] * 6, words)
    cohort(tenant, "2024-03-04", ["2024-03-11"] * 4 + ["2024-03-19"] * 4, words)
    cohort(tenant, "2024-03-05", ["2024-03-15"] * 3 + ["2024-03-05"] * 7, words, control=True)
    cohort(tenant, "2024-03-12", ["2024-03-22"] * 9 + [None], lessons)
    cohort(tenant, "2024-03-13", ["2024-03-23"] * 3 + [None] * 7, words, control=True)


def score(body: dict[str, Any]) -> tuple[Any, ...]:
    return (
        (body["treated"]["retained"], body["treated"]["users"]),
        (body["control"]["retained"], body["control"]["users"]),
        (body["difference"], body["low"], body["high"]),
        body["status"],
    )


@on_both
def test_the_score_of_a_known_data_set_per_week_overall_and_per_metric(
    api_client: Any, known: None
) -> None:
    response = get(api_client, fromWeek="2024-03-03", toWeek="2024-03-16")

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["fromWeek"], body["toWeek"], body["metric"]) == ("2024-03-03", "2024-03-10", None)
    first, second = body["weeks"]
    assert first["week"] == "2024-03-03"
    # 12/20 = 60 % against 3/10 = 30 %: +30 points.
    assert score(first["score"]) == (
        (12, 20),
        (3, 10),
        by_hand((12, 20), (3, 10)),
        "notSignificant",
    )
    assert first["score"]["treated"]["percent"] == 60.0
    assert first["score"]["control"]["percent"] == 30.0
    assert first["score"]["difference"] == 30.0
    assert first["score"]["significant"] is False
    assert "Not yet significant" in first["score"]["summary"]
    assert "contains 0" in first["score"]["summary"]
    # 9/10 against 3/10: Newcombe's own example (b), +17.05 to +80.90 points.
    assert second["week"] == "2024-03-10"
    assert score(second["score"]) == ((9, 10), (3, 10), (60.0, 17.1, 80.9), "significant")
    assert second["score"]["significant"] is True
    assert second["score"]["summary"] == (
        "Treated users' day-14 retention is 60.0 points higher than the control group's "
        "(95 % interval +17.1 to +80.9 points)."
    )
    # Overall, active in any metric: 21/30 against 6/20.
    assert score(body["overall"]) == ((21, 30), (6, 20), by_hand((21, 30), (6, 20)), "significant")
    # Per metric, over both weeks: words 12/30 against 6/20, lessons 9/30 against 0/20.
    per_metric = {row["key"]: row for row in body["metrics"]}
    assert [row["key"] for row in body["metrics"]] == ["words", "lessons"]
    assert per_metric["words"]["name"] == "Words"
    assert score(per_metric["words"]["score"])[:3] == (
        (12, 30),
        (6, 20),
        by_hand((12, 30), (6, 20)),
    )
    assert score(per_metric["lessons"]["score"])[:3] == (
        (9, 30),
        (0, 20),
        by_hand((9, 30), (0, 20)),
    )


@on_both
def test_a_metric_makes_only_its_events_count_per_week_and_overall(
    api_client: Any, known: None
) -> None:
    body = get(api_client, fromWeek="2024-03-03", toWeek="2024-03-10", metric="lessons").json()

    assert body["metric"] == "lessons"
    assert [score(week["score"])[:2] for week in body["weeks"]] == [
        ((0, 20), (0, 10)),
        ((9, 10), (0, 10)),
    ]
    assert score(body["overall"])[:3] == ((9, 30), (0, 20), by_hand((9, 30), (0, 20)))
    assert len(body["metrics"]) == 2  # every metric, whichever one is asked for


def test_the_default_weeks_end_with_the_latest_start_whose_day_14_is_over(
    api_client: Any, tenant: Tenant, words: Metric
) -> None:
    # Today is Monday 15 April: a start on Sunday 31 March has had its day 14 (14 April).
    counted = make_user(tenant, at("2024-03-31"))
    active(counted, words, "2024-04-10")
    # Day 14 of a start on 1 April is today: not over, so the user is in neither group.
    too_recent = make_user(tenant, at("2024-04-01"))
    active(too_recent, words, "2024-04-10")

    body = get(api_client).json()

    assert (body["fromWeek"], body["toWeek"]) == ("2024-01-14", "2024-03-31")
    assert len(body["weeks"]) == selectors.IMPACT_WEEKS
    assert score(body["weeks"][-1]["score"])[:2] == ((1, 1), (0, 0))
    assert body["overall"]["status"] == "tooFewUsers"
    assert body["overall"]["difference"] is None
    assert body["overall"]["summary"].startswith("Not yet significant: no control-group user")
    # toWeek may name a later week; the recent start still does not count.
    later = get(api_client, toWeek="2024-04-01").json()
    assert later["toWeek"] == "2024-03-31"
    assert score(later["overall"])[:2] == ((1, 1), (0, 0))
    newest = get(api_client, fromWeek="2024-04-07", toWeek="2024-04-13").json()
    assert newest["overall"]["status"] == "noUsers"


@on_both
def test_starts_windows_and_cohort_weeks_follow_each_users_time_zone(
    api_client: Any, tenant: Tenant, words: Metric
) -> None:
    # 11:00 UTC on 4 March is already 01:00 on 5 March at UTC+14: days 8-14 are 13-19 March,
    # so 12 March (day 8 by the UTC date) does not count, and 19 March does.
    east_early = make_user(tenant, at("2024-03-04", 11), tz="Pacific/Kiritimati")
    active(east_early, words, "2024-03-12")
    east_late = make_user(tenant, at("2024-03-04", 11), tz="Pacific/Kiritimati")
    active(east_late, words, "2024-03-19")
    # 05:00 UTC on Sunday 10 March is still Saturday 9 March at UTC-11: the user belongs to the
    # week of 3 March, and day 8 is 17 March (day 7 by the UTC date).
    west = make_user(tenant, at("2024-03-10", 5), tz="Pacific/Pago_Pago", control=True)
    active(west, words, "2024-03-17")

    body = get(api_client, fromWeek="2024-03-03", toWeek="2024-03-10").json()

    first, second = body["weeks"]
    assert score(first["score"])[:2] == ((1, 2), (1, 1))
    assert score(second["score"])[:2] == ((0, 0), (0, 0))


@on_both
def test_a_user_counts_once_day_14_is_over_in_their_own_zone(
    api_client: Any, tenant: Tenant, words: Metric
) -> None:
    # At 00:30 UTC on 19 March, a start on 4 March (day 14: 18 March) is over in UTC and at
    # UTC+14, not yet at UTC-11 (still 18 March there).
    make_user(tenant, at("2024-03-04", 12))
    make_user(tenant, at("2024-03-04", 0), tz="Pacific/Kiritimati")  # 14:00 on 4 March there
    make_user(tenant, at("2024-03-04", 20), tz="Pacific/Pago_Pago")  # 09:00 on 4 March there
    with time_machine.travel(dt.datetime(2024, 3, 19, 0, 30, tzinfo=dt.UTC), tick=False):
        body = api_client.get(URL, {"fromWeek": "2024-03-03", "toWeek": "2024-03-03"}).json()

    assert body["overall"]["treated"]["users"] == 2


def test_another_tenants_users_and_metrics_are_not_counted(
    api_client: Any, other_tenant_client: Any, other_tenant: Tenant, known: None
) -> None:
    theirs = MetricFactory(tenant=other_tenant, key="steps", name="Steps")
    bump(other_tenant)
    cohort(other_tenant, "2024-03-04", ["2024-03-12"] * 5, theirs, control=True)

    ours = get(api_client, fromWeek="2024-03-03", toWeek="2024-03-10").json()
    body = get(other_tenant_client, fromWeek="2024-03-03", toWeek="2024-03-10").json()

    assert score(ours["overall"])[:2] == ((21, 30), (6, 20))
    assert score(body["overall"])[:2] == ((0, 0), (5, 5))
    assert [row["key"] for row in body["metrics"]] == ["steps"]
    # Our metric is not theirs to ask for.
    assert get(other_tenant_client, metric="words").status_code == 404


def test_an_empty_tenant_has_weeks_without_users(api_client: Any, tenant: Tenant) -> None:
    response = get(api_client, fromWeek="2024-03-03", toWeek="2024-03-16")

    assert response.status_code == 200
    body = response.json()
    assert body["metrics"] == []
    assert [week["week"] for week in body["weeks"]] == ["2024-03-03", "2024-03-10"]
    assert body["overall"] == {
        "treated": {"users": 0, "retained": 0, "percent": None},
        "control": {"users": 0, "retained": 0, "percent": None},
        "difference": None,
        "low": None,
        "high": None,
        "significant": False,
        "status": "noUsers",
        "summary": "No users who started in these weeks have reached day 14 yet.",
    }


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({"fromWeek": "2024-13-01"}, 400, "fromWeek must be a date (YYYY-MM-DD)"),
        ({"toWeek": "last week"}, 400, "toWeek must be a date (YYYY-MM-DD)"),
        (
            {"fromWeek": "2024-03-17", "toWeek": "2024-03-09"},
            422,
            "fromWeek must not be after toWeek",
        ),
        (
            {"fromWeek": "2020-01-01", "toWeek": "2024-03-09"},
            422,
            "fromWeek to toWeek may span at most 156 weeks",
        ),
        ({"metric": "nope"}, 404, 'Metric not found: "nope"'),
        ({"metric": "x" * 300}, 404, f'Metric not found: "{"x" * 100}"'),
    ],
)
def test_bad_parameters_are_refused_with_a_clear_error(
    api_client: Any, words: Metric, params: dict[str, str], status: int, message: str
) -> None:
    response = get(api_client, **params)

    assert response.status_code == status
    assert response.json() == {"error": message}


def test_the_longest_span_is_accepted(api_client: Any, tenant: Tenant) -> None:
    last = D(2024, 3, 31)
    first = last - dt.timedelta(weeks=selectors.MAX_IMPACT_WEEKS - 1)
    response = get(api_client, fromWeek=first.isoformat(), toWeek=last.isoformat())

    assert response.status_code == 200
    assert len(response.json()["weeks"]) == selectors.MAX_IMPACT_WEEKS


def test_keys_other_than_the_admin_key_are_refused(org: Any, anon_client: Any) -> None:
    assert get(anon_client).status_code == 401
    anon_client.credentials(HTTP_X_API_KEY=org.application_key("a"))
    assert get(anon_client).status_code == 403
    anon_client.credentials(HTTP_X_API_KEY=org.admin_key, HTTP_TENANT_ID="nobody")
    assert get(anon_client).status_code == 404


def test_the_queries_do_not_grow_with_users_or_events(
    api_client: Any, tenant: Tenant, known: None, words: Metric
) -> None:
    get(api_client)  # the configuration snapshot is cached by the first request
    with CaptureQueriesContext(connection) as before:
        get(api_client, fromWeek="2024-03-03", toWeek="2024-03-10")
    cohort(tenant, "2024-03-05", ["2024-03-15"] * 30, words)
    with CaptureQueriesContext(connection) as after:
        body = get(api_client, fromWeek="2024-03-03", toWeek="2024-03-10").json()

    assert body["overall"]["treated"]["users"] == 60
    assert len(after.captured_queries) == len(before.captured_queries)
    rollup = MetricDailyChange._meta.db_table
    assert sum(rollup in q["sql"] for q in after.captured_queries) == 1


# --- the dashboard's card -------------------------------------------------------------------


def dashboard(client: Any, **params: Any) -> Any:
    with time_machine.travel(NOW, tick=False):
        return client.get("/dashboard/analytics/", params)


def test_the_analytics_page_shows_the_score_and_flags_it_not_significant(
    staff_client: Any, api_client: Any, tenant: Tenant, words: Metric
) -> None:
    # The default weeks, 14 January to 31 March: 12 of 20 treated against 3 of 10 control.
    cohort(tenant, "2024-03-04", ["2024-03-12"] * 12 + [None] * 8, words)
    cohort(tenant, "2024-03-05", ["2024-03-15"] * 3 + [None] * 7, words, control=True)

    response = dashboard(staff_client)

    assert response.status_code == 200
    html = response.content.decode()
    card = html[html.index('id="card-impact"') : html.index('id="card-streak-lengths"')]
    difference, low, high = by_hand((12, 20), (3, 10))
    assert f"+{difference:.1f}</strong>" in card
    assert f"95 % interval {low:+.1f} to {high:+.1f}" in card
    assert "Treated: 60.0 % of 20; control: 30.0 % of 10" in card
    assert '<span class="analytics-impact-flag">Not significant</span>' in card
    assert (
        f"Not yet significant: the 95 % interval {low:+.1f} to +{high:.1f} points contains 0."
        in card
    )
    assert "Words" in card
    # The chart's data is the admin API's body.
    start = html.index('<script id="analytics-data" type="application/json">')
    embedded = html[html.index(">", start) + 1 : html.index("</script>", start)]
    assert json.loads(embedded)["impact"] == get(api_client).json()


def test_a_significant_score_has_no_flag_and_the_csv_has_its_rows(
    staff_client: Any, tenant: Tenant, words: Metric
) -> None:
    cohort(tenant, "2024-03-04", ["2024-03-12"] * 18 + [None] * 2, words)
    cohort(tenant, "2024-03-05", ["2024-03-15"] * 2 + [None] * 18, words, control=True)

    html = dashboard(staff_client).content.decode()
    card = html[html.index('id="card-impact"') : html.index('id="card-streak-lengths"')]
    assert "Not significant" not in card
    assert "points higher than the control group" in card

    csv = dashboard(staff_client, format="csv", chart="impact").content.decode().splitlines()
    assert csv[0].startswith("cohort_week,metric_key,treated_users,treated_retained")
    assert "2024-03-03,,20,18,90.0,20,2,10.0,80.0," in csv[8]
    assert csv[-1].startswith("all,words,20,18,90.0,20,2,10.0,80.0,")
    assert csv[-1].endswith(",significant")
