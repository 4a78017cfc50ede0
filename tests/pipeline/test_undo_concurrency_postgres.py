"""Undoing a user's events while the same user sends new ones and another undo of the same
events runs, on PostgreSQL where row locks are real: every total, rollup, points balance and
board value comes out exact, and each event is undone once."""

from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.leaderboards.models import LeaderboardEntry
from apps.metrics.models import MetricDailyChange, MetricEvent, MetricTotal, UndoneEvent
from apps.points.models import PointsAward, PointsTotal
from tests.concurrency import POSTGRES_ONLY, run_all
from tests.factories import MetricFactory, OrganizationWithKey, bump

pytestmark = [*POSTGRES_ONLY, pytest.mark.usefixtures("rank_store")]


def client_of(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key)
    return client


@pytest.mark.django_db(transaction=True)
def test_undo_and_new_events_of_one_user_race_exactly() -> None:
    org = OrganizationWithKey("Race")
    metric = MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    admin = client_of(org.admin_key)
    system = admin.post("/admin/v1/points", [{"name": "XP", "key": "xp"}], format="json")
    system_id = system.json()["created"][0]["id"]
    trigger = {
        "type": "metric",
        "points": 1,
        "metricId": str(metric.public_id),
        "metricThreshold": 1,
        "status": "active",
    }
    assert (
        admin.post(f"/admin/v1/points/{system_id}/triggers", [trigger], format="json").status_code
        == 201
    )
    board = {
        "name": "W",
        "key": "w",
        "rankBy": "metric",
        "metricId": str(metric.public_id),
        "status": "active",
    }
    assert admin.post("/admin/v1/leaderboards", [board], format="json").status_code == 201

    def send(value: int) -> Any:
        response = client_of(org.admin_key).post(
            "/v1/metrics/words/event", {"user": {"id": "racer"}, "value": value}, format="json"
        )
        return response.status_code, response.json().get("eventId")

    undone = [send(1)[1] for _ in range(6)]  # 6 words, 6 XP, to be undone

    def undo() -> Any:
        response = client_of(org.admin_key).post(
            "/admin/ext/v1/events/undo", {"eventIds": undone, "reason": "race"}, format="json"
        )
        return response.status_code, len(response.json()["undone"])

    results = run_all([undo, undo, *[lambda: send(10)] * 4])

    assert sorted(results[:2], key=lambda r: r[1]) == [(200, 0), (200, 6)]
    assert all(status == 201 for status, _ in results[2:])
    assert UndoneEvent.objects.count() == 6
    assert MetricTotal.objects.get().total == Decimal(40)
    assert sum(MetricDailyChange.objects.values_list("change", flat=True)) == Decimal(40)
    assert sum(MetricDailyChange.objects.values_list("events", flat=True)) == 4
    # Each new event paid its own multiples, above whatever mark the undo left: exactly 40.
    assert PointsTotal.objects.get().total == 40
    assert sum(PointsAward.objects.values_list("awarded", flat=True)) == 40
    assert LeaderboardEntry.objects.get().value == Decimal(40)
    assert MetricEvent.objects.count() == 10
