"""What deleting something a quest names does: an achievement a reward completes is not deleted
while the quest names it (the foreign key RESTRICTs: an issue, never a 500); a points system a
reward pays into is archived as the API archives systems, and the reward pays nothing more."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from apps.metrics.models import Metric
from apps.points.models import PointsAward
from apps.quests.models import QuestProgress
from tests.factories import bump
from tests.quests.support import quest, system

pytestmark = pytest.mark.django_db

NOON = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)


def test_a_reward_achievement_is_not_deleted_under_a_quest(
    api_client: Any, tenant: Tenant, metric: Metric
):
    badge = Achievement.objects.create(tenant=tenant, name="Badge", key="badge", trigger="api")
    bump(tenant)
    quest(
        tenant,
        "q",
        [{"kind": "active_days", "target": 1}],
        reward_achievement_id=str(badge.public_id),
    )
    response = api_client.delete(f"/admin/v1/achievements?ids={badge.public_id}")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["deleted"] == []
    assert "Still in use" in body["issues"][0]["message"]
    assert Achievement.objects.filter(pk=badge.pk).exists()


def test_an_archived_reward_system_pays_nothing(api_client: Any, tenant: Tenant, metric: Metric):
    gems = system(tenant, "gems")
    goal = {"kind": "metric", "metric_id": str(metric.public_id), "target": Decimal(1)}
    quest(tenant, "q", [goal], reward_points=5, reward_points_system_id=str(gems.public_id))
    response = api_client.delete(f"/admin/v1/points?ids={gems.public_id}&confirm={gems.key}")
    assert response.status_code == 200, response.content
    assert response.json()["issues"] == []
    with time_machine.travel(NOON, tick=False):
        body = {"user": {"id": "ann"}, "value": 1}
        assert api_client.post("/v1/metrics/words/event", body).status_code == 201
    [row] = QuestProgress.objects.all()
    assert row.completed_at == NOON
    assert row.reward_points == 0
    assert not PointsAward.objects.exists()


def test_a_metric_or_achievement_a_goal_counts_is_not_deleted(
    api_client: Any, tenant: Tenant, metric: Metric
):
    first = Achievement.objects.create(
        tenant=tenant, name="First", trigger="metric", metric=metric, metric_value=1
    )
    bump(tenant)
    goal = {"kind": "metric", "metric_id": str(metric.public_id), "target": Decimal(1)}
    made = quest(
        tenant, "q", [goal, {"kind": "achievement", "achievement_id": str(first.public_id)}]
    )
    for path, obj in (("/admin/v1/metrics", metric), ("/admin/v1/achievements", first)):
        body = api_client.delete(f"{path}?ids={obj.public_id}").json()
        assert body["deleted"] == [], body
        assert "the quest Q counts it in a goal" in body["issues"][0]["message"], body
    # Archived, the quest no longer holds them.
    from apps.quests.configuration import quest_update
    from apps.quests.domain import QuestSettings

    quest_update(tenant, made, QuestSettings(status="archived"))
    body = api_client.delete(f"/admin/v1/achievements?ids={first.public_id}").json()
    assert body["deleted"] == [{"id": str(first.public_id)}], body
