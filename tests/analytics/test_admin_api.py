"""The analytics admin API: events go in through the public API (the pipeline fills the rollups),
the series come out of /admin/v1/analytics/..."""

import datetime as dt
import json
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement, AchievementCompletion
from apps.analytics.selectors import MAX_RANGE_DAYS
from apps.leaderboards.models import Leaderboard, LeaderboardEntry
from apps.metrics.models import Metric
from apps.points.models import PointsLevel, PointsSystem, PointsTotal
from apps.users.models import EndUser
from tests.factories import OrganizationWithKey, bump

TODAY = "2024-03-10"
ENDPOINTS = [
    "active-users",
    "new-users",
    "events",
    "retention",
    "streaks",
    "points",
    "achievements",
    "leaderboards",
]


def at(day: str, hour: int = 12) -> dt.datetime:
    return dt.datetime.combine(dt.date.fromisoformat(day), dt.time(hour), dt.UTC)


def event(client: Any, when: dt.datetime, user: str, value: Any = 1, key: str = "words") -> None:
    with time_machine.travel(when, tick=False):
        response = client.post(f"/v1/metrics/{key}/event", {"user": {"id": user}, "value": value})
    assert response.status_code == 201, response.content


def get(client: Any, endpoint: str, **params: Any) -> Any:
    with time_machine.travel(at(TODAY), tick=False):
        return client.get(f"/admin/v1/analytics/{endpoint}", params)


@pytest.fixture
def activity(api_client: Any, metric: Metric) -> None:
    event(api_client, at("2024-03-08", 10), "a")
    event(api_client, at("2024-03-09", 10), "a", value=2)
    event(api_client, at("2024-03-10", 9), "b", value=5)


def test_active_users_default_to_the_last_30_days(api_client: Any, activity: None) -> None:
    response = get(api_client, "active-users")

    assert response.status_code == 200
    body = response.json()
    assert (body["start"], body["end"]) == ("2024-02-10", TODAY)
    assert len(body["days"]) == 30
    assert body["days"][-3:] == [
        {"date": "2024-03-08", "dau": 1, "mau": 1},
        {"date": "2024-03-09", "dau": 1, "mau": 1},
        {"date": "2024-03-10", "dau": 1, "mau": 2},
    ]


@pytest.mark.parametrize(
    ("params", "start", "end"),
    [
        ({"range": "7d"}, "2024-03-04", TODAY),
        ({"range": "90d"}, "2023-12-12", TODAY),
        ({"start": "2024-03-01", "end": "2024-03-09"}, "2024-03-01", "2024-03-09"),
        ({"start": "2024-03-09"}, "2024-03-09", TODAY),
        ({"range": ""}, "2024-02-10", TODAY),
    ],
)
def test_ranges_are_named_or_explicit(
    api_client: Any, activity: None, params: dict, start: str, end: str
) -> None:
    body = get(api_client, "new-users", **params).json()
    assert (body["start"], body["end"]) == (start, end)
    assert body["days"][0]["date"] == start
    assert body["days"][-1]["date"] == end


def test_the_whole_range_starts_with_the_tenant(
    api_client: Any, tenant: Tenant, activity: None
) -> None:
    Tenant.objects.filter(pk=tenant.pk).update(created=at("2024-03-01"))
    body = get(api_client, "events", range="all").json()
    assert (body["start"], body["end"]) == ("2024-03-01", TODAY)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"range": "1y"}, "range must be one of 7d, 30d, 90d, all"),
        ({"start": "10/03/2024"}, "start must be a date (YYYY-MM-DD)"),
        ({"start": "2024-03-01", "end": "soon"}, "end must be a date (YYYY-MM-DD)"),
        ({"end": "2024-03-01"}, "start is required with end (YYYY-MM-DD)"),
        ({"start": "2024-03-10", "end": "2024-03-01"}, "start must not be after end"),
        ({"range": "7d", "start": "2024-03-01"}, "range cannot be combined with start and end"),
        (
            {"start": "2019-01-01", "end": TODAY},
            f"start to end may span at most {MAX_RANGE_DAYS} days",
        ),
    ],
)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_invalid_ranges_are_422_with_an_error_body(
    api_client: Any, endpoint: str, params: dict, message: str
) -> None:
    response = get(api_client, endpoint, **params)
    assert response.status_code == 422
    assert response.json() == {"error": message}


