"""Newcomers racing for the last places of a board, on PostgreSQL, where row locks are real
(SQLite serializes every write transaction): the board never holds more than maxParticipants,
and ends with the best of everyone who took part, whether ranks are counted or in Redis."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.leaderboards.models import LeaderboardEntry
from tests.concurrency import POSTGRES_ONLY, run_all
from tests.factories import MetricFactory, OrganizationWithKey, bump

pytestmark = [
    *POSTGRES_ONLY,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("rank_store"),
]

PLACES = 5


def _client(org: OrganizationWithKey) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    return client


def _send(org: OrganizationWithKey, user: str, value: int) -> Any:
    def send() -> int:
        body = {"user": {"id": user}, "value": value}
        return _client(org).post("/v1/metrics/words/event", body, format="json").status_code

    return send


@pytest.fixture
def org() -> OrganizationWithKey:
    org = OrganizationWithKey("Race")
    metric = MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    item = {
        "name": "Top",
        "key": "top",
        "rankBy": "metric",
        "metricId": str(metric.public_id),
        "status": "active",
        "maxParticipants": PLACES,
    }
    response = _client(org).post("/admin/v1/leaderboards", [item], format="json")
    assert response.status_code == 201, response.content
    return org


def board(org: OrganizationWithKey) -> dict[str, int]:
    entries = LeaderboardEntry.objects.filter(leaderboard__tenant=org.tenant)
    return {e.user.external_id: int(e.value) for e in entries.select_related("user")}


def test_newcomers_racing_for_the_last_place_never_overfill_the_board(org):
    for n in range(PLACES - 1):
        assert _send(org, f"old{n}", 10 + n)() == 201
    newcomers = {f"new{n}": 100 + 7 * n for n in range(8)}
    statuses = run_all([_send(org, user, value) for user, value in newcomers.items()])
    assert statuses == [201] * len(newcomers)
    everyone = {**{f"old{n}": 10 + n for n in range(PLACES - 1)}, **newcomers}
    best = dict(sorted(everyone.items(), key=lambda kv: -kv[1])[:PLACES])
    assert board(org) == best
    rankings = _client(org).get("/v1/leaderboards/top").json()["rankings"]
    assert [r["userId"] for r in rankings] == list(best)


def test_the_lowest_moving_up_while_newcomers_displace_it(org):
    for n in range(PLACES):
        assert _send(org, f"old{n}", 10 + n)() == 201
    # The bottom participants climb while newcomers try to take their places.
    climbs = [_send(org, f"old{n}", 1000) for n in range(3)]
    newcomers = {f"new{n}": 500 + n for n in range(6)}
    jobs = [*climbs, *(_send(org, user, value) for user, value in newcomers.items())]
    assert run_all(jobs) == [201] * len(jobs)
    # Whatever the order: a climber displaced before their climb re-enters with the run's
    # gain (1,010 ..), and the value to beat only rises, so the board ends with the best five.
    assert board(org) == {"old2": 1012, "old1": 1011, "old0": 1010, "new5": 505, "new4": 504}


def test_newcomers_racing_onto_an_empty_board_never_overfill_it(org):
    """More newcomers at once than the board has places, none of them yet near the last
    place: each would see room to spare in its own snapshot."""
    newcomers = {f"new{n}": 100 + 7 * n for n in range(3 * PLACES)}
    statuses = run_all([_send(org, user, value) for user, value in newcomers.items()])
    assert statuses == [201] * len(newcomers)
    best = dict(sorted(newcomers.items(), key=lambda kv: -kv[1])[:PLACES])
    assert board(org) == best
