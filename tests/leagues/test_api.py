"""The leagues application API (/ext/v1): the tenant's leagues, a user's current week with
their cohort's live standings, their history once weeks are finished, a cohort's standings;
application keys, tenants, and the Trophy documents left as they were."""

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Tenant
from apps.leagues.choices import Status
from apps.leagues.configuration import league_update
from apps.leagues.domain import LeagueSettings
from apps.leagues.models import League, LeagueCohort
from apps.leagues.services import cohorts_finish
from apps.metrics.models import Metric
from apps.users.models import EndUser
from tests.conftest import Client
from tests.leagues.test_weeks_and_cohorts import MONDAY, league_of, send

pytestmark = pytest.mark.django_db

WEEK_END = dt.datetime(2026, 11, 30, 0, 0, tzinfo=dt.UTC)  # the end of MONDAY's week


def current(client: Any, user: str, key: str = "weekly") -> dict[str, Any]:
    response = client.get(f"/ext/v1/users/{user}/leagues/{key}")
    assert response.status_code == 200, response.content
    return dict(response.json())


def five_users(api_client: Any, metric: Metric) -> None:
    with time_machine.travel(MONDAY, tick=False):
        for i, value in enumerate([50, 40, 30, 20, 10]):
            send(api_client, metric, f"u{i}", value)


def test_the_leagues_are_listed_with_their_tiers_and_current_week(
    api_client: Any, tenant: Tenant, metric: Metric
):
    league = league_of(tenant, metric)
    archived = league_of(tenant, metric, key="old", status=Status.ARCHIVED)
    with time_machine.travel(MONDAY, tick=False):
        response = api_client.get("/ext/v1/leagues")

    assert response.status_code == 200
    [body] = response.json()
    assert body == {
        "id": str(league.public_id),
        "key": "weekly",
        "name": "Weekly",
        "description": None,
        "status": "active",
        "scoreBy": "metric",
        "metricKey": "words",
        "metricName": "Words",
        "weekEndsOn": "sunday",
        "weekEndsAt": "24:00",
        "cohortSize": 5,
        "tiers": [
            {"name": "Bronze", "promote": 2, "demote": 0},
            {"name": "Silver", "promote": 2, "demote": 2},
            {"name": "Gold", "promote": 0, "demote": 2},
        ],
        "zoneUnit": "count",
        "idle": "demote",
        "absent": "keep",
        "userAttributes": [],
        "weekStart": "2026-11-23T00:00:00Z",
        "weekEnd": "2026-11-30T00:00:00Z",
    }
    assert archived.key not in [lg["key"] for lg in response.json()]


def test_a_user_who_has_not_joined_this_week_has_no_cohort_and_the_lowest_tier(
    api_client: Any, tenant: Tenant, metric: Metric
):
    league_of(tenant, metric)
    api_client.put("/v1/users/u1", {"name": "Ada"})
    with time_machine.travel(MONDAY, tick=False):
        body = current(api_client, "u1")

    assert body == {
        "id": body["id"],
        "key": "weekly",
        "name": "Weekly",
        "weekStart": "2026-11-23T00:00:00Z",
        "weekEnd": "2026-11-30T00:00:00Z",
        "timeLeft": int((WEEK_END - MONDAY).total_seconds()),
        "tier": {"index": 0, "name": "Bronze"},
        "rank": None,
        "score": None,
        "zone": None,
        "cohort": None,
    }


