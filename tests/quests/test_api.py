"""The quests application routes (/ext/v1/users/{user_id}/quests and .../history): current
quests with progress per goal, period end, reward and completion; history; application keys,
tenants, bad input, and the documents (every response is checked against them by the suite's
fixture, tests/openapi_check.py)."""

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from tests.conftest import Client
from tests.quests.support import quest, system

pytestmark = pytest.mark.django_db

NOON = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)


def send(client: Any, user: str, value: Any = 1, **fields: Any) -> None:
    body = {"user": {"id": user, **fields}, "value": value}
    assert client.post("/v1/metrics/words/event", body).status_code == 201


@pytest.fixture
def quests(tenant: Tenant, metric: Metric) -> None:
    gems = system(tenant, "gems")
    quest(
        tenant,
        "words",
        [{"kind": "metric", "metric_id": str(metric.public_id), "target": Decimal(5)}],
        description="Five words a day",
        reward_points=10,
        reward_points_system_id=str(gems.public_id),
    )
    quest(tenant, "days", [{"kind": "active_days", "target": 3}], cadence="weekly")


@pytest.mark.usefixtures("quests")
def test_a_users_current_quests_with_progress_and_reward(api_client: Any):
    with time_machine.travel(NOON, tick=False):
        send(api_client, "ann", 2, tz="Asia/Tokyo")  # 21:00 on Tuesday 24 November in Tokyo
        body = api_client.get("/ext/v1/users/ann/quests").json()
    words, days = body
    assert words["key"] == "words"
    assert words["description"] == "Five words a day"
    assert words["poolKey"] is None
    assert words["periodStart"] == "2026-11-23T15:00:00Z"
    assert words["periodEnd"] == "2026-11-24T15:00:00Z"
    assert words["timeLeft"] == 3 * 3600
    assert words["goals"] == [
        {"kind": "metric", "target": 5.0, "progress": 2.0, "met": False, "metricKey": "words"}
    ]
    assert words["reward"] == {"points": 10, "pointsSystemKey": "gems", "achievementId": None}
    assert (words["completed"], words["completedAt"]) == (False, None)
    assert days["cadence"] == "weekly"
    assert days["periodStart"] == "2026-11-21T15:00:00Z"  # Sunday 22 November in Tokyo
    assert days["goals"][0]["progress"] == 1.0
    with time_machine.travel(NOON + dt.timedelta(minutes=5), tick=False):
        send(api_client, "ann", 3)
        [words, _] = api_client.get("/ext/v1/users/ann/quests").json()
    assert words["completed"] is True
    assert words["completedAt"] == "2026-11-24T12:05:00Z"
    assert words["goals"][0]["met"] is True


@pytest.mark.usefixtures("quests")
def test_a_users_history_holds_ended_periods_newest_first(api_client: Any):
    for day in range(3):
        with time_machine.travel(NOON + dt.timedelta(days=day), tick=False):
            send(api_client, "ann", 5 if day == 1 else 1)
    with time_machine.travel(NOON + dt.timedelta(days=2), tick=False):
        body = api_client.get("/ext/v1/users/ann/quests/history").json()
        limited = api_client.get("/ext/v1/users/ann/quests/history?limit=1").json()
    assert [(h["key"], h["periodStart"], h["completed"]) for h in body] == [
        ("words", "2026-11-25", True),
        ("words", "2026-11-24", False),
    ]
    assert body[0]["rewardPoints"] == 10
    assert body[1]["goals"][0]["progress"] == 1.0
    assert limited == body[:1]


@pytest.mark.usefixtures("quests")
@pytest.mark.parametrize("limit", ["0", "101", "x"])
def test_a_bad_limit_is_refused(api_client: Any, limit: str):
    send(api_client, "ann")
    response = api_client.get(f"/ext/v1/users/ann/quests/history?limit={limit}")
    assert response.status_code in (400, 422)
    assert "limit" in response.json()["error"]


@pytest.mark.usefixtures("quests")
def test_an_application_key_reads_its_own_user_only(org: Any, api_client: Any):
    send(api_client, "ann")
    send(api_client, "bob")
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.application_key("ann"))
    assert client.get("/ext/v1/users/ann/quests").status_code == 200
    for path in ("/ext/v1/users/bob/quests", "/ext/v1/users/bob/quests/history"):
        assert client.get(path).status_code == 403


@pytest.mark.usefixtures("quests")
def test_another_tenants_users_and_quests_are_not_seen(api_client: Any, other_tenant_client: Any):
    send(api_client, "ann")
    assert other_tenant_client.get("/ext/v1/users/ann/quests").status_code == 404
    assert api_client.get("/ext/v1/users/nobody/quests").status_code == 404


def test_the_routes_are_in_the_extension_document_only(anon_client: Any):
    extension = json.loads(anon_client.get("/ext/v1/openapi").content)
    assert {"/users/{user_id}/quests", "/users/{user_id}/quests/history"} <= set(extension["paths"])
    admin = json.loads(anon_client.get("/admin/ext/v1/openapi").content)
    assert {"/quests", "/quests/{object_id}", "/quest-pools", "/quest-pools/{object_id}"} <= set(
        admin["paths"]
    )
    for path in ("/v1/openapi", "/admin/v1/openapi"):
        document = json.loads(anon_client.get(path).content)
        assert not [p for p in document["paths"] if "quest" in p]
        assert not [n for n in document["components"]["schemas"] if "Quest" in n]
