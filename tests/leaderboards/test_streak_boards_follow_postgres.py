"""Streak boards following staff's changes with real commits and real row locks (PostgreSQL):
Redis's rank sets are dropped when a change of frequency commits, not before (a set rebuilt
inside the change's transaction would hold the old lengths), and a restore racing the user's own
event leaves the board and the streak agreeing, whichever takes the user's lock first."""

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.db import transaction
from rest_framework.test import APIClient

from apps.leaderboards.models import LeaderboardEntry
from apps.streaks.services import streak_restore
from apps.users.models import EndUser
from tests.concurrency import POSTGRES_ONLY, run_all
from tests.factories import MetricFactory, OrganizationWithKey, bump

pytestmark = [
    *POSTGRES_ONLY,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("rank_store"),
]

UTC = dt.UTC


def at(day: str, hour: int = 12) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC)


def _client(org: OrganizationWithKey) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    return client


def write(org: OrganizationWithKey, user: str) -> int:
    body = {"user": {"id": user}, "value": 1}
    return _client(org).post("/v1/metrics/words/event", body, format="json").status_code


def table(org: OrganizationWithKey) -> list[tuple[str, int, int]]:
    response = _client(org).get("/v1/leaderboards/streaks", {"limit": 100})
    assert response.status_code == 200, response.content
    return [(r["userId"], r["rank"], r["value"]) for r in response.json()["rankings"]]


def rank_of(org: OrganizationWithKey, user: str) -> int:
    response = _client(org).get(f"/v1/users/{user}/leaderboards/streaks")
    assert response.status_code == 200, response.content
    return int(response.json()["rank"])


@pytest.fixture
def org() -> Any:
    """Daily streaks and a streak board; Ann writes from the 10th to the 12th, Bob on the 12th."""
    org = OrganizationWithKey("Streaky")
    MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    client = _client(org)
    settings = {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]}
    assert client.patch("/admin/v1/streaks/settings", settings, format="json").status_code == 200
    item = {"key": "streaks", "name": "Streaks", "rankBy": "streak", "status": "active"}
    with time_machine.travel(at("2026-03-10"), tick=False) as clock:
        assert client.post("/admin/v1/leaderboards", [item], format="json").status_code == 201
        for day, users in (("10", ["ann"]), ("11", ["ann"]), ("12", ["ann", "bob"])):
            clock.move_to(at(f"2026-03-{day}"))
            for user in users:
                assert write(org, user) == 201
        assert table(org) == [("ann", 1, 3), ("bob", 2, 1)]
        yield org


def test_a_committed_change_of_frequency_reaches_the_rank_sets(org: OrganizationWithKey) -> None:
    assert rank_of(org, "bob") == 2  # the rank set (with Redis) is built and ready
    response = _client(org).patch(
        "/admin/v1/streaks/settings", {"frequency": "weekly"}, format="json"
    )
    assert response.status_code == 200

    assert sorted(value for _, _, value in table(org)) == [0, 0]
    assert write(org, "bob") == 201  # the first weekly streak
    assert table(org)[0] == ("bob", 1, 1)
    assert rank_of(org, "bob") == 1
    assert rank_of(org, "ann") == 2


def test_a_restore_racing_the_users_event_leaves_board_and_streak_agreeing(
    org: OrganizationWithKey,
) -> None:
    ann = EndUser.objects.get(tenant=org.tenant, external_id="ann")
    # Ann missed the 13th and 14th (her streak of 3 is lost); on the 15th she writes while
    # support restores her streak.

    def restore() -> bool:
        with transaction.atomic():
            return streak_restore(org.tenant, ann)

    with time_machine.travel(at("2026-03-15"), tick=False):
        results = run_all([restore, lambda: write(org, "ann")])
        assert results == [True, 201], results

        streak = _client(org).get("/v1/users/ann/streak").json()["length"]
        # Restored first, then extended (4); or started again at 1, then restored to 3.
        assert streak in (3, 4)
        on_board = {user: value for user, _, value in table(org)}
        assert on_board["ann"] == streak
        assert LeaderboardEntry.objects.get(user=ann).value == streak
        assert rank_of(org, "ann") == 1