def test_a_joined_user_sees_their_cohorts_live_standings_with_zones(
    api_client: Any, tenant: Tenant, metric: Metric
):
    league_of(tenant, metric)
    api_client.put("/v1/users/u2", {"name": "Grace"})
    five_users(api_client, metric)
    with time_machine.travel(MONDAY + dt.timedelta(hours=1), tick=False):
        send(api_client, metric, "u3", Decimal("25.5"))  # 45.5: second
        body = current(api_client, "u3")

    cohort = LeagueCohort.objects.get()
    assert body["timeLeft"] == int((WEEK_END - MONDAY).total_seconds()) - 3600
    assert body["tier"] == {"index": 0, "name": "Bronze"}
    assert (body["rank"], body["score"], body["zone"]) == (2, 45.5, "promotion")
    assert body["cohort"] == {
        "id": str(cohort.public_id),
        "tier": {"index": 0, "name": "Bronze"},
        "weekStart": "2026-11-23T00:00:00Z",
        "weekEnd": "2026-11-30T00:00:00Z",
        "members": 5,
        "capacity": 5,
        "finished": False,
        "standings": [
            {"rank": 1, "userId": "u0", "userName": None, "score": 50, "zone": "promotion"},
            {"rank": 2, "userId": "u3", "userName": None, "score": 45.5, "zone": "promotion"},
            {"rank": 3, "userId": "u1", "userName": None, "score": 40, "zone": "safe"},
            {"rank": 4, "userId": "u2", "userName": "Grace", "score": 30, "zone": "safe"},
            {"rank": 5, "userId": "u4", "userName": None, "score": 10, "zone": "safe"},
        ],
    }


def test_a_tie_goes_to_who_reached_the_score_first(api_client: Any, tenant: Tenant, metric: Metric):
    league_of(tenant, metric)
    with time_machine.travel(MONDAY, tick=False):
        send(api_client, metric, "late", 5)
        send(api_client, metric, "early", 10)
    with time_machine.travel(MONDAY + dt.timedelta(minutes=5), tick=False):
        send(api_client, metric, "late", 5)
        standings = current(api_client, "early")["cohort"]["standings"]
    assert [(s["userId"], s["rank"]) for s in standings] == [("early", 1), ("late", 2)]


def test_a_cohorts_standings_are_read_by_its_id(api_client: Any, tenant: Tenant, metric: Metric):
    league_of(tenant, metric)
    five_users(api_client, metric)
    cohort = LeagueCohort.objects.get()
    with time_machine.travel(MONDAY, tick=False):
        mine = current(api_client, "u0")["cohort"]
        response = api_client.get(f"/ext/v1/leagues/weekly/cohorts/{cohort.public_id}")
    assert response.status_code == 200
    assert response.json() == mine


def test_an_unknown_or_foreign_cohort_is_not_found(api_client: Any, tenant: Tenant, metric: Metric):
    league_of(tenant, metric)
    league_of(tenant, metric, key="other")
    five_users(api_client, metric)
    cohort = LeagueCohort.objects.get(league__key="weekly")
    for path in (
        f"/ext/v1/leagues/other/cohorts/{cohort.public_id}",
        "/ext/v1/leagues/weekly/cohorts/not-a-uuid",
        "/ext/v1/leagues/weekly/cohorts/00000000-0000-4000-8000-000000000000",
        f"/ext/v1/leagues/nope/cohorts/{cohort.public_id}",
    ):
        response = api_client.get(path)
        assert response.status_code == 404, path
        assert set(response.json()) == {"error"}


def test_a_finished_week_shows_its_results_and_becomes_history(
    api_client: Any, tenant: Tenant, metric: Metric
):
    league_of(tenant, metric)
    five_users(api_client, metric)
    cohort = LeagueCohort.objects.get()
    with time_machine.travel(WEEK_END + dt.timedelta(hours=1), tick=False):
        # The job has not run: the past week is history already, without results.
        [week] = api_client.get("/ext/v1/users/u0/leagues/weekly/history").json()
        assert (week["finished"], week["placement"], week["zone"], week["nextTier"]) == (
            False,
            None,
            None,
            None,
        )
        # The tier the next week would join them in is worked out all the same.
        assert current(api_client, "u0")["tier"] == {"index": 1, "name": "Silver"}
        assert cohorts_finish(WEEK_END) == 1
        history = api_client.get("/ext/v1/users/u0/leagues/weekly/history").json()
        mine = current(api_client, "u0")
        finished = api_client.get(f"/ext/v1/leagues/weekly/cohorts/{cohort.public_id}").json()

    assert history == [
        {
            "cohortId": str(cohort.public_id),
            "weekStart": "2026-11-23T00:00:00Z",
            "weekEnd": "2026-11-30T00:00:00Z",
            "tier": {"index": 0, "name": "Bronze"},
            "score": 50,
            "finished": True,
            "placement": 1,
            "zone": "promotion",
            "nextTier": {"index": 1, "name": "Silver"},
            "left": False,
            "rewards": [],
        }
    ]
    assert mine["tier"] == {"index": 1, "name": "Silver"}
    assert mine["cohort"] is None
    assert finished["finished"] is True
    assert [(s["userId"], s["rank"], s["zone"]) for s in finished["standings"]] == [
        ("u0", 1, "promotion"),
        ("u1", 2, "promotion"),
        ("u2", 3, "safe"),
        ("u3", 4, "safe"),
        ("u4", 5, "safe"),
    ]


