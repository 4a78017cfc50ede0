"""Quest and pool configuration through the admin extension API (/admin/ext/v1/quests and
/admin/ext/v1/quest-pools): the bulk conventions, the declaration's rules as issues, and
tenant isolation."""

import datetime as dt
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from apps.metrics.models import Metric
from apps.points.models import PointsSystem
from apps.quests.models import Quest

pytestmark = pytest.mark.django_db

QUESTS = "/admin/ext/v1/quests"
POOLS = "/admin/ext/v1/quest-pools"
NOON = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)


def quest_body(metric: Metric, **fields: Any) -> dict[str, Any]:
    return {
        "name": "Write 50 words",
        "key": "words-50",
        "cadence": "daily",
        "goals": [{"kind": "metric", "metricId": str(metric.public_id), "target": 50}],
        **fields,
    }


def created(client: Any, path: str, item: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, [item])
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["issues"] == [], body
    return dict(body["created"][0])


def refused(client: Any, path: str, item: dict[str, Any]) -> str:
    response = client.post(path, [item])
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["created"] == []
    [issue] = body["issues"]
    return str(issue["message"])


def test_a_quest_is_created_inactive_and_read_back(api_client: Any, metric: Metric):
    body = created(api_client, QUESTS, quest_body(metric, badgeUrl="https://x.test/b.png"))

    assert body["key"] == "words-50"
    assert body["status"] == "inactive"
    assert body["activatedAt"] is None
    assert body["cadence"] == "daily"
    assert body["goals"] == [{"kind": "metric", "target": 50.0, "metricId": str(metric.public_id)}]
    assert (body["rewardPoints"], body["rewardPointsSystemId"]) == (0, None)
    assert body["badgeUrl"] == "https://x.test/b.png"
    assert api_client.get(f"{QUESTS}/{body['id']}").json() == body
    assert api_client.get(QUESTS).json() == [body]


def test_activation_is_stamped_and_counts_from_then(api_client: Any, metric: Metric):
    quest = created(api_client, QUESTS, quest_body(metric))
    with time_machine.travel(NOON, tick=False):
        body = api_client.patch(QUESTS, [{"id": quest["id"], "status": "active"}]).json()
    [updated] = body["updated"]
    assert updated["activatedAt"] == "2026-11-24T12:00:00Z"
    # Resending the same status is no new activation.
    with time_machine.travel(NOON + dt.timedelta(hours=3), tick=False):
        body = api_client.patch(QUESTS, [{"id": quest["id"], "status": "active"}]).json()
    assert body["updated"][0]["activatedAt"] == "2026-11-24T12:00:00Z"


def test_every_goal_kind_and_a_reward(api_client: Any, tenant: Tenant, metric: Metric):
    system = PointsSystem.objects.create(tenant=tenant, key="xp", name="XP")
    won = Achievement.objects.create(tenant=tenant, name="Won", key="won", trigger="api")
    goals = [
        {"kind": "metric", "metricId": str(metric.public_id), "target": 2.5},
        {"kind": "active_days", "target": 3},
        {"kind": "streak", "target": 1},
        {"kind": "points", "pointsSystemId": str(system.public_id), "target": 100},
        {"kind": "achievement", "achievementId": str(won.public_id)},
    ]
    body = created(
        api_client,
        QUESTS,
        quest_body(
            metric,
            cadence="weekly",
            goals=goals,
            rewardPoints=20,
            rewardPointsSystemId=str(system.public_id),
            rewardAchievementId=str(won.public_id),
        ),
    )
    assert [g["kind"] for g in body["goals"]] == [
        "metric",
        "active_days",
        "streak",
        "points",
        "achievement",
    ]
    assert body["goals"][0]["target"] == 2.5
    assert body["goals"][4] == {
        "kind": "achievement",
        "target": 1.0,
        "achievementId": str(won.public_id),
    }
    assert body["rewardPoints"] == 20
    assert body["rewardAchievementId"] == str(won.public_id)
    assert Quest.objects.get().goals[0] == {
        "kind": "metric",
        "target": "2.5",
        "metric_id": str(metric.public_id),
    }


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"goals": []}, "goals"),
        ({"goals": [{"kind": "metric", "target": 5}]}, "a metric goal needs metric_id"),
        ({"goals": [{"kind": "active_days", "target": 0}]}, "target must be above 0"),
        ({"goals": [{"kind": "flying", "target": 1}]}, "goals"),
        ({"cadence": "once"}, "startsOn and endsOn are required"),
        (
            {"cadence": "once", "startsOn": "2026-12-10", "endsOn": "2026-12-01"},
            "endsOn must not be before startsOn",
        ),
        ({"rewardPoints": 10}, "rewardPointsSystemId is required"),
        ({"rewardPoints": -1}, "rewardPoints"),
        ({"status": "done"}, "status"),
        ({"badgeUrl": "not a url"}, "badgeUrl"),
        ({"surprise": 1}, "unknown field"),
    ],
)
def test_bad_quests_are_refused_with_a_clear_issue(
    api_client: Any, metric: Metric, fields: dict[str, Any], message: str
):
    assert message in refused(api_client, QUESTS, quest_body(metric, **fields))
    assert not Quest.objects.exists()


def test_references_must_be_the_tenants(api_client: Any, other_tenant: Tenant, metric: Metric):
    theirs = PointsSystem.objects.create(tenant=other_tenant, key="xp", name="XP")
    message = refused(
        api_client,
        QUESTS,
        quest_body(
            metric,
            goals=[{"kind": "points", "pointsSystemId": str(theirs.public_id), "target": 5}],
        ),
    )
    assert "Points system not found by ID" in message
    message = refused(
        api_client,
        QUESTS,
        quest_body(metric, rewardPoints=5, rewardPointsSystemId=str(theirs.public_id)),
    )
    assert "Points system not found by ID" in message


