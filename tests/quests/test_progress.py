"""The quests step of the event pipeline (issue 30, item 3): progress per goal kind, quests of
several goals, completion once per user, quest and period with its reward paid once through
the ledger, the rules of activation and archiving, attribute filters, tenant isolation, time
zones, and an event response that quests never change."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from apps.metrics.models import Metric
from apps.points.models import PointsAward, PointsTotal
from apps.quests.choices import Status
from apps.quests.configuration import quest_update
from apps.quests.domain import QuestSettings
from apps.quests.models import QuestProgress
from apps.streaks.configuration import streak_settings_update
from apps.streaks.domain import TenantStreakSettings
from apps.users.models import EndUser
from tests.factories import AttributeFactory, MetricFactory, bump
from tests.quests.support import quest, system

pytestmark = pytest.mark.django_db

NOON = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)  # a Tuesday


def send(client: Any, user: str, value: Any = 1, metric: str = "words", **fields: Any) -> Any:
    response = client.post(
        f"/v1/metrics/{metric}/event", {"user": {"id": user, **fields}, "value": value}
    )
    assert response.status_code == 201, response.content
    return response


def progress(user: str, key: str) -> list[QuestProgress]:
    return list(
        QuestProgress.objects.filter(user__external_id=user, quest__key=key).order_by(
            "period_first"
        )
    )


def values(row: QuestProgress) -> list[Any]:
    return [g["value"] for g in row.goals]


def anonymous(body: dict[str, Any]) -> dict[str, Any]:
    """An event's response without what differs for any two events (ids)."""
    body = dict(body)
    body.pop("eventId")
    for change in body["points"].values():
        for award in change["awards"]:
            award.pop("id")
    return body


def metric_goal(metric: Metric, target: Any) -> dict[str, Any]:
    return {"kind": "metric", "metric_id": str(metric.public_id), "target": Decimal(target)}


def test_a_metric_goal_completes_once_and_pays_its_reward_once(
    api_client: Any, tenant: Tenant, metric: Metric
):
    gems = system(tenant, "gems")
    quest(
        tenant,
        "words-5",
        [metric_goal(metric, 5)],
        reward_points=20,
        reward_points_system_id=str(gems.public_id),
    )
    with time_machine.travel(NOON, tick=False):
        send(api_client, "ann", 2)
        [row] = progress("ann", "words-5")
        assert (values(row), row.completed_at) == ([2], None)
        send(api_client, "ann", 3)
        send(api_client, "ann", 4)  # completed: counts no more
    [row] = progress("ann", "words-5")
    assert values(row) == [5]
    assert row.completed_at == NOON
    assert row.reward_points == 20
    [award] = PointsAward.objects.filter(system=gems)
    assert award.awarded == 20
    assert award.trigger_id is None
    assert award.trigger_snapshot["type"] == "quest"
    assert award.trigger_snapshot["key"] == "words-5"
    assert PointsTotal.objects.get(system=gems).total == 20
    # The next day is a new period, paid again once completed.
    with time_machine.travel(NOON + dt.timedelta(days=1), tick=False):
        send(api_client, "ann", 5)
    assert [values(r) for r in progress("ann", "words-5")] == [[5], [5]]
    assert PointsTotal.objects.get(system=gems).total == 40


def test_the_event_response_is_the_same_with_quests(
    api_client: Any, tenant: Tenant, metric: Metric
):
    xp = system(
        tenant, "xp", type="metric", points=1, metric_id=str(metric.public_id), metric_threshold=1
    )
    with time_machine.travel(NOON, tick=False):
        before = [send(api_client, "bob", 3).json() for _ in range(2)]
        quest(
            tenant,
            "words",
            [metric_goal(metric, 4)],
            reward_points=50,
            reward_points_system_id=str(system(tenant, "gems").public_id),
        )
        after = [send(api_client, "cy", 3).json() for _ in range(2)]
    assert QuestProgress.objects.get(user__external_id="cy").completed_at is not None
    for without, with_quests in zip(before, after, strict=True):
        assert anonymous(with_quests) == anonymous(without)
    assert PointsTotal.objects.get(system=xp, user__external_id="cy").total == 6


