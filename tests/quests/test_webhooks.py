"""Quest webhooks end to end, to a local receiver: quests.renewed with a user's first progress
in a period, quest.progressed (throttled per user, quest and period like Trophy's rank
webhooks), quest.completed once."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from apps.webhooks.models import WebhookEvent
from tests.quests.support import quest, system
from tests.webhooks.test_webhooks import committed, endpoint, run

pytestmark = pytest.mark.django_db

NOON = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)
MINUTE = dt.timedelta(minutes=1)


def send(api_client: Any, when: dt.datetime, user: str, value: int) -> None:
    with time_machine.travel(when, tick=False), committed():
        body = {"user": {"id": user, "tz": "Europe/Paris"}, "value": value}
        response = api_client.post("/v1/metrics/words/event", body)
    assert response.status_code == 201, response.content


@pytest.fixture
def words(tenant: Tenant, metric: Metric) -> None:
    gems = system(tenant, "gems")
    quest(
        tenant,
        "words",
        [{"kind": "metric", "metric_id": str(metric.public_id), "target": Decimal(10)}],
        reward_points=5,
        reward_points_system_id=str(gems.public_id),
    )


@pytest.mark.usefixtures("words")
def test_renewed_progressed_and_completed(api_client: Any, receiver: Any) -> None:
    endpoint(
        api_client,
        receiver.url,
        events=["quests.renewed", "quest.progressed", "quest.completed"],
    )
    send(api_client, NOON, "ada", 2)  # renewed, progressed (told at once)
    send(api_client, NOON + MINUTE, "ada", 3)  # progressed again: held for the window
    send(api_client, NOON + 2 * MINUTE, "ada", 6)  # completed
    send(api_client, NOON + 3 * MINUTE, "ada", 6)  # after completion: nothing
    bodies = [r.json for r in receiver.wait_for(3)]
    assert [b["type"] for b in bodies] == ["quests.renewed", "quest.progressed", "quest.completed"]
    renewed, progressed, completed = bodies
    assert renewed["cadence"] == "daily"
    assert renewed["period"] == {
        "start": "2026-11-23T23:00:00Z",
        "end": "2026-11-24T23:00:00Z",
        "firstDay": "2026-11-24",
        "lastDay": "2026-11-24",
    }
    assert [q["key"] for q in renewed["quests"]] == ["words"]
    assert renewed["quests"][0]["reward"] == {
        "points": 5,
        "pointsSystemKey": "gems",
        "achievementId": None,
    }
    assert progressed["quest"]["key"] == "words"
    assert progressed["goals"][0]["progress"] == 2.0
    assert "completedAt" not in progressed
    assert completed["goals"][0] == {
        "kind": "metric",
        "target": 10.0,
        "progress": 11.0,
        "met": True,
        "metricKey": "words",
    }
    assert completed["completedAt"] == "2026-11-24T12:02:00Z"
    assert completed["rewardPoints"] == 5
    # The held progress goes at the window's end with the latest state before completion.
    run(NOON + dt.timedelta(minutes=16))
    later = [r.json for r in receiver.wait_for(4)[3:]]
    assert [(b["type"], b["goals"][0]["progress"]) for b in later] == [("quest.progressed", 5.0)]
    assert WebhookEvent.objects.filter(type="quest.completed").count() == 1
    assert WebhookEvent.objects.filter(type="quests.renewed").count() == 1


@pytest.mark.usefixtures("words")
def test_an_endpoint_that_did_not_ask_for_quest_events_hears_none(
    api_client: Any, receiver: Any
) -> None:
    endpoint(api_client, receiver.url, events=["leaderboard.rank_changed"])
    send(api_client, NOON, "ada", 20)
    assert not WebhookEvent.objects.exists()
