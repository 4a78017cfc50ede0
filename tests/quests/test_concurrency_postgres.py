"""Exactly once under concurrency, on PostgreSQL where row locks are real: one user's events
racing from many connections complete a quest once and pay its reward once; an event retried
with its idempotency key from many connections at once counts once."""

import datetime as dt
from collections import Counter

import pytest
import time_machine
from rest_framework.test import APIClient

from apps.points.models import PointsAward, PointsTotal
from apps.quests.models import QuestProgress
from tests.concurrency import POSTGRES_ONLY, run_all
from tests.factories import MetricFactory, OrganizationWithKey
from tests.quests.support import quest, system

pytestmark = [*POSTGRES_ONLY]

NOON = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)
THREADS = 16


def client(org: OrganizationWithKey) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_X_API_KEY=org.admin_key)
    return api


def send(api: APIClient, value: int, key: str | None = None) -> int:
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    body = {"user": {"id": "ann"}, "value": value}
    return int(api.post("/v1/metrics/words/event", body, format="json", **headers).status_code)


@pytest.mark.django_db(transaction=True)
def test_racing_events_complete_a_quest_once_and_pay_once() -> None:
    org = OrganizationWithKey("Race")
    metric = MetricFactory(tenant=org.tenant, key="words")
    gems = system(org.tenant, "gems")
    quest(
        org.tenant,
        "ten",
        [{"kind": "metric", "metric_id": str(metric.public_id), "target": 10}],
        reward_points=7,
        reward_points_system_id=str(gems.public_id),
    )
    with time_machine.travel(NOON, tick=True):
        assert send(client(org), 1) == 201  # the user exists before the race

        def racer() -> list[int]:
            api = client(org)
            return [send(api, 1) for _ in range(3)]

        results = run_all([racer for _ in range(THREADS)])

    assert [r for r in results if not isinstance(r, list)] == []
    assert Counter(code for r in results for code in r) == {201: THREADS * 3}
    [row] = QuestProgress.objects.all()
    assert row.goals[0]["value"] == 10  # 10 events counted, the others came after completion
    assert row.completed_at is not None
    [award] = PointsAward.objects.filter(system=gems)
    assert award.awarded == 7
    assert PointsTotal.objects.get(system=gems).total == 7


@pytest.mark.django_db(transaction=True)
def test_a_retried_event_counts_once_however_many_retries_race() -> None:
    org = OrganizationWithKey("Retry")
    metric = MetricFactory(tenant=org.tenant, key="words")
    quest(org.tenant, "five", [{"kind": "metric", "metric_id": str(metric.public_id), "target": 5}])
    with time_machine.travel(NOON, tick=True):
        assert send(client(org), 1) == 201
        results = run_all([lambda: send(client(org), 3, "same-key") for _ in range(THREADS)])
    assert sorted(set(results)) in ([201, 202], [201])
    assert Counter(results)[201] == 1
    [row] = QuestProgress.objects.all()
    assert row.goals[0]["value"] == 4
    assert row.completed_at is None
