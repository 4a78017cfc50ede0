"""GET /v1/users/{id}/points/{key} reads in three statements whatever the user's history: the
API key, the user with their total, the latest awards (issue 13's read path)."""

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

# `sql`: make unit runs these on PostgreSQL too, whose statements differ (apps/core/db.py).
pytestmark = [pytest.mark.django_db, pytest.mark.sql]


@pytest.fixture
def reader(api_client, metric) -> Any:
    system = api_client.post("/admin/v1/points", [{"name": "XP", "key": "xp"}]).json()
    system_id = system["created"][0]["id"]
    trigger = {
        "type": "metric",
        "points": 1,
        "metricId": str(metric.public_id),
        "metricThreshold": 1,
        "status": "active",
    }
    response = api_client.post(f"/admin/v1/points/{system_id}/triggers", [trigger])
    assert response.status_code == 201, response.content
    return api_client


def send(client: Any, user: str, value: int) -> None:
    response = client.post("/v1/metrics/words/event", {"user": {"id": user}, "value": value})
    assert response.status_code == 201, response.content


def read(client: Any, user: str, key: str = "xp") -> tuple[int, Any, int]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/v1/users/{user}/points/{key}")
    return response.status_code, response.json(), len(queries.captured_queries)


def test_the_read_costs_three_statements_however_long_the_history(reader):
    send(reader, "a", 3)
    status, body, first = read(reader, "a")
    assert (status, body["total"], len(body["awards"])) == (200, 3, 1)
    for _ in range(15):
        send(reader, "a", 2)
    status, body, later = read(reader, "a")
    assert (status, body["total"], len(body["awards"])) == (200, 33, 10)
    assert first == later == 3


def test_a_user_without_points_reads_zero(reader, api_client):
    assert api_client.put("/v1/users/nobody-yet", {}).status_code == 200
    status, body, _ = read(reader, "nobody-yet")
    assert (status, body["total"], body["level"], body["awards"]) == (200, 0, None, [])


def test_an_unknown_user_is_reported_before_an_unknown_system(reader):
    send(reader, "a", 1)
    assert read(reader, "ghost", "nope")[:2] == (404, {"error": 'User not found: "ghost"'})
    assert read(reader, "a", "nope")[:2] == (404, {"error": 'Points system not found: "nope"'})
    assert read(reader, "ghost")[:2] == (404, {"error": 'User not found: "ghost"'})


def test_another_tenants_user_of_the_same_id_is_not_found(reader, other_tenant_client):
    """The user is looked up within the key's tenant: the same id in another tenant, with a
    system of the same key there, is a user not found."""
    send(reader, "a", 3)
    created = other_tenant_client.post("/admin/v1/points", [{"name": "XP", "key": "xp"}])
    assert created.status_code == 201, created.content
    response = other_tenant_client.get("/v1/users/a/points/xp")
    assert (response.status_code, response.json()) == (404, {"error": 'User not found: "a"'})
    assert read(reader, "a")[0] == 200
