"""Friends lists (/ext/v1/users/{id}/friends, /admin/ext/v1/users/{id}/friends), the tenant's
setting (/admin/ext/v1/friends/settings: one-way by default, or mutual), their bounds, and a
leaderboard restricted to a user and their friends
(/ext/v1/users/{id}/leaderboards/{key}/friends) with exact ranks within that set."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.social import domain
from apps.social.models import Friendship
from apps.users.models import Attribute
from tests.conftest import Client
from tests.factories import bump
from tests.social.support import RUN, board_of, fill, later, tied_places, users

pytestmark = pytest.mark.django_db


def friends(client: Any, user: str, status: int = 200, prefix: str = "/ext/v1") -> Any:
    response = client.get(f"{prefix}/users/{user}/friends")
    assert response.status_code == status, response.content
    return response.json()


def add(client: Any, user: str, ids: Any, status: int = 200, prefix: str = "/ext/v1") -> Any:
    response = client.post(f"{prefix}/users/{user}/friends", {"userIds": ids})
    assert response.status_code == status, response.content
    return response.json()


def remove(client: Any, user: str, ids: str, status: int = 200, prefix: str = "/ext/v1") -> Any:
    response = client.delete(f"{prefix}/users/{user}/friends?userIds={ids}")
    assert response.status_code == status, response.content
    return response.json()


def mutual(client: Any, on: bool) -> None:
    response = client.patch("/admin/ext/v1/friends/settings", {"mutual": on})
    assert response.status_code == 200, response.content
    assert response.json() == {"mutual": on, "maxFriends": 1000}


def pairs() -> set[tuple[str, str]]:
    return set(Friendship.objects.values_list("user__external_id", "friend__external_id"))


@pytest.mark.parametrize("prefix", ["/ext/v1", "/admin/ext/v1"])
def test_one_way_lists_are_added_to_read_and_removed_from_idempotently(api_client, tenant, prefix):
    users(tenant, 5)
    assert friends(api_client, "u0", prefix=prefix) == {"userId": "u0", "friends": []}
    body = add(api_client, "u0", ["u3", "u1", "u3"], prefix=prefix)
    assert body == {"userId": "u0", "friends": ["u1", "u3"], "changed": ["u3", "u1"]}
    again = add(api_client, "u0", ["u1", "u2"], prefix=prefix)
    assert again["changed"] == ["u2"]
    assert again["friends"] == ["u1", "u2", "u3"]
    assert add(api_client, "u0", ["u1"], prefix=prefix)["changed"] == []
    # One-way (the default): u1 did not befriend u0.
    assert friends(api_client, "u1", prefix=prefix)["friends"] == []
    assert pairs() == {("u0", "u1"), ("u0", "u2"), ("u0", "u3")}
    gone = remove(api_client, "u0", "u1,u4,nobody", prefix=prefix)
    assert gone == {"userId": "u0", "friends": ["u2", "u3"], "changed": ["u1"]}
    assert remove(api_client, "u0", "u1", prefix=prefix)["changed"] == []


def test_mutual_friendships_are_written_and_removed_both_ways(api_client, tenant):
    assert api_client.get("/admin/ext/v1/friends/settings").json() == {
        "mutual": False,
        "maxFriends": 1000,
    }
    users(tenant, 4)
    add(api_client, "u0", ["u1"])  # one-way, before the switch
    mutual(api_client, True)
    add(api_client, "u0", ["u2", "u3"])
    assert friends(api_client, "u2")["friends"] == ["u0"]
    assert pairs() == {("u0", "u1"), ("u0", "u2"), ("u2", "u0"), ("u0", "u3"), ("u3", "u0")}
    # Either end's removal takes both directions off.
    assert remove(api_client, "u3", "u0")["changed"] == ["u0"]
    assert friends(api_client, "u0")["friends"] == ["u1", "u2"]
    # Switching back to one-way leaves the lists as they are, and writes one way again.
    mutual(api_client, False)
    assert friends(api_client, "u2")["friends"] == ["u0"]
    remove(api_client, "u0", "u2")
    assert friends(api_client, "u2")["friends"] == ["u0"]


def test_a_list_holds_at_most_max_friends(api_client, tenant, monkeypatch):
    monkeypatch.setattr(domain, "MAX_FRIENDS", 3)
    users(tenant, 6)
    add(api_client, "u0", ["u1", "u2"])
    refused = add(api_client, "u0", ["u3", "u4"], status=422)
    assert "at most 3" in refused["error"]
    assert "userIds" in refused["error"]
    assert friends(api_client, "u0")["friends"] == ["u1", "u2"]  # nothing written
    assert add(api_client, "u0", ["u3", "u1"])["changed"] == ["u3"]  # a known one costs nothing
    # Mutual: the friend's list is bounded too.
    mutual(api_client, True)
    add(api_client, "u5", ["u1", "u2"])
    refused = add(api_client, "u4", ["u0"], status=422)
    assert "u0" in refused["error"]


def test_a_request_adds_at_most_1000_ids(api_client, tenant):
    users(tenant, 1)
    body = add(api_client, "u0", [f"x{n}" for n in range(1001)], status=422)
    assert "userIds" in body["error"]


def test_unknown_users_are_refused_and_nothing_is_written(api_client, tenant):
    users(tenant, 3)
    refused = add(api_client, "u0", ["u1", "ghost", "phantom"], status=422)
    assert "unknown users" in refused["error"]
    assert "ghost, phantom" in refused["error"]
    assert pairs() == set()
    assert "User not found" in add(api_client, "ghost", ["u1"], status=404)["error"]
    assert "User not found" in friends(api_client, "ghost", status=404)["error"]
    assert "User not found" in remove(api_client, "ghost", "u1", status=404)["error"]


def test_a_user_cannot_befriend_themself(api_client, tenant):
    users(tenant, 2)
    assert "own friend" in add(api_client, "u0", ["u1", "u0"], status=422)["error"]
    assert pairs() == set()


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"userIds": []},
        {"userIds": "u1"},
        {"userIds": [1, 2]},
        {"userIds": [None]},
        {"userIds": [{"id": "u1"}]},
        {"userIds": ["u1"], "extra": True},
        {"userIds": ["a" * 256]},
        {"userIds": ["bad\nid"]},
        [],
        "u1",
    ],
)
@pytest.mark.parametrize("method", ["post", "put"])
def test_bad_bodies_are_refused_never_500(api_client, tenant, body, method):
    users(tenant, 2)
    if method == "put" and body == {"userIds": []}:
        return  # an empty list empties the list
    response = getattr(api_client, method)("/ext/v1/users/u0/friends", body)
    assert response.status_code in (400, 422), response.content
    assert set(response.json()) == {"error"}


def test_malformed_json_and_bad_queries_are_refused(api_client, tenant):
    users(tenant, 2)
    response = api_client.post(
        "/ext/v1/users/u0/friends", "{nope", content_type="application/json", format=None
    )
    assert response.status_code == 400
    assert api_client.delete("/ext/v1/users/u0/friends").status_code == 422
    many = ",".join(f"x{n}" for n in range(101))
    assert api_client.delete(f"/ext/v1/users/u0/friends?userIds={many}").status_code == 422
    assert api_client.patch("/admin/ext/v1/friends/settings", {"mutual": "sure"}).status_code == 422
    assert api_client.patch("/admin/ext/v1/friends/settings", {"other": 1}).status_code == 422


def test_tenants_keep_their_own_users_lists_and_settings(
    api_client, other_tenant_client, tenant, other_tenant
):
    users(tenant, 3)
    users(other_tenant, 3)
    add(api_client, "u0", ["u1"])
    assert friends(other_tenant_client, "u0")["friends"] == []
    mutual(other_tenant_client, True)
    assert api_client.get("/admin/ext/v1/friends/settings").json()["mutual"] is False
    add(other_tenant_client, "u0", ["u2"])
    assert friends(api_client, "u2")["friends"] == []
    assert friends(other_tenant_client, "u2")["friends"] == ["u0"]
    # Another tenant's user is unknown here.
    users(other_tenant, 1, prefix="only-there")
    add(api_client, "u0", ["only-there0"], status=422)


def test_an_application_key_manages_its_own_users_list_only(org, tenant, api_client):
    users(tenant, 3)
    board_of(tenant)
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    assert add(client, "u1", ["u2"])["friends"] == ["u2"]
    assert friends(client, "u1")["friends"] == ["u2"]
    assert "own user" in friends(client, "u0", status=403)["error"]
    assert "own user" in add(client, "u0", ["u2"], status=403)["error"]
    assert "own user" in remove(client, "u0", "u2", status=403)["error"]
    response = client.get("/ext/v1/users/u0/leaderboards/top/friends")
    assert response.status_code == 403
    # The admin routes take admin keys only.
    assert client.get("/admin/ext/v1/users/u1/friends").status_code == 403
    assert client.get("/admin/ext/v1/friends/settings").status_code == 403
    assert pairs() == {("u1", "u2")}


# --- a leaderboard among friends --------------------------------------------------------------


def circle(client: Any, user: str, key: str = "top", status: int = 200, **params: Any) -> Any:
    response = client.get(f"/ext/v1/users/{user}/leaderboards/{key}/friends", params)
    assert response.status_code == status, response.content
    return response.json()


def test_the_friends_board_ranks_the_user_and_their_friends_among_themselves(api_client, tenant):
    board = board_of(tenant)
    who = users(tenant, 30)
    fill(board, who, tied_places(30))
    users(tenant, 1, prefix="off")  # a friend with no entry
    add(api_client, "u7", ["u3", "u11", "u20", "u29", "off0"])
    rankings = api_client.get("/v1/leaderboards/top?limit=1000").json()["rankings"]
    mine = {"u7", "u3", "u11", "u20", "u29"}
    expected = [r for r in rankings if r["userId"] in mine]  # the board's order, ties included
    body = circle(api_client, "u7")
    assert [r["userId"] for r in body["rankings"]] == [r["userId"] for r in expected]
    assert [r["rank"] for r in body["rankings"]] == [1, 2, 3, 4, 5]
    assert [(r["value"], r["userName"]) for r in body["rankings"]] == [
        (r["value"], r["userName"]) for r in expected
    ]
    own = next(r for r in body["rankings"] if r["userId"] == "u7")
    assert (body["rank"], body["value"]) == (own["rank"], own["value"])
    # One-way: u3's board holds u3 alone.
    assert [r["userId"] for r in circle(api_client, "u3")["rankings"]] == ["u3"]


def test_ties_among_friends_are_ordered_as_the_board_orders_them(api_client, tenant):
    board = board_of(tenant)
    who = users(tenant, 5)
    fill(board, who, [(Decimal(10), later(s)) for s in (3, 1, 1, 0, 1)])
    add(api_client, "u0", ["u1", "u2", "u4"])
    body = circle(api_client, "u0")
    assert [(r["userId"], r["rank"]) for r in body["rankings"]] == [
        ("u1", 1),
        ("u2", 2),
        ("u4", 3),
        ("u0", 4),
    ]
    assert body["rank"] == 4


def test_a_user_off_the_board_still_sees_their_friends(api_client, tenant):
    board = board_of(tenant)
    fill(board, users(tenant, 3), [(Decimal(n), later(0)) for n in range(3)])
    users(tenant, 1, prefix="new")
    add(api_client, "new0", ["u0", "u2"])
    body = circle(api_client, "new0")
    assert (body["rank"], body["value"]) == (None, None)
    assert [(r["userId"], r["rank"]) for r in body["rankings"]] == [("u2", 1), ("u0", 2)]
    assert circle(api_client, "u0")["rankings"][0]["rank"] == 1
    circle(api_client, "ghost", status=404)
    circle(api_client, "u0", key="nope", status=404)


def test_friends_boards_follow_runs_and_breakdown_groups(api_client, tenant):
    region = Attribute.objects.create(tenant=tenant, key="region", name="Region", type="user")
    board = board_of(
        tenant, breakdown_attributes=[str(region.public_id)], run_unit="day", run_interval=1
    )
    bump(tenant)
    who = users(tenant, 4)
    for user, place in zip(who, ["eu", "eu", "us", "eu"], strict=True):
        user.attributes = {"region": place}
        user.save()
    eu = [who[0], who[1], who[3]]
    fill(board, eu, [(Decimal(n), later(0)) for n in range(3)], group="region=eu")
    fill(board, [who[2]], [(Decimal(99), later(0))], group="region=us")
    fill(
        board,
        eu,
        [(Decimal(-n), later(0)) for n in range(3)],
        group="region=eu",
        run=RUN + dt.timedelta(days=1),
    )
    add(api_client, "u0", ["u1", "u2", "u3"])
    first = circle(api_client, "u0", run="2026-03-01")
    # u2 is in another group: not on this ranking.
    assert [r["userId"] for r in first["rankings"]] == ["u3", "u1", "u0"]
    second = circle(api_client, "u0", run="2026-03-02")
    assert [r["userId"] for r in second["rankings"]] == ["u0", "u1", "u3"]
    assert circle(api_client, "u0", run="soon", status=422)["error"]


def test_the_friends_board_is_one_statement_whatever_the_board_and_list(api_client, tenant):
    board = board_of(tenant)
    who = users(tenant, 50)
    fill(board, who, tied_places(50))
    add(api_client, "u0", ["u1", "u2"])
    circle(api_client, "u0")  # warms the configuration cache

    def statements() -> int:
        with CaptureQueriesContext(connection) as queries:
            circle(api_client, "u0")
        return len(queries)

    few = statements()
    assert few == 3  # the key, the user, the ranking
    more = users(tenant, 300, prefix="more")
    fill(board, more, tied_places(300, seed=9))
    add(api_client, "u0", [u.external_id for u in more])
    assert statements() == few
    assert len(circle(api_client, "u0")["rankings"]) == 303


def test_deleting_a_user_deletes_their_friendships(api_client, tenant):
    who = users(tenant, 3)
    mutual(api_client, True)
    add(api_client, "u0", ["u1", "u2"])
    who[1].delete()
    assert pairs() == {("u0", "u2"), ("u2", "u0")}
    assert friends(api_client, "u0")["friends"] == ["u2"]


# --- a league's week among friends ------------------------------------------------------------


def test_a_leagues_week_among_friends_ranks_them_across_cohorts(api_client, org, tenant, metric):
    import time_machine

    from tests.leagues.test_weeks_and_cohorts import MONDAY, league_of, send

    league_of(tenant, metric)  # cohorts of 5: the eight users fill two
    with time_machine.travel(MONDAY, tick=False):
        for i, value in enumerate([50, 40, 30, 30, 20, 10, 5, 45]):
            send(api_client, metric, f"u{i}", value)
        users(tenant, 1, prefix="idle")
        add(api_client, "u6", ["u0", "u3", "u2", "u7", "idle0"])
        body = api_client.get("/ext/v1/users/u6/leagues/weekly/friends").json()
        alone = api_client.get("/ext/v1/users/u0/leagues/weekly/friends").json()
        idle = api_client.get("/ext/v1/users/idle0/leagues/weekly/friends").json()
        with CaptureQueriesContext(connection) as queries:
            api_client.get("/ext/v1/users/u6/leagues/weekly/friends")
    assert len(queries) == 3  # the key, the user, the entries of the user and their friends
    # u2 and u3 tie on 30 at the same moment: the user who joined gamify first (u2) is ahead.
    assert [(s["userId"], s["rank"], s["score"]) for s in body["standings"]] == [
        ("u0", 1, 50),
        ("u7", 2, 45),
        ("u2", 3, 30),
        ("u3", 4, 30),
        ("u6", 5, 5),
    ]
    assert body["rank"] == 5
    assert body["standings"][1]["tier"] == {"index": 0, "name": "Bronze"}
    assert [s["userId"] for s in alone["standings"]] == ["u0"]  # one-way lists
    assert (idle["rank"], idle["standings"]) == (None, [])
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    assert client.get("/ext/v1/users/u6/leagues/weekly/friends").status_code == 403
    assert client.get("/ext/v1/users/u1/leagues/nope/friends").status_code == 404


@pytest.mark.parametrize("prefix", ["/ext/v1", "/admin/ext/v1"])
def test_a_list_is_replaced_whole_and_idempotently(api_client, tenant, prefix):
    users(tenant, 6)
    mutual(api_client, True)
    add(api_client, "u0", ["u1", "u2"])

    def replace(ids: list[str], status: int = 200) -> Any:
        response = api_client.put(f"{prefix}/users/u0/friends", {"userIds": ids})
        assert response.status_code == status, response.content
        return response.json()

    body = replace(["u3", "u2", "u4"])
    assert body == {
        "userId": "u0",
        "friends": ["u2", "u3", "u4"],
        "added": ["u3", "u4"],
        "removed": ["u1"],
    }
    assert friends(api_client, "u1")["friends"] == []  # mutual: both directions went
    assert friends(api_client, "u4")["friends"] == ["u0"]
    assert replace(["u3", "u2", "u4"])["added"] == replace(["u2", "u3", "u4"])["removed"] == []
    assert "unknown users" in replace(["u5", "ghost"], status=422)["error"]
    assert friends(api_client, "u0")["friends"] == ["u2", "u3", "u4"]  # nothing written
    assert replace([])["removed"] == ["u2", "u3", "u4"]
    assert pairs() == set()


def test_a_replacement_counts_the_bound_after_its_removals(api_client, tenant, monkeypatch):
    monkeypatch.setattr(domain, "MAX_FRIENDS", 2)
    users(tenant, 5)
    add(api_client, "u0", ["u1", "u2"])
    response = api_client.put("/ext/v1/users/u0/friends", {"userIds": ["u3", "u4"]})
    assert response.status_code == 200, response.content
    assert response.json()["friends"] == ["u3", "u4"]
    response = api_client.put("/ext/v1/users/u0/friends", {"userIds": ["u1", "u2", "u3"]})
    assert response.status_code == 422
    assert friends(api_client, "u0")["friends"] == ["u3", "u4"]