def test_each_goal_kind_and_a_quest_of_several_goals(
    api_client: Any, tenant: Tenant, metric: Metric
):
    streak_settings_update(
        tenant, TenantStreakSettings(frequency="daily", conditions=[("words", 1)])
    )
    xp = system(
        tenant, "xp", type="metric", points=10, metric_id=str(metric.public_id), metric_threshold=1
    )
    first = Achievement.objects.create(
        tenant=tenant,
        name="First",
        trigger="metric",
        metric=metric,
        metric_value=3,
        status="active",
    )
    bump(tenant)
    quest(tenant, "streak", [{"kind": "streak", "target": 1}])
    quest(
        tenant,
        "points",
        [{"kind": "points", "points_system_id": str(xp.public_id), "target": 30}],
    )
    quest(tenant, "first", [{"kind": "achievement", "achievement_id": str(first.public_id)}])
    quest(
        tenant,
        "all",
        [
            metric_goal(metric, 3),
            {"kind": "streak", "target": 1},
            {"kind": "points", "points_system_id": str(xp.public_id), "target": 30},
            {"kind": "achievement", "achievement_id": str(first.public_id)},
        ],
    )
    quest(tenant, "week", [{"kind": "active_days", "target": 2}], cadence="weekly")
    with time_machine.travel(NOON, tick=False):
        send(api_client, "ann", 1)
    [streak] = progress("ann", "streak")
    assert streak.completed_at == NOON  # the day's first event extended the streak
    assert values(progress("ann", "points")[0]) == [10]
    assert values(progress("ann", "all")[0]) == [1, 1, 10, 0]
    assert progress("ann", "first") == []  # nothing moved it yet
    with time_machine.travel(NOON + dt.timedelta(hours=1), tick=False):
        send(api_client, "ann", 2)  # total 3: the achievement; 3 events: 30 points
    assert progress("ann", "points")[0].completed_at is not None
    assert progress("ann", "first")[0].completed_at is not None
    [everything] = progress("ann", "all")
    assert values(everything) == [3, 1, 30, 1]
    assert everything.completed_at is not None
    # Distinct days in the week: one so far, however many events.
    [week] = progress("ann", "week")
    assert (values(week), week.completed_at) == ([1], None)
    with time_machine.travel(NOON + dt.timedelta(days=1), tick=False):
        send(api_client, "ann", 1)
    [week] = progress("ann", "week")
    assert values(week) == [2]
    assert week.completed_at is not None
    assert (week.period_first, week.period_last) == (dt.date(2026, 11, 22), dt.date(2026, 11, 28))


def test_a_quest_activated_mid_period_counts_from_then_and_an_archived_one_stops(
    api_client: Any, tenant: Tenant, metric: Metric
):
    made = quest(tenant, "words", [metric_goal(metric, 10)], status=Status.INACTIVE)
    with time_machine.travel(NOON, tick=False):
        send(api_client, "ann", 4)  # before activation: not counted
    with time_machine.travel(NOON + dt.timedelta(hours=1), tick=False):
        quest_update(tenant, made, QuestSettings(status=Status.ACTIVE))
        send(api_client, "ann", 3)
    assert values(progress("ann", "words")[0]) == [3]
    with time_machine.travel(NOON + dt.timedelta(hours=2), tick=False):
        quest_update(tenant, made, QuestSettings(status=Status.ARCHIVED))
        send(api_client, "ann", 30)
    [row] = progress("ann", "words")
    assert values(row) == [3]
    assert row.completed_at is None


