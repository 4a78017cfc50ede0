"""Fair play's exclusion (apps/fairplay): an excluded user leaves every ranking of the tenant
at once (metric, points and streak boards, leagues' cohorts, achievements' rarity), with the
ranks of everyone else exact on both rank stores; their events still count, and reinstating
them puts them back in place with their current values."""

import datetime as dt
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.leaderboards.models import LeaderboardEntry
from apps.leagues.models import LeagueEntry
from apps.metrics.models import Metric
from apps.pipeline.leagues import leagues_week_end
from tests.factories import OrganizationWithKey
from tests.leagues.test_weeks_and_cohorts import MONDAY, league_of
from tests.pipeline.test_full_pipeline_query_count import configured, created  # noqa: F401

pytestmark = pytest.mark.django_db

ACTIVE = {"status": "active"}


def send(client: Any, user: str, value: int) -> dict[str, Any]:
    response = client.post("/v1/metrics/words/event", {"user": {"id": user}, "value": value})
    assert response.status_code == 201, response.content
    return dict(response.json())


def board(client: Any, key: str) -> list[tuple[str, int, float]]:
    response = client.get(f"/v1/leaderboards/{key}?limit=100")
    assert response.status_code == 200, response.content
    return [(r["userId"], r["rank"], r["value"]) for r in response.json()["rankings"]]


def own(client: Any, user: str, key: str) -> tuple[Any, Any]:
    body = client.get(f"/v1/users/{user}/leaderboards/{key}").json()
    return body.get("rank"), body.get("value")


def exclude(client: Any, user: str, reason: str = "bot") -> dict[str, Any]:
    response = client.post(f"/admin/ext/v1/users/{user}/exclusion", {"reason": reason})
    assert response.status_code == 200, response.content
    return dict(response.json())


def reinstate(client: Any, user: str) -> dict[str, Any]:
    response = client.delete(f"/admin/ext/v1/users/{user}/exclusion")
    assert response.status_code == 200, response.content
    return dict(response.json())


@pytest.fixture
def boards(configured: Any) -> Any:  # noqa: F811 - the pipeline test's fixture
    """Metric board w, points board x (1 xp a unit), streak board s."""
    created(
        configured,
        "/admin/v1/leaderboards",
        [{"name": "S", "key": "s", "rankBy": "streak", **ACTIVE}],
    )
    return configured


def test_exclusion_and_reinstatement_on_metric_points_and_streak_boards(
    rank_store: str, boards: Any
) -> None:
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)  # the boards have started
    with time_machine.travel(dt.datetime.combine(tomorrow, dt.time(12), tzinfo=dt.UTC)):
        send(boards, "a", 30)
        send(boards, "b", 20)
        send(boards, "c", 10)
        assert [u for u, _, _ in board(boards, "w")] == ["a", "b", "c"]
        body = exclude(boards, "b", "points farming")
        assert body["excluded"] is True
        assert body["reason"] == "points farming"
        assert body["excludedBy"].startswith("api_key:")
        assert body["changed"] is True
        for key in ("w", "x", "s"):
            assert [(u, r) for u, r, _ in board(boards, key)] == [("a", 1), ("c", 2)], key
        # Their own read: their value, and the rank they would hold among the others.
        assert own(boards, "b", "w") == (2, 20)
        assert own(boards, "a", "w") == (1, 30)
        assert own(boards, "c", "w") == (2, 10)
        # Neighbours and friends boards leave them out too, their own included.
        hood = boards.get("/ext/v1/users/a/leaderboards/w/neighbours?k=2").json()
        assert [(r["userId"], r["rank"]) for r in hood["rankings"]] == [("a", 1), ("c", 2)]
        hood = boards.get("/ext/v1/users/b/leaderboards/w/neighbours?k=2").json()
        assert (hood["rank"], hood["rankings"]) == (None, [])
        response = boards.post("/admin/ext/v1/users/a/friends", {"userIds": ["b", "c"]})
        assert response.status_code == 200, response.content
        circle = boards.get("/ext/v1/users/a/leaderboards/w/friends").json()
        assert [(r["userId"], r["rank"]) for r in circle["rankings"]] == [("a", 1), ("c", 2)]
        # Their events still count: totals move, the boards still leave them out.
        response = send(boards, "b", 25)
        assert response["leaderboards"]["w"]["rank"] == 1  # as they see it: 45 > 30
        assert response["points"]["xp"]["total"] == 45
        assert [(u, r) for u, r, _ in board(boards, "w")] == [("a", 1), ("c", 2)]
        send(boards, "c", 25)  # c 35 passes a among those ranked
        assert [(u, r, v) for u, r, v in board(boards, "w")] == [("c", 1, 35), ("a", 2, 30)]
        assert own(boards, "b", "w") == (1, 45)
        # Excluding again changes nothing.
        assert exclude(boards, "b", "again")["changed"] is False
        assert boards.get("/admin/ext/v1/users/b/exclusion").json()["reason"] == "points farming"
        # Reinstated: back in place with what their events gave them meanwhile.
        body = reinstate(boards, "b")
        assert (body["excluded"], body["changed"], body["reason"]) == (False, True, None)
        assert board(boards, "w") == [("b", 1, 45), ("c", 2, 35), ("a", 3, 30)]
        assert [(u, r) for u, r, _ in board(boards, "x")] == [("b", 1), ("c", 2), ("a", 3)]
        assert {u for u, _, _ in board(boards, "s")} == {"a", "b", "c"}
        assert own(boards, "b", "w") == (1, 45)
        hood = boards.get("/ext/v1/users/a/leaderboards/w/neighbours?k=2").json()
        assert [r["userId"] for r in hood["rankings"]] == ["b", "c", "a"]
        circle = boards.get("/ext/v1/users/a/leaderboards/w/friends").json()
        assert [r["userId"] for r in circle["rankings"]] == ["b", "c", "a"]
        assert reinstate(boards, "b")["changed"] is False
    assert not LeaderboardEntry.objects.filter(group__startswith="~").exists()


