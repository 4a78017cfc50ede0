"""An exclusion racing the user's own events, on PostgreSQL (real row locks): the user's lock
orders them, so every entry ends on the side of the exclusion it should, with every event's
value, on both rank stores."""

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


def _client(org: OrganizationWithKey) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    return client


def _send(org: OrganizationWithKey, user: str, value: int) -> Any:
    def send() -> int:
        body = {"user": {"id": user}, "value": value}
        return _client(org).post("/v1/metrics/words/event", body, format="json").status_code

    return send


def _exclusion(org: OrganizationWithKey, user: str, *, lift: bool = False) -> Any:
    def change() -> int:
        path = f"/admin/ext/v1/users/{user}/exclusion"
        client = _client(org)
        if lift:
            return client.delete(path).status_code
        return client.post(path, {"reason": "race"}, format="json").status_code

    return change


def test_events_racing_the_exclusion_and_its_lifting_all_count_and_land_right() -> None:
    org = OrganizationWithKey("Race")
    metric = MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    item = {"name": "T", "key": "t", "rankBy": "metric", "metricId": str(metric.public_id)}
    response = _client(org).post(
        "/admin/v1/leaderboards", [{**item, "status": "active"}], format="json"
    )
    assert response.status_code == 201, response.content
    for user, value in (("x", 10), ("y", 15), ("z", 12)):
        assert _send(org, user, value)() == 201

    def rankings() -> list[tuple[str, int]]:
        body = _client(org).get("/v1/leaderboards/t?limit=100").json()
        return [(r["userId"], int(r["value"])) for r in body["rankings"]]

    statuses = run_all([_exclusion(org, "x"), *[_send(org, "x", 1) for _ in range(8)]])
    assert statuses == [200] + [201] * 8
    entries = LeaderboardEntry.objects.filter(user__external_id="x")
    assert [(e.group, int(e.value)) for e in entries.all()] == [("~excluded|", 18)]
    assert rankings() == [("y", 15), ("z", 12)]
    statuses = run_all([_exclusion(org, "x", lift=True), *[_send(org, "x", 1) for _ in range(8)]])
    assert statuses == [200] + [201] * 8
    assert [(e.group, int(e.value)) for e in entries.all()] == [("", 26)]
    assert rankings() == [("x", 26), ("y", 15), ("z", 12)]