def test_attribute_filters_choose_who_gets_a_quest(api_client: Any, tenant: Tenant, metric: Metric):
    plan = AttributeFactory(tenant=tenant, key="plan", name="Plan")
    bump(tenant)
    quest(
        tenant,
        "pro",
        [metric_goal(metric, 1)],
        user_attributes=[{"attributeId": str(plan.public_id), "attributeValue": "pro"}],
    )
    with time_machine.travel(NOON, tick=False):
        send(api_client, "ann", 1, attributes={"plan": "pro"})
        send(api_client, "bob", 1, attributes={"plan": "free"})
        send(api_client, "cy", 1)
    assert [r.user.external_id for r in QuestProgress.objects.select_related("user")] == ["ann"]


def test_another_tenants_events_leave_a_quest_alone(
    api_client: Any, other_tenant_client: Any, tenant: Tenant, other_tenant: Tenant, metric: Metric
):
    MetricFactory(tenant=other_tenant, key="words", name="Words")
    bump(other_tenant)
    quest(tenant, "words", [metric_goal(metric, 1)])
    with time_machine.travel(NOON, tick=False):
        send(other_tenant_client, "ann", 5)
    assert not QuestProgress.objects.exists()
    with time_machine.travel(NOON, tick=False):
        send(api_client, "ann", 5)
    [row] = QuestProgress.objects.all()
    assert row.user.tenant_id == tenant.pk


@pytest.mark.parametrize(
    ("tz", "local_midnight_utc"),
    [
        ("Asia/Tokyo", dt.datetime(2026, 11, 24, 15, tzinfo=dt.UTC)),
        ("America/Los_Angeles", dt.datetime(2026, 11, 25, 8, tzinfo=dt.UTC)),
    ],
)
def test_a_daily_quest_renews_at_the_users_own_midnight(
    api_client: Any, tenant: Tenant, metric: Metric, tz: str, local_midnight_utc: dt.datetime
):
    quest(tenant, "words", [metric_goal(metric, 10)])
    with time_machine.travel(local_midnight_utc - dt.timedelta(minutes=1), tick=False):
        send(api_client, "ann", 4, tz=tz)
    with time_machine.travel(local_midnight_utc + dt.timedelta(minutes=1), tick=False):
        send(api_client, "ann", 5)
    rows = progress("ann", "words")
    assert [values(r) for r in rows] == [[4], [5]]
    assert rows[0].period_end == local_midnight_utc
    assert EndUser.objects.get(external_id="ann").tz == tz


def test_a_weekly_quest_across_the_dst_change_is_one_period(
    api_client: Any, tenant: Tenant, metric: Metric
):
    # New York falls back on Sunday 1 November 2026: that week runs 1 to 7 November.
    quest(tenant, "words", [metric_goal(metric, 10)], cadence="weekly")
    start = dt.datetime(2026, 11, 1, 4, 30, tzinfo=dt.UTC)  # 00:30 EDT on Sunday
    with time_machine.travel(start, tick=False):
        send(api_client, "ann", 4, tz="America/New_York")
    end = dt.datetime(2026, 11, 8, 4, 59, tzinfo=dt.UTC)  # 23:59 EST on Saturday
    with time_machine.travel(end, tick=False):
        send(api_client, "ann", 6)
    [row] = progress("ann", "words")
    assert row.completed_at == end
    assert row.period_end == dt.datetime(2026, 11, 8, 5, tzinfo=dt.UTC)


def test_a_once_quest_counts_between_its_dates_only(
    api_client: Any, tenant: Tenant, metric: Metric
):
    quest(
        tenant,
        "launch",
        [metric_goal(metric, 3)],
        cadence="once",
        starts_on=dt.date(2026, 11, 25),
        ends_on=dt.date(2026, 11, 26),
    )
    with time_machine.travel(NOON, tick=False):
        send(api_client, "ann", 5)  # the day before
    assert progress("ann", "launch") == []
    for day in (1, 2, 3):
        with time_machine.travel(NOON + dt.timedelta(days=day), tick=False):
            send(api_client, "ann", 1)
    [row] = progress("ann", "launch")
    assert values(row) == [2]
    assert row.completed_at is None