def test_a_reward_achievement_must_be_an_api_achievement(
    api_client: Any, tenant: Tenant, metric: Metric
):
    metric_achievement = Achievement.objects.create(
        tenant=tenant, name="M", key="m", trigger="metric", metric=metric, metric_value=5
    )
    message = refused(
        api_client,
        QUESTS,
        quest_body(metric, rewardAchievementId=str(metric_achievement.public_id)),
    )
    assert "not an api achievement" in message
    assert Achievement.objects.count() == 1


def test_a_body_that_is_not_a_list_is_refused_whole(api_client: Any, metric: Metric):
    response = api_client.post(QUESTS, quest_body(metric))
    assert response.status_code == 422
    assert response.json() == {"error": "body must be a JSON array of objects"}


def test_keys_are_unique_per_tenant(api_client: Any, other_tenant_client: Any, metric: Metric):
    created(api_client, QUESTS, quest_body(metric))
    assert refused(api_client, QUESTS, quest_body(metric)) == "Key already in use by another quest"


def test_another_tenants_quest_is_not_found(
    api_client: Any, other_tenant_client: Any, metric: Metric
):
    quest = created(api_client, QUESTS, quest_body(metric))
    assert other_tenant_client.get(QUESTS).json() == []
    assert other_tenant_client.get(f"{QUESTS}/{quest['id']}").status_code == 404
    body = other_tenant_client.patch(QUESTS, [{"id": quest["id"], "name": "Mine"}]).json()
    assert body["updated"] == []
    assert Quest.objects.get().name == "Write 50 words"


def test_a_quest_with_history_is_archived_not_deleted(
    api_client: Any, tenant: Tenant, metric: Metric
):
    from apps.quests.models import QuestProgress
    from tests.factories import EndUserFactory

    kept = created(api_client, QUESTS, quest_body(metric))
    gone = created(api_client, QUESTS, quest_body(metric, key="other"))
    QuestProgress.objects.create(
        tenant=tenant,
        quest=Quest.objects.get(key="words-50"),
        user=EndUserFactory(tenant=tenant),
        period_first=NOON.date(),
        period_last=NOON.date(),
        period_end=NOON,
        started_at=NOON,
        updated_at=NOON,
    )
    body = api_client.delete(f"{QUESTS}?ids={kept['id']}&ids={gone['id']}").json()
    assert body["deleted"] == [{"id": gone["id"]}]
    assert "archive it" in body["issues"][0]["message"]


# --- pools ------------------------------------------------------------------------------------


def pool_body(*quest_ids: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": "Daily three",
        "key": "daily-3",
        "cadence": "daily",
        "size": 1,
        "quests": [{"questId": q, "weight": 2} for q in quest_ids],
        **fields,
    }


def test_a_pool_names_its_quests_with_weights(api_client: Any, metric: Metric):
    a = created(api_client, QUESTS, quest_body(metric, key="a"))
    b = created(api_client, QUESTS, quest_body(metric, key="b"))
    with time_machine.travel(NOON, tick=False):
        pool = created(api_client, POOLS, pool_body(a["id"], b["id"]))
    assert pool["status"] == "active"
    assert pool["quests"] == [
        {"questId": a["id"], "weight": 2, "addedAt": "2026-11-24T12:00:00+00:00"},
        {"questId": b["id"], "weight": 2, "addedAt": "2026-11-24T12:00:00+00:00"},
    ]
    # A later change keeps each member's moment; a new member gets the change's.
    c = created(api_client, QUESTS, quest_body(metric, key="c"))
    later = NOON + dt.timedelta(hours=5)
    with time_machine.travel(later, tick=False):
        body = api_client.patch(
            POOLS, [{"id": pool["id"], "quests": [{"questId": a["id"]}, {"questId": c["id"]}]}]
        ).json()
    [updated] = body["updated"]
    assert [(m["weight"], m["addedAt"][:13]) for m in updated["quests"]] == [
        (1, "2026-11-24T12"),
        (1, "2026-11-24T17"),
    ]


def test_pool_rules(api_client: Any, other_tenant_client: Any, metric: Metric):
    daily = created(api_client, QUESTS, quest_body(metric, key="d"))
    weekly = created(api_client, QUESTS, quest_body(metric, key="w", cadence="weekly"))
    assert "not of the pool's cadence" in refused(api_client, POOLS, pool_body(weekly["id"]))
    assert "named twice" in refused(api_client, POOLS, pool_body(daily["id"], daily["id"]))
    missing = "00000000-0000-0000-0000-000000000000"
    assert "quest not found by ID" in refused(api_client, POOLS, pool_body(missing))
    created(api_client, POOLS, pool_body(daily["id"]))
    assert "one pool only" in refused(api_client, POOLS, pool_body(daily["id"], key="again"))
    assert "size" in refused(api_client, POOLS, pool_body(daily["id"], key="x", size=0))
    # Another tenant's quests are not found; its own pool list is empty.
    assert "not found" in refused(other_tenant_client, POOLS, pool_body(daily["id"]))
    assert other_tenant_client.get(POOLS).json() == []
    # A quest in a pool keeps its cadence, and is not deleted.
    body = api_client.patch(QUESTS, [{"id": daily["id"], "cadence": "weekly"}]).json()
    assert "whose cadence differs" in body["issues"][0]["message"]
    body = api_client.delete(f"{QUESTS}?ids={daily['id']}").json()
    assert "take it out of the pool" in body["issues"][0]["message"]