@pytest.mark.parametrize("endpoint", [*ENDPOINTS, "overview"])
def test_every_endpoint_needs_an_admin_key(
    anon_client: Any, org: OrganizationWithKey, endpoint: str
) -> None:
    response = get(anon_client, endpoint)
    assert response.status_code == 401
    assert "error" in response.json()

    anon_client.credentials(HTTP_X_API_KEY=org.application_key("a"))
    assert get(anon_client, endpoint).status_code == 403

    anon_client.credentials(HTTP_X_API_KEY=org.admin_key, HTTP_TENANT_ID="nobody")
    assert get(anon_client, endpoint).status_code == 404


def test_new_users_and_events(api_client: Any, activity: None) -> None:
    users = get(api_client, "new-users", range="7d").json()
    assert users["total"] == 2
    assert [d["newUsers"] for d in users["days"]] == [0, 0, 0, 0, 1, 0, 1]

    events = get(api_client, "events", range="7d").json()
    assert [d["events"] for d in events["days"]] == [0, 0, 0, 0, 1, 1, 1]
    (words,) = events["metrics"]
    assert {k: words[k] for k in ("key", "name", "units", "events", "change")} == {
        "key": "words",
        "name": "Words",
        "units": None,
        "events": 3,
        "change": 8,
    }
    assert words["days"][-3:] == [
        {"date": "2024-03-08", "events": 1, "change": 1},
        {"date": "2024-03-09", "events": 1, "change": 2},
        {"date": "2024-03-10", "events": 1, "change": 5},
    ]


def test_retention(api_client: Any, activity: None) -> None:
    body = get(api_client, "retention", range="7d").json()

    assert body["weeks"] == 1
    assert [c["week"] for c in body["cohorts"]] == ["2024-03-03", "2024-03-10"]
    first, second = body["cohorts"]
    assert first["treatment"] == {
        "users": 1,
        "weeks": [
            {"week": 0, "activeUsers": 1, "percent": 100.0},
            {"week": 1, "activeUsers": 0, "percent": 0.0},
        ],
    }
    assert first["control"] == {
        "users": 0,
        "weeks": [
            {"week": 0, "activeUsers": 0, "percent": None},
            {"week": 1, "activeUsers": 0, "percent": None},
        ],
    }
    assert second["treatment"]["weeks"] == [{"week": 0, "activeUsers": 1, "percent": 100.0}]
    assert body["average"]["treatment"] == [
        {"week": 0, "activeUsers": 2, "users": 2, "percent": 100.0},
        {"week": 1, "activeUsers": 0, "users": 1, "percent": 0.0},
    ]


def test_streaks(api_client: Any, activity: None) -> None:
    body = get(api_client, "streaks", range="7d").json()

    assert body["frequency"] == "daily"
    assert (body["users"], body["usersWithStreak"]) == (2, 0)
    assert body["lengths"][0] == {"bucket": "1", "min": 1, "max": 1, "users": 0}
    assert body["lengths"][-1] == {"bucket": "366+", "min": 366, "max": None, "users": 0}
    assert [p["periodStart"] for p in body["periods"]][:2] == ["2024-03-04", "2024-03-05"]
    assert {p["activeStreaks"] for p in body["periods"]} == {0}


