"""Batches (POST /admin/v1/metrics/events) move quests as single events do. Quests do not fit
the bulk path (apps/pipeline/bulk.py): a tenant with an active quest goes the grouped way, one
user's events in order under the user's lock, through the same quests step."""

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.db import connection

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from apps.pipeline import bulk
from apps.points.models import PointsTotal
from apps.quests.choices import Status
from apps.quests.configuration import quest_update
from apps.quests.domain import QuestSettings
from apps.quests.models import QuestProgress
from tests.quests.support import quest, system

pytestmark = pytest.mark.django_db

NOON = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)


def test_a_batch_moves_quests_and_pays_once(
    api_client: Any, tenant: Tenant, metric: Metric, django_capture_on_commit_callbacks: Any
):
    gems = system(tenant, "gems")
    quest(
        tenant,
        "ten",
        [{"kind": "metric", "metric_id": str(metric.public_id), "target": 10}],
        reward_points=5,
        reward_points_system_id=str(gems.public_id),
    )
    events = [
        {"key": "words", "user": {"id": user}, "value": value}
        for user, value in [("ann", 4), ("bob", 3), ("ann", 4), ("ann", 4), ("bob", 3)]
    ]
    with (
        time_machine.travel(NOON, tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = api_client.post("/admin/v1/metrics/events", events)
    assert response.status_code == 202, response.content
    rows = {r.user.external_id: r for r in QuestProgress.objects.select_related("user")}
    assert rows["ann"].goals[0]["value"] == 12  # the event that completed it counted whole
    assert rows["ann"].completed_at == NOON
    assert rows["bob"].goals[0]["value"] == 6
    assert rows["bob"].completed_at is None
    assert PointsTotal.objects.get(system=gems).total == 5


@pytest.mark.skipif(connection.vendor != "postgresql", reason="bulk is PostgreSQL's")
def test_a_tenant_with_an_active_quest_is_not_applied_in_bulk(tenant: Tenant, metric: Metric):
    assert bulk.bulk_ready(tenant)
    made = quest(
        tenant,
        "ten",
        [{"kind": "metric", "metric_id": str(metric.public_id), "target": 10}],
        status=Status.INACTIVE,
    )
    assert bulk.bulk_ready(tenant)  # an inactive quest counts nothing
    quest_update(tenant, made, QuestSettings(status=Status.ACTIVE))
    assert not bulk.bulk_ready(tenant)
