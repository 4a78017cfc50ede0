"""The admin API's side of the leaderboard guard rail (issue 27): a leaderboard that ranks users
is deleted only when the request confirms it by its key or id."""

from typing import Any

import pytest

from apps.accounts.models import Tenant
from apps.leaderboards.models import Leaderboard
from tests.admin_issues import admin_issue
from tests.factories import event_body
from tests.guard_rails import board_of, metric_of

pytestmark = pytest.mark.django_db
URL = "/admin/v1/leaderboards"


def test_a_leaderboard_that_ranks_users_is_deleted_only_when_confirmed(
    api_client: Any, tenant: Tenant
) -> None:
    words = metric_of(api_client, "words", "Words")
    board = board_of(api_client, words, "Weekly words", "weekly-words")
    assert api_client.post("/v1/metrics/words/event", event_body("u1", 4)).status_code == 201

    refused = api_client.delete(f"{URL}?ids={board.public_id}").json()

    assert refused == {
        "deleted": [],
        "issues": [
            admin_issue(
                "Deleting the leaderboard weekly-words takes data from users: the live "
                "leaderboard Weekly words is deleted, with the rankings of 1 user; confirm with "
                "its key weekly-words to delete it",
                id=str(board.public_id),
            )
        ],
    }
    body = api_client.delete(f"{URL}?ids={board.public_id}&confirm=weekly-words").json()
    assert body == {"deleted": [{"id": str(board.public_id)}], "issues": []}
    assert not Leaderboard.objects.exists()


def test_an_empty_leaderboard_is_deleted_as_before(api_client: Any, tenant: Tenant) -> None:
    board = board_of(api_client, metric_of(api_client, "words", "Words"), "Weekly", "weekly")

    body = api_client.delete(f"{URL}?ids={board.public_id}").json()

    assert body == {"deleted": [{"id": str(board.public_id)}], "issues": []}
