"""The admin API's side of the points-system guard rails (issue 27): archiving (the system's
DELETE) a system users have points in needs `confirm`; a live leaderboard or a league that ranks
by it refuses it, unless `deactivateDependants=true` deactivates the board (and archives the
league) in the same step, so that `GET /v1/leaderboards` no longer lists a board of an archived
system."""

from typing import Any

import pytest

from apps.accounts.models import Tenant
from apps.leaderboards.models import Leaderboard
from apps.leagues.models import League
from apps.points.models import PointsSystem
from tests.admin_issues import admin_issue
from tests.factories import event_body
from tests.guard_rails import board_of, metric_of, points_league_of, system_of

pytestmark = pytest.mark.django_db
URL = "/admin/v1/points"


@pytest.fixture
def coins(api_client: Any, tenant: Tenant) -> PointsSystem:
    return system_of(api_client, metric_of(api_client, "words", "Words"), "coins", "Coins")


def test_archiving_a_system_users_have_points_in_is_confirmed_with_its_key(
    api_client: Any, coins: PointsSystem
) -> None:
    assert api_client.post("/v1/metrics/words/event", event_body("u1")).status_code == 201

    refused = api_client.delete(f"{URL}?ids={coins.public_id}").json()

    assert refused == {
        "deleted": [],
        "issues": [
            admin_issue(
                "Archiving the points system coins takes data from users: the Coins points of 1 "
                "user leave the APIs for good (the ledger is kept); confirm with its key coins to "
                "archive it",
                id=str(coins.public_id),
            )
        ],
    }
    body = api_client.delete(f"{URL}?ids={coins.public_id}&confirm=coins").json()
    assert body == {"deleted": [{"id": str(coins.public_id)}], "issues": []}
    assert PointsSystem.objects.get().status == "archived"


def test_a_system_a_live_leaderboard_ranks_by_is_not_archived(
    api_client: Any, coins: PointsSystem
) -> None:
    board_of(api_client, None, "Weekly coins", "weekly-coins", system=coins)

    body = api_client.delete(f"{URL}?ids={coins.public_id}").json()

    assert body["issues"] == [
        admin_issue(
            "The points system coins cannot be archived: the active leaderboard Weekly coins "
            "ranks by it; asked to deactivate its dependants in the same step, the leaderboard "
            "Weekly coins is deactivated (its rankings are kept)",
            id=str(coins.public_id),
        )
    ]
    assert PointsSystem.objects.get().status == "active"
    assert [b["key"] for b in api_client.get("/v1/leaderboards").json()] == ["weekly-coins"]


def test_asked_to_the_live_leaderboard_is_deactivated_with_the_archive(
    api_client: Any, coins: PointsSystem
) -> None:
    board = board_of(api_client, None, "Weekly coins", "weekly-coins", system=coins)

    body = api_client.delete(f"{URL}?ids={coins.public_id}&deactivateDependants=true").json()

    assert body == {"deleted": [{"id": str(coins.public_id)}], "issues": []}
    assert PointsSystem.objects.get().status == "archived"
    assert Leaderboard.objects.get(pk=board.pk).status == "inactive"
    assert api_client.get("/v1/leaderboards").json() == []


def test_a_league_that_scores_by_the_system_is_refused_or_archived_with_it(
    api_client: Any, tenant: Tenant, coins: PointsSystem
) -> None:
    league = points_league_of(tenant, coins)

    refused = api_client.delete(f"{URL}?ids={coins.public_id}").json()

    [issue] = refused["issues"]
    assert issue["message"].startswith(
        "The points system coins cannot be archived: the active league Coin league scores by it"
    )
    assert PointsSystem.objects.get().status == "active"

    body = api_client.delete(f"{URL}?ids={coins.public_id}&deactivateDependants=true").json()

    assert body["deleted"] == [{"id": str(coins.public_id)}]
    assert League.objects.get(pk=league.pk).status == "archived"


def test_deactivate_dependants_must_be_a_boolean(api_client: Any, coins: PointsSystem) -> None:
    response = api_client.delete(f"{URL}?ids={coins.public_id}&deactivateDependants=maybe")

    assert response.status_code == 422
    assert response.json() == {"error": "deactivateDependants must be true or false"}