def breakdown_client(rank_store: str) -> Any:
    from tests.conftest import Client

    org = OrganizationWithKey("breakdown")
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    tenant = org.tenant
    metric = created(client, "/admin/v1/metrics", [{"name": "Words", "key": "words"}])[0]
    attribute = created(
        client, "/admin/v1/attributes", [{"name": "Team", "key": "team", "type": "user"}]
    )[0]
    item = {
        "name": "T",
        "key": "t",
        "rankBy": "metric",
        "metricId": metric["id"],
        "breakdownAttributes": [attribute["id"]],
        **ACTIVE,
    }
    created(client, "/admin/v1/leaderboards", [item])
    client.tenant = tenant  # type: ignore[attr-defined]
    return client


def test_breakdown_groups_lose_the_excluded_user_and_regain_them(rank_store: str) -> None:
    client = breakdown_client(rank_store)
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    with time_machine.travel(dt.datetime.combine(tomorrow, dt.time(12), tzinfo=dt.UTC)):
        for user, team, value in (("a", "red", 5), ("b", "red", 9), ("c", "blue", 7)):
            body = {"user": {"id": user, "attributes": {"team": team}}, "value": value}
            assert client.post("/v1/metrics/words/event", body).status_code == 201
        red = "/v1/leaderboards/t?userAttributes=team:red"
        assert [r["userId"] for r in client.get(red).json()["rankings"]] == ["b", "a"]
        exclude(client, "b")
        assert [(r["userId"], r["rank"]) for r in client.get(red).json()["rankings"]] == [("a", 1)]
        reinstate(client, "b")
        assert [(r["userId"], r["rank"]) for r in client.get(red).json()["rankings"]] == [
            ("b", 1),
            ("a", 2),
        ]