def test_points_achievements_and_leaderboards(
    api_client: Any, tenant: Tenant, activity: None
) -> None:
    a, b = EndUser.objects.get(external_id="a"), EndUser.objects.get(external_id="b")
    xp = PointsSystem.objects.create(tenant=tenant, key="xp", name="XP")
    PointsLevel.objects.create(system=xp, key="one", name="One", points=0)
    PointsLevel.objects.create(system=xp, key="two", name="Two", points=10)
    PointsTotal.objects.create(tenant=tenant, user=a, system=xp, total=12)
    done = Achievement.objects.create(
        tenant=tenant, name="Done", trigger="api", key="done", status="active"
    )
    AchievementCompletion.objects.create(
        tenant=tenant, achievement=done, user=a, completed_at=at("2024-03-09")
    )
    board = Leaderboard.objects.create(
        tenant=tenant,
        key="top",
        name="Top",
        rank_by="metric",
        status="active",
        start=dt.date(2024, 3, 10),
    )
    LeaderboardEntry.objects.create(
        leaderboard=board, run_start=dt.date(2024, 3, 10), user=b, value=5, reached_at=at(TODAY)
    )
    bump(tenant)

    points = get(api_client, "points", range="7d").json()
    (system,) = points["systems"]
    assert (system["key"], system["points"], system["triggerTypes"]) == ("xp", 0, [])
    assert system["days"][0] == {"date": "2024-03-04", "points": 0, "byTriggerType": {}}
    assert system["levels"] == [
        {"key": "one", "name": "One", "points": 0, "users": 1},
        {"key": "two", "name": "Two", "points": 10, "users": 1},
    ]

    achievements = get(api_client, "achievements", range="7d").json()
    assert achievements["users"] == 2
    assert [d["completions"] for d in achievements["days"]] == [0, 0, 0, 0, 0, 1, 0]
    (item,) = achievements["achievements"]
    assert {k: item[k] for k in ("key", "completions", "completionsInRange", "rarity")} == {
        "key": "done",
        "completions": 1,
        "completionsInRange": 1,
        "rarity": 50.0,
    }
    assert item["id"] == str(done.public_id)

    boards = get(api_client, "leaderboards", range="7d").json()
    (top,) = boards["leaderboards"]
    assert top["key"] == "top"
    assert top["currentRun"] == {"start": TODAY, "end": None, "participants": 1}
    assert top["runs"] == [{"start": TODAY, "end": None, "participants": 1}]


def test_overview(api_client: Any, activity: None) -> None:
    body = get(api_client, "overview").json()

    assert {k: body[k] for k in ("date", "users", "dau", "mau")} == {
        "date": TODAY,
        "users": 2,
        "dau": 1,
        "mau": 2,
    }
    assert [d["events"] for d in body["days"]] == [0, 0, 0, 0, 1, 1, 1]
    assert body["days"][0]["date"] == "2024-03-04"


def test_another_tenants_data_is_invisible(
    api_client: Any, other_tenant_client: Any, other_tenant: Tenant, activity: None
) -> None:
    Metric.objects.create(tenant=other_tenant, key="steps", name="Steps")
    bump(other_tenant)
    event(other_tenant_client, at("2024-03-10", 8), "z", key="steps")

    theirs = get(other_tenant_client, "events", range="7d").json()
    assert [m["key"] for m in theirs["metrics"]] == ["steps"]
    assert sum(d["events"] for d in theirs["days"]) == 1
    assert get(other_tenant_client, "overview").json()["users"] == 1
    assert get(other_tenant_client, "active-users", range="7d").json()["days"][-1]["mau"] == 1

    mine = get(api_client, "events", range="7d").json()
    assert [m["key"] for m in mine["metrics"]] == ["words"]
    assert get(api_client, "overview").json()["users"] == 2


def test_the_admin_openapi_document_lists_the_analytics_endpoints(
    anon_client: Any, db: Any
) -> None:
    document = json.loads(anon_client.get("/admin/v1/openapi").content)
    for endpoint in [*ENDPOINTS, "overview"]:
        operation = document["paths"][f"/analytics/{endpoint}"]["get"]
        assert operation["operationId"] == f"admin_analytics_{endpoint.replace('-', '_')}"
        assert "200" in operation["responses"]
    parameters = document["paths"]["/analytics/events"]["get"]["parameters"]
    assert {p["name"] for p in parameters} >= {"range", "start", "end"}


def queries(client: Any, endpoint: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert get(client, endpoint, range="30d").status_code == 200
    return len(captured.captured_queries)


@pytest.mark.parametrize("endpoint", [*ENDPOINTS, "overview"])
def test_queries_do_not_grow_with_users_or_events(
    api_client: Any, activity: None, endpoint: str
) -> None:
    queries(api_client, endpoint)  # configuration snapshots are loaded once
    before = queries(api_client, endpoint)
    for user in ("c", "d", "e", "f"):
        for day in ("2024-03-01", "2024-03-05", "2024-03-09"):
            event(api_client, at(day), user)

    assert queries(api_client, endpoint) == before