def test_a_pool_gives_each_user_their_own_quests_and_only_those_count(
    api_client: Any, tenant: Tenant, metric: Metric
):
    from apps.quests.configuration import pool_create
    from apps.quests.domain import QuestPoolSettings

    goal = metric_goal(metric, 100)
    with time_machine.travel(NOON - dt.timedelta(days=1), tick=False):
        made = [quest(tenant, f"q{n}", [goal]) for n in range(6)]
        pool_create(
            tenant,
            QuestPoolSettings(
                name="Daily",
                key="daily",
                cadence="daily",
                size=2,
                quests=[{"quest_id": str(q.public_id), "weight": 1} for q in made],
            ),
        )
        free = quest(tenant, "everyone", [goal])
    users = [f"u{n}" for n in range(8)]
    with time_machine.travel(NOON, tick=False):
        for user in users:
            send(api_client, user, 1)
    sets = {}
    for user in users:
        keys = set(
            QuestProgress.objects.filter(user__external_id=user).values_list(
                "quest__key", flat=True
            )
        )
        assert free.key in keys
        keys.discard(free.key)
        assert len(keys) == 2, keys
        sets[user] = keys
    assert len({frozenset(s) for s in sets.values()}) > 1  # varied per user
    # The next day avoids the day's set (6 quests: three times the size).
    with time_machine.travel(NOON + dt.timedelta(days=1), tick=False):
        send(api_client, "u0", 1)
    tomorrow = set(
        QuestProgress.objects.filter(
            user__external_id="u0", period_first=dt.date(2026, 11, 25)
        ).values_list("quest__key", flat=True)
    ) - {free.key}
    assert len(tomorrow) == 2
    assert not tomorrow & sets["u0"]


def test_a_quest_added_to_a_pool_mid_period_waits_for_the_users_next_period(
    api_client: Any, tenant: Tenant, metric: Metric
):
    """The stability rule: what a user has in a period is decided when it begins. A quest put
    into a pool mid-period stays what it was (everyone's) until the user's next period, and the
    pool's choice for the current one does not change; from the next, the pool chooses among
    both."""
    from apps.quests.configuration import pool_create, pool_update
    from apps.quests.domain import QuestPoolSettings

    goal = metric_goal(metric, 100)
    with time_machine.travel(NOON - dt.timedelta(days=1), tick=False):
        first = quest(tenant, "first", [goal])
        late = quest(tenant, "late", [goal])
        pool = pool_create(
            tenant,
            QuestPoolSettings(
                name="Daily",
                key="daily",
                cadence="daily",
                size=1,
                quests=[{"quest_id": str(first.public_id)}],
            ),
        )
    with time_machine.travel(NOON, tick=False):
        send(api_client, "ann", 1)
        members = [{"quest_id": str(q.public_id)} for q in (first, late)]
        pool_update(tenant, pool, QuestPoolSettings(quests=members))
        send(api_client, "ann", 1)
    assert [values(r) for r in progress("ann", "first")] == [[2]]
    assert [values(r) for r in progress("ann", "late")] == [[2]]  # still everyone's today
    with time_machine.travel(NOON + dt.timedelta(days=1), tick=False):
        send(api_client, "ann", 1)
    tomorrow = QuestProgress.objects.filter(
        user__external_id="ann", period_first=dt.date(2026, 11, 25)
    )
    assert tomorrow.count() == 1  # the pool's one of the two


def test_a_reward_achievement_is_completed_with_the_quest(
    api_client: Any, tenant: Tenant, metric: Metric
):
    from apps.achievements.models import AchievementCompletion

    badge = Achievement.objects.create(
        tenant=tenant, name="Questing", key="questing", trigger="api", status="active"
    )
    bump(tenant)
    quest(tenant, "two", [metric_goal(metric, 2)], reward_achievement_id=str(badge.public_id))
    with time_machine.travel(NOON, tick=False):
        send(api_client, "ann", 1)
        assert not AchievementCompletion.objects.exists()
        send(api_client, "ann", 1)
        send(api_client, "ann", 1)
    [completion] = AchievementCompletion.objects.all()
    assert completion.achievement_id == badge.pk