def test_league_cohort_standings_results_and_rewards_leave_the_excluded_user_out(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    system = created(api_client, "/admin/v1/points", [{"name": "XP", "key": "xp"}])[0]
    reward = {"from_place": 1, "to_place": 1, "points": 5, "points_system_id": system["id"]}
    league = league_of(tenant, metric, rewards=[reward])
    path = f"/ext/v1/users/{{}}/leagues/{league.key}"

    def seen(user: str) -> list[tuple[str, int]]:
        body = api_client.get(path.format(user)).json()
        return [(s["userId"], s["rank"]) for s in body["cohort"]["standings"]]

    with time_machine.travel(MONDAY, tick=False):
        for user, value in (("a", 5), ("b", 9), ("c", 7)):
            response = api_client.post(
                "/v1/metrics/words/event", {"user": {"id": user}, "value": value}
            )
            assert response.status_code == 201
        assert seen("a") == [("b", 1), ("c", 2), ("a", 3)]
        exclude(api_client, "b")
        assert seen("a") == [("c", 1), ("a", 2)]
        cohort = api_client.get(path.format("a")).json()["cohort"]["id"]
        body = api_client.get(f"/ext/v1/leagues/{league.key}/cohorts/{cohort}").json()
        assert [(s["userId"], s["rank"]) for s in body["standings"]] == [("c", 1), ("a", 2)]
        # Their own read: among the others, as before the exclusion.
        assert seen("b") == [("b", 1), ("c", 2), ("a", 3)]
        assert api_client.get(path.format("b")).json()["rank"] == 1
    leagues_week_end(MONDAY + dt.timedelta(days=8))
    results = {
        e.user.external_id: (e.placement, e.zone, len(e.rewards))
        for e in LeagueEntry.objects.filter(league=league).select_related("user")
    }
    assert results["b"] == (None, None, 0)  # first by score, but excluded: no reward
    assert results["c"][::2] == (1, 1)  # the first place's reward is c's
    assert results["a"][::2] == (2, 0)
    reinstate(api_client, "b")
    body = api_client.get(f"/ext/v1/leagues/{league.key}/cohorts/{cohort}").json()
    assert [(s["userId"], s["rank"]) for s in body["standings"]] == [("c", 1), ("a", 2)]


def test_rarity_leaves_excluded_users_out(api_client: Any, tenant: Tenant, metric: Metric) -> None:
    created(
        api_client,
        "/admin/v1/achievements",
        [
            {
                "name": "Ten",
                "trigger": "metric",
                "metricId": str(metric.public_id),
                "metricValue": 10,
                **ACTIVE,
            }
        ],
    )
    for user, value in (("a", 10), ("b", 10), ("c", 1), ("d", 1)):
        assert (
            api_client.post(
                "/v1/metrics/words/event", {"user": {"id": user}, "value": value}
            ).status_code
            == 201
        )
    rarity = lambda: api_client.get("/v1/achievements").json()[0]["rarity"]  # noqa: E731
    assert rarity() == 50
    exclude(api_client, "c")  # 2 of 3
    assert round(rarity(), 1) == 66.7
    exclude(api_client, "a")  # 1 of 2
    assert rarity() == 50
    reinstate(api_client, "a")
    reinstate(api_client, "c")
    assert rarity() == 50


def test_bad_input_and_tenant_isolation(api_client: Any, tenant: Tenant, metric: Metric) -> None:
    assert (
        api_client.post("/v1/metrics/words/event", {"user": {"id": "a"}, "value": 1}).status_code
        == 201
    )
    path = "/admin/ext/v1/users/a/exclusion"
    for bad in ({}, {"reason": ""}, {"reason": 5}, {"reason": "x" * 501}, {"reason": "a", "x": 1}):
        assert api_client.post(path, bad).status_code == 422, bad
    assert api_client.generic("POST", path, "[", content_type="application/json").status_code == 400
    assert (
        api_client.post("/admin/ext/v1/users/nobody/exclusion", {"reason": "r"}).status_code == 404
    )
    other = OrganizationWithKey("other")
    from tests.conftest import Client

    stranger = Client()
    stranger.credentials(HTTP_X_API_KEY=other.admin_key)
    assert stranger.post(path, {"reason": "r"}).status_code == 404
    assert stranger.delete(path).status_code == 404
    assert api_client.get(path).json()["excluded"] is False


def test_every_run_of_a_repeating_board_loses_and_regains_the_user(
    rank_store: str, boards: Any
) -> None:
    item = {"name": "D", "key": "d", "rankBy": "metric", "runUnit": "day", "runInterval": 1}
    metric_id = boards.get("/admin/v1/leaderboards").json()[0]["metricId"]
    created(boards, "/admin/v1/leaderboards", [{**item, "metricId": metric_id, **ACTIVE}])
    first = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    runs = [first, first + dt.timedelta(days=1)]
    for day, values in zip(runs, ({"a": 3, "b": 5}, {"a": 4, "b": 2}), strict=True):
        with time_machine.travel(dt.datetime.combine(day, dt.time(12), tzinfo=dt.UTC)):
            for user, value in values.items():
                send(boards, user, value)

    def run(day: dt.date) -> list[tuple[str, int]]:
        body = boards.get(f"/v1/leaderboards/d?run={day}").json()
        return [(r["userId"], r["rank"]) for r in body["rankings"]]

    with time_machine.travel(dt.datetime.combine(runs[1], dt.time(13), tzinfo=dt.UTC)):
        assert [run(day) for day in runs] == [[("b", 1), ("a", 2)], [("a", 1), ("b", 2)]]
        exclude(boards, "b")
        assert [run(day) for day in runs] == [[("a", 1)], [("a", 1)]]
        reinstate(boards, "b")
        assert [run(day) for day in runs] == [[("b", 1), ("a", 2)], [("a", 1), ("b", 2)]]


def test_an_exclusion_stays_in_its_tenant(rank_store: str) -> None:
    first, second = breakdown_client(rank_store), breakdown_client(rank_store)
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    with time_machine.travel(dt.datetime.combine(tomorrow, dt.time(12), tzinfo=dt.UTC)):
        for client in (first, second):
            for user, value in (("a", 5), ("b", 9)):
                body = {"user": {"id": user, "attributes": {"team": "red"}}, "value": value}
                assert client.post("/v1/metrics/words/event", body).status_code == 201
        exclude(first, "b")
        red = "/v1/leaderboards/t?userAttributes=team:red"
        assert [r["userId"] for r in first.get(red).json()["rankings"]] == ["a"]
        assert [r["userId"] for r in second.get(red).json()["rankings"]] == ["b", "a"]
        assert second.get("/admin/ext/v1/users/b/exclusion").json()["excluded"] is False
