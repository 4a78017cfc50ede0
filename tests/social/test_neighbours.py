"""A user's neighbours on a leaderboard (/ext/v1/users/{id}/leaderboards/{key}/neighbours) and
in a league cohort (/ext/v1/users/{id}/leagues/{key}/neighbours): the ranks are those the
rankings page shows, on both rank stores (PostgreSQL's or SQLite's counts, and Redis), at the
top, the bottom and the middle, with ties; k's bounds; a user not ranked; runs and breakdown
groups; application keys; and a read whose statements do not grow with the board."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.leaderboards import ranks
from apps.users.models import Attribute
from tests.conftest import Client
from tests.factories import bump
from tests.leagues.test_weeks_and_cohorts import MONDAY, league_of, send
from tests.social.support import RUN, board_of, fill, later, tied_places, users

pytestmark = pytest.mark.django_db


def neighbours(client: Any, user: str, key: str = "top", status: int = 200, **params: Any) -> Any:
    response = client.get(f"/ext/v1/users/{user}/leaderboards/{key}/neighbours", params)
    assert response.status_code == status, response.content
    return response.json()


def page(client: Any, key: str = "top", **params: Any) -> list[dict[str, Any]]:
    response = client.get(f"/v1/leaderboards/{key}", {"limit": 1000, **params})
    assert response.status_code == 200, response.content
    return list(response.json()["rankings"])


def test_every_users_neighbours_are_the_rankings_pages_slice_around_them(
    api_client, tenant, rank_store
):
    board = board_of(tenant)
    who = users(tenant, 40)
    fill(board, who, tied_places(40))
    rankings = page(api_client)
    assert len(rankings) == 40
    for k in (1, 3, 25):
        for place, ranked in enumerate(rankings):
            body = neighbours(api_client, ranked["userId"], k=k)
            assert body["rank"] == ranked["rank"] == place + 1
            assert body["value"] == ranked["value"]
            assert body["k"] == k
            assert body["rankings"] == rankings[max(0, place - k) : place + k + 1]
    # The Trophy route gives each user the same rank.
    for ranked in rankings[::7]:
        mine = api_client.get(f"/v1/users/{ranked['userId']}/leaderboards/top").json()
        assert mine["rank"] == ranked["rank"]


def test_at_the_top_and_the_bottom_the_window_is_cut_short(api_client, tenant, rank_store):
    board = board_of(tenant)
    who = users(tenant, 12)
    fill(board, who, [(Decimal(100 - n), later(0)) for n in range(12)])
    top = neighbours(api_client, "u0", k=3)
    assert [r["userId"] for r in top["rankings"]] == ["u0", "u1", "u2", "u3"]
    assert [r["rank"] for r in top["rankings"]] == [1, 2, 3, 4]
    bottom = neighbours(api_client, "u11", k=3)
    assert [r["rank"] for r in bottom["rankings"]] == [9, 10, 11, 12]
    middle = neighbours(api_client, "u6", k=2)
    assert [(r["userId"], r["rank"], r["value"]) for r in middle["rankings"]] == [
        ("u4", 5, 96),
        ("u5", 6, 95),
        ("u6", 7, 94),
        ("u7", 8, 93),
        ("u8", 9, 92),
    ]
    assert middle["rankings"][2]["userName"] == "Name 6"
    # Default k is 5.
    assert len(neighbours(api_client, "u6")["rankings"]) == 11


def test_ties_are_ordered_as_the_board_orders_them(api_client, tenant, rank_store):
    board = board_of(tenant)
    who = users(tenant, 6)
    # All on 10: the earlier moment first, then the user's creation order (primary key).
    fill(board, who, [(Decimal(10), later(s)) for s in (5, 1, 1, 1, 0, 9)])
    expected = ["u4", "u1", "u2", "u3", "u0", "u5"]
    assert [r["userId"] for r in page(api_client)] == expected
    body = neighbours(api_client, "u2", k=25)
    assert body["rank"] == 3
    assert [r["userId"] for r in body["rankings"]] == expected
    assert [r["rank"] for r in body["rankings"]] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("k", ["0", "26", "-1", "x", "1.5", "+3", " 3"])
def test_k_out_of_bounds_is_refused(api_client, tenant, k):
    board = board_of(tenant)
    fill(board, users(tenant, 3), tied_places(3))
    body = neighbours(api_client, "u1", status=422, k=k)
    assert "k must" in body["error"]


def test_k_at_its_bounds_is_taken(api_client, tenant, rank_store):
    board = board_of(tenant)
    fill(board, users(tenant, 60), [(Decimal(n), later(0)) for n in range(60)])
    assert len(neighbours(api_client, "u30", k=25)["rankings"]) == 51
    assert len(neighbours(api_client, "u30", k=1)["rankings"]) == 3


def test_a_user_not_on_the_board_has_no_rank_and_no_rankings(api_client, tenant, rank_store):
    board = board_of(tenant)
    fill(board, users(tenant, 4), tied_places(4))
    users(tenant, 1, prefix="new")
    body = neighbours(api_client, "new0")
    assert (body["rank"], body["value"], body["rankings"]) == (None, None, [])
    assert body["key"] == "top"
    assert body["k"] == 5
    # Unknown users and boards, and inactive boards, are not found.
    assert "User not found" in neighbours(api_client, "nobody", status=404)["error"]
    assert "Leaderboard not found" in neighbours(api_client, "u1", key="nope", status=404)["error"]
    board_of(tenant, key="draft", status="inactive")
    neighbours(api_client, "u1", key="draft", status=404)


def test_an_empty_board_ranks_nobody(api_client, tenant, rank_store):
    board_of(tenant)
    users(tenant, 1)
    assert neighbours(api_client, "u0")["rankings"] == []


def test_runs_are_chosen_as_the_leaderboard_routes_choose_them(api_client, tenant, rank_store):
    board = board_of(tenant, run_unit="day", run_interval=1)
    who = users(tenant, 5)
    fill(board, who, [(Decimal(n), later(0)) for n in range(5)])
    second = RUN + dt.timedelta(days=1)
    fill(board, who, [(Decimal(-n), later(0)) for n in range(5)], run=second)
    first_day = neighbours(api_client, "u4", run="2026-03-01", k=1)
    assert first_day["rank"] == 1
    assert first_day["end"] == "2026-03-01"
    next_day = neighbours(api_client, "u4", run="2026-03-02", k=1)
    assert next_day["rank"] == 5
    assert next_day["end"] == "2026-03-02"
    assert next_day["rankings"] == page(api_client, run="2026-03-02")[3:]
    assert neighbours(api_client, "u4", run="2026-02-01", status=422)["error"]
    assert neighbours(api_client, "u4", run="March", status=422)["error"]
    # A day with no entries: nobody ranked.
    assert neighbours(api_client, "u4", run="2026-03-05")["rank"] is None


def test_breakdown_boards_rank_the_user_in_their_own_group(api_client, tenant, rank_store):
    region = Attribute.objects.create(tenant=tenant, key="region", name="Region", type="user")
    board = board_of(tenant, breakdown_attributes=[str(region.public_id)])
    bump(tenant)
    eu, us = users(tenant, 4, "eu"), users(tenant, 4, "us")
    for user in eu:
        user.attributes = {"region": "eu"}
        user.save()
    for user in us:
        user.attributes = {"region": "us"}
        user.save()
    fill(board, eu, [(Decimal(n), later(0)) for n in range(4)], group="region=eu")
    fill(board, us, [(Decimal(10 * n), later(0)) for n in range(4)], group="region=us")
    body = neighbours(api_client, "eu1", k=25)
    assert body["rankings"] == page(api_client, userAttributes="region:eu")
    assert [r["userId"] for r in body["rankings"]] == ["eu3", "eu2", "eu1", "eu0"]
    assert neighbours(api_client, "us3", k=1)["rank"] == 1
    users(tenant, 1, "nowhere")  # no region: takes no part
    assert neighbours(api_client, "nowhere0")["rank"] is None


def test_every_kind_of_board_is_read_alike(api_client, tenant, rank_store):
    for kind in ("points", "streak"):
        board = board_of(tenant, key=kind, rank_by=kind)
        who = users(tenant, 3, prefix=kind)
        fill(board, who, [(Decimal(n), later(0)) for n in range(3)])
        body = neighbours(api_client, f"{kind}1", key=kind, k=1)
        assert body["rankings"] == page(api_client, key=kind)
        assert body["rankBy"] == kind


def test_ranks_held_by_redis_follow_events(api_client, tenant, metric, rank_store):
    """Through the event path (which moves the Redis members), not straight into the tables."""
    item = {
        "name": "Top",
        "key": "top",
        "rankBy": "metric",
        "metricId": str(metric.public_id),
        "status": "active",
    }
    assert api_client.post("/admin/v1/leaderboards", [item]).status_code == 201
    with time_machine.travel(dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC), tick=False) as clock:
        for n, value in enumerate([5, 9, 5, 1, 9, 3, 5]):
            clock.shift(dt.timedelta(seconds=n % 2))
            body = {"user": {"id": f"e{n}"}, "value": value}
            assert api_client.post("/v1/metrics/words/event", body).status_code == 201
        rankings = page(api_client)
        for place, ranked in enumerate(rankings):
            body = neighbours(api_client, ranked["userId"], k=2)
            assert body["rankings"] == rankings[max(0, place - 2) : place + 3]


def test_an_application_key_reads_its_own_users_neighbours_only(org, tenant):
    board = board_of(tenant)
    fill(board, users(tenant, 3), tied_places(3))
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    assert neighbours(client, "u1")["rank"] is not None
    assert "own user" in neighbours(client, "u2", status=403)["error"]


def test_another_tenants_board_and_users_are_not_found(api_client, other_tenant_client, tenant):
    board = board_of(tenant)
    fill(board, users(tenant, 3), tied_places(3))
    neighbours(other_tenant_client, "u1", status=404)


def _statements(client: Any, user: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        neighbours(client, user, k=25)
    return len(queries)


def test_the_read_costs_the_same_statements_on_a_small_and_a_large_board(
    api_client, tenant, rank_store
):
    """Authentication (the key's query), the user, then one statement: the window in SQL, or
    the window's names after Redis answered. The board's configuration comes from the cache."""
    board = board_of(tenant)
    small = users(tenant, 30)
    fill(board, small, [(Decimal(n), later(0)) for n in range(30)])
    neighbours(api_client, "u15")  # warms the configuration cache (and builds the Redis set)
    on_small = _statements(api_client, "u15")
    assert on_small == 3
    large = users(tenant, 400, prefix="more")
    fill(board, large, [(Decimal(n) / 7, later(n % 3)) for n in range(400)])
    ranks.reset()  # entries written straight into the table: the Redis set is rebuilt once
    neighbours(api_client, "u15")
    assert _statements(api_client, "u15") == on_small
    assert _statements(api_client, "more200") == on_small


# --- league cohorts ---------------------------------------------------------------------------


def league_neighbours(client: Any, user: str, status: int = 200, **params: Any) -> Any:
    response = client.get(f"/ext/v1/users/{user}/leagues/weekly/neighbours", params)
    assert response.status_code == status, response.content
    return response.json()


def test_a_users_neighbours_in_their_cohort_are_the_standings_around_them(
    api_client, tenant, metric
):
    league_of(tenant, metric, cohort_size=10)
    with time_machine.travel(MONDAY, tick=False):
        for i, value in enumerate([50, 40, 30, 30, 20, 10, 5]):
            send(api_client, metric, f"u{i}", value)
        standings = api_client.get("/ext/v1/users/u0/leagues/weekly").json()["cohort"]["standings"]
        top = league_neighbours(api_client, "u0", k=2)
        middle = league_neighbours(api_client, "u3", k=1)
        bottom = league_neighbours(api_client, "u6", k=25)
        users(tenant, 1, prefix="idle")
        idle = league_neighbours(api_client, "idle0")
        refused = league_neighbours(api_client, "u0", status=422, k=0)
    assert top["standings"] == standings[:3]
    assert top["rank"] == 1
    assert middle["rank"] == 4
    assert middle["standings"] == standings[2:5]
    assert bottom["rank"] == 7
    assert bottom["standings"] == standings
    assert top["cohortId"] == middle["cohortId"] is not None
    assert (idle["rank"], idle["cohortId"], idle["standings"]) == (None, None, [])
    assert "k must" in refused["error"]
    assert league_neighbours(api_client, "nobody", status=404)["error"]


def test_an_application_key_reads_its_own_users_cohort_neighbours_only(org, tenant, metric):
    league_of(tenant, metric)
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    users(tenant, 2)
    league_neighbours(client, "u1")
    league_neighbours(client, "u0", status=403)


def test_redis_answers_without_the_sql_window(api_client, tenant, settings, monkeypatch):
    """With Redis holding the ranks, PostgreSQL is not asked for the window (ZRANK + ZRANGE);
    without it, it is."""
    from tests.conftest import RANKS_REDIS, redis_answers

    if not redis_answers():
        pytest.skip("needs Redis")
    settings.LEADERBOARD_RANKS_REDIS_URL = ""
    board = board_of(tenant)
    fill(board, users(tenant, 8), tied_places(8))
    expected = neighbours(api_client, "u3", k=2)  # counted by SQL
    settings.LEADERBOARD_RANKS_REDIS_URL = RANKS_REDIS
    ranks.reset()
    from apps.leaderboards import sql

    def refuse(*args: Any) -> None:
        raise AssertionError("the window was read from SQL")

    monkeypatch.setattr(sql, "neighbours", refuse)
    assert neighbours(api_client, "u3", k=2) == expected


def test_places_beyond_max_participants_are_not_shown(api_client, tenant, rank_store):
    """As the rankings page, which shows maxParticipants places at most (entries beyond it are
    kept only until the board is trimmed), and the user route, which gives them no rank."""
    board = board_of(tenant, max_participants=5)
    fill(board, users(tenant, 8), [(Decimal(10 - n), later(0)) for n in range(8)])
    assert [r["rank"] for r in page(api_client)] == [1, 2, 3, 4, 5]
    assert [r["rank"] for r in neighbours(api_client, "u3", k=3)["rankings"]] == [1, 2, 3, 4, 5]
    beyond = neighbours(api_client, "u6")
    assert (beyond["rank"], beyond["rankings"]) == (None, [])
    assert api_client.get("/v1/users/u6/leaderboards/top").json()["rank"] is None