def test_history_is_newest_first_limited_and_leaves_out_the_current_week(
    api_client: Any, tenant: Tenant, metric: Metric
):
    league_of(tenant, metric)
    for week in range(3):
        with time_machine.travel(MONDAY + dt.timedelta(weeks=week), tick=False):
            send(api_client, metric, "u1", 10 + week)
    with time_machine.travel(MONDAY + dt.timedelta(weeks=2), tick=False):
        cohorts_finish(MONDAY + dt.timedelta(weeks=2))
        history = api_client.get("/ext/v1/users/u1/leagues/weekly/history").json()
        limited = api_client.get("/ext/v1/users/u1/leagues/weekly/history?limit=1").json()
        refused = api_client.get("/ext/v1/users/u1/leagues/weekly/history?limit=0")

    assert [w["score"] for w in history] == [11, 10]
    assert [w["weekStart"] for w in history] == ["2026-11-30T00:00:00Z", "2026-11-23T00:00:00Z"]
    assert limited == history[:1]
    assert refused.status_code == 422
    assert refused.json() == {"error": "limit must be between 1 and 100"}


def test_rewards_earned_are_in_the_history(api_client: Any, tenant: Tenant, metric: Metric):
    from apps.points.models import PointsSystem

    system = PointsSystem.objects.create(tenant=tenant, key="xp", name="XP")
    league_of(
        tenant,
        metric,
        rewards=[{"from_place": 1, "points": 100, "points_system_id": str(system.public_id)}],
    )
    five_users(api_client, metric)
    cohorts_finish(WEEK_END)
    with time_machine.travel(WEEK_END + dt.timedelta(hours=1), tick=False):
        first = api_client.get("/ext/v1/users/u0/leagues/weekly/history").json()[0]
        second = api_client.get("/ext/v1/users/u1/leagues/weekly/history").json()[0]
    assert first["rewards"] == [
        {
            "fromPlace": 1,
            "toPlace": 1,
            "tier": None,
            "points": 100,
            "pointsSystemId": str(system.public_id),
            "achievementId": None,
        }
    ]
    assert second["rewards"] == []


def test_an_application_key_reads_its_own_user_only(
    org: Any, api_client: Any, tenant: Tenant, metric: Metric
):
    league_of(tenant, metric)
    five_users(api_client, metric)
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    with time_machine.travel(MONDAY, tick=False):
        assert client.get("/ext/v1/users/u1/leagues/weekly").status_code == 200
        assert client.get("/ext/v1/users/u1/leagues/weekly/history").status_code == 200
        for path in ("/ext/v1/users/u2/leagues/weekly", "/ext/v1/users/u2/leagues/weekly/history"):
            response = client.get(path)
            assert response.status_code == 403, path
            assert response.json() == {
                "error": "This application API key may only access its own user"
            }
        # The cohort's standings are shown to its members as a leaderboard's are.
        cohort = client.get("/ext/v1/users/u1/leagues/weekly").json()["cohort"]
        assert client.get(f"/ext/v1/leagues/weekly/cohorts/{cohort['id']}").status_code == 200


def test_another_tenants_league_and_users_are_not_found(
    api_client: Any, other_tenant_client: Any, tenant: Tenant, metric: Metric
):
    league_of(tenant, metric)
    five_users(api_client, metric)
    cohort = LeagueCohort.objects.get()

    assert other_tenant_client.get("/ext/v1/leagues").json() == []
    for path in (
        "/ext/v1/users/u0/leagues/weekly",
        "/ext/v1/users/u0/leagues/weekly/history",
        f"/ext/v1/leagues/weekly/cohorts/{cohort.public_id}",
    ):
        assert other_tenant_client.get(path).status_code == 404, path


def test_unknown_users_and_leagues_and_archived_leagues_are_not_found(
    api_client: Any, tenant: Tenant, metric: Metric
):
    league = league_of(tenant, metric)
    five_users(api_client, metric)
    response = api_client.get("/ext/v1/users/nobody/leagues/weekly")
    assert response.status_code == 404
    assert response.json() == {"error": 'User not found: "nobody"'}
    assert api_client.get("/ext/v1/users/u0/leagues/nope").json() == {"error": "League not found"}
    league_update(tenant, League.objects.get(pk=league.pk), LeagueSettings(status="archived"))
    assert api_client.get("/ext/v1/users/u0/leagues/weekly").status_code == 404
    assert api_client.get("/ext/v1/leagues").json() == []


def test_a_user_id_with_a_control_character_is_422(api_client: Any, tenant: Tenant, metric):
    league_of(tenant, metric)
    for path in (
        "/ext/v1/users/a%0Ab/leagues/weekly",
        "/ext/v1/users/a%0Ab/leagues/weekly/history",
    ):
        response = api_client.get(path)
        assert response.status_code == 422
        assert response.json() == {"error": "id must not contain control characters"}
    assert not EndUser.objects.filter(external_id="a\nb").exists()


def test_a_users_week_reads_a_bounded_number_of_statements(
    api_client: Any, tenant: Tenant, metric: Metric
):
    league_of(tenant, metric, cohort_size=100)
    with time_machine.travel(MONDAY, tick=False):
        for i in range(30):
            send(api_client, metric, f"u{i}", i + 1)
        api_client.get("/ext/v1/users/u0/leagues/weekly")  # the configuration is cached
        with CaptureQueriesContext(connection) as queries:
            body = current(api_client, "u0")
    assert len(body["cohort"]["standings"]) == 30
    # The key, the user, their entry with its cohort, the cohort's entries with their users.
    assert len(queries) == 4, [q["sql"] for q in queries]


def test_the_trophy_documents_are_unchanged_by_the_extensions(anon_client: Any):
    application = json.loads(anon_client.get("/v1/openapi").content)
    admin = json.loads(anon_client.get("/admin/v1/openapi").content)
    for document in (application, admin):
        assert not [p for p in document["paths"] if "league" in p and "leaderboard" not in p]
        assert not [name for name in document["components"]["schemas"] if "League" in name]
        assert document["info"]["title"] in ("gamify application API", "gamify admin API")
    extension = json.loads(anon_client.get("/ext/v1/openapi").content)
    assert extension["servers"] == [{"url": "/ext/v1"}]
    assert extension["info"]["title"] == "gamify extensions: application API"
    assert {
        "/leagues",
        "/leagues/{key}/cohorts/{cohort_id}",
        "/users/{user_id}/leagues/{key}",
        "/users/{user_id}/leagues/{key}/history",
    } <= set(extension["paths"])  # beside the other extensions' routes
    assert anon_client.get("/ext/v1/docs").status_code == 200


def test_the_extension_routes_are_not_under_the_trophy_prefixes(api_client: Any, metric):
    for path in ("/v1/leagues", "/api/leagues", "/admin/v1/leagues", "/ext/v1/nope"):
        response = api_client.get(path)
        assert response.status_code == 404, path
        assert set(response.json()) == {"error"}
