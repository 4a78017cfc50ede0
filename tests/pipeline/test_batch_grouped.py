"""The batch worker applies a batch grouped by user (apps/pipeline/batches.queued_events_process):
one lock, one load and one transaction per user, each event in a savepoint. These tests send
the same events one at a time and as batches and compare everything the events wrote, and show
what a failing event does to the rest of its user's group."""

import datetime as dt
import random
from dataclasses import replace
from decimal import Decimal
from typing import Any

import psycopg
import pytest
import time_machine
from django.db import OperationalError, connection
from django.db.models import Model
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement, AchievementCompletion
from apps.core.errors import ValidationError
from apps.leaderboards.models import Leaderboard, LeaderboardEntry
from apps.metrics.models import Metric, MetricDailyChange, MetricEvent, MetricTotal
from apps.pipeline import batches, bulk, steps
from apps.pipeline.batches import events_enqueue, queued_events_process
from apps.pipeline.models import QueuedEvent, QueuedEventStatus
from apps.pipeline.services import EventInput, event_process
from apps.points.models import (
    PointsAward,
    PointsDailyChange,
    PointsLevel,
    PointsSystem,
    PointsTotal,
    PointsTrigger,
    PointsTriggerMark,
)
from apps.streaks.models import StreakLoss, StreakPeriod, StreakState
from apps.users.domain import UserFields
from apps.users.models import EndUser

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def grouped_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """On PostgreSQL a batch goes in bulk when its tenant allows (apps/pipeline/bulk.py,
    tests/pipeline/test_batch_bulk_postgres.py): here every tenant takes the grouped way."""
    monkeypatch.setattr(bulk, "bulk_ready", lambda tenant: False)


ACTIVE = {"status": "active"}
DAY0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)  # configuration
DAYS = [dt.datetime(2026, 3, d, 12, 0, tzinfo=dt.UTC) for d in (2, 3, 4, 6)]  # batches


def created(client: Any, path: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    response = client.post(path, items)
    assert response.status_code == 201, response.content
    assert not response.json().get("issues"), response.content
    return list(response.json()["created"])


def configure(client: Any) -> None:
    """Every feature on metric `words` (issue 13's full pipeline and more): a daily streak; XP
    (a point a word, 50 at 500 words, 20 at a 3-day streak) and coins (one per 10 words, 5 on
    creation, 7 for the 100-words achievement), each with levels; achievements at 10, 100 and
    1000 words; boards on words (3 places: displacement), on XP (4 places) and on streaks. A
    second metric, `m`, has only its total."""
    words, _ = created(
        client, "/admin/v1/metrics", [{"name": "Words", "key": "words"}, {"name": "M", "key": "m"}]
    )
    response = client.patch(
        "/admin/v1/streaks/settings",
        {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
    )
    assert response.status_code == 200, response.content
    achievements = created(
        client,
        "/admin/v1/achievements",
        [
            {"name": f"a{v}", "trigger": "metric", "metricId": words["id"]}
            | {"metricValue": v, **ACTIVE}
            for v in (10, 100, 1000)
        ],
    )
    xp, _ = points_configured(client, words, achievements)
    board = {"start": "2026-03-01", **ACTIVE}
    created(
        client,
        "/admin/v1/leaderboards",
        [
            {"name": "W", "key": "w", "rankBy": "metric", "metricId": words["id"]}
            | {"maxParticipants": 3, **board},
            {"name": "X", "key": "x", "rankBy": "points", "pointsSystemId": xp["id"]}
            | {"maxParticipants": 4, **board},
            {"name": "S", "key": "s", "rankBy": "streak", **board},
        ],
    )


def points_configured(
    client: Any, words: dict[str, Any], achievements: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """XP (a point a word, 50 at 500 words, 20 at a 3-day streak) and coins (one per 10 words,
    5 on creation, 7 for the second achievement), each with levels at 50, 200 and 1000."""
    xp, coins = created(
        client, "/admin/v1/points", [{"name": "XP", "key": "xp"}, {"name": "C", "key": "c"}]
    )
    on_words = {"type": "metric", "metricId": words["id"], **ACTIVE}
    created(
        client,
        f"/admin/v1/points/{xp['id']}/triggers",
        [
            {**on_words, "points": 1, "metricThreshold": 1},
            {**on_words, "points": 50, "metricThreshold": 500},
            {"type": "streak", "points": 20, "streakLength": 3, **ACTIVE},
        ],
    )
    created(
        client,
        f"/admin/v1/points/{coins['id']}/triggers",
        [
            {**on_words, "points": 1, "metricThreshold": 10},
            {"type": "user_creation", "points": 5, **ACTIVE},
            {"type": "achievement", "points": 7, "achievementId": achievements[1]["id"], **ACTIVE},
        ],
    )
    for system in (xp, coins):
        levels = [{"key": f"l{p}", "name": f"L{p}", "points": p} for p in (50, 200, 1000)]
        created(client, f"/admin/v1/points/{system['id']}/levels", levels)
    return xp, coins


USERS = [f"u{n}" for n in range(8)]


def daily_batches() -> list[list[EventInput]]:
    """One batch a day, the users' events interleaved: u7 skips the second day (its streak
    is lost), u6 appears only on the third, the fourth comes after a day without events.
    Values are positive and drawn so that no two users tie on a board (see the tie test)."""
    rng = random.Random(13)
    days: list[list[EventInput]] = []
    for day in range(len(DAYS)):
        items: list[EventInput] = []
        for _ in range(30):
            user = rng.choice(USERS)
            if (user == "u7" and day == 1) or (user == "u6" and day < 2):
                continue
            fields = UserFields()
            if rng.random() < 0.1:
                fields = replace(fields, name=f"{user} on day {day}")
            if user == "u3" and not items:
                fields = replace(fields, tz="America/New_York")
            key = f"k{rng.randrange(4)}" if rng.random() < 0.2 else None  # replays too
            metric = "m" if rng.random() < 0.1 else "words"
            value = Decimal(rng.randint(1, 60)) + Decimal(USERS.index(user)) / 100
            items.append(EventInput(metric, user, fields, value, {}, key))
        days.append(items)
    return days


def one_at_a_time(tenant: Tenant, days: list[list[EventInput]]) -> None:
    for now, items in zip(DAYS, days, strict=False):
        if not items:
            continue
        with time_machine.travel(now, tick=False):  # the same clock for `updated` columns
            for item in items:
                event_process(tenant, item, now=now)


def as_batches(tenant: Tenant, days: list[list[EventInput]]) -> None:
    for now, items in zip(DAYS, days, strict=False):
        if not items:
            continue
        with time_machine.travel(now, tick=False):
            events_enqueue(tenant, items)
            batch_id = QueuedEvent.objects.filter(tenant=tenant).latest("id").batch_id
            assert queued_events_process(str(batch_id)) == len(items)
    statuses = set(QueuedEvent.objects.filter(tenant=tenant).values_list("status", flat=True))
    assert statuses == {QueuedEventStatus.DONE}


# What the events wrote, per user. Rows are compared by their natural keys (external ids,
# configuration keys), never by database ids, which differ between the two tenants.
STATE: list[type[Model]] = [
    MetricTotal,
    MetricEvent,
    MetricDailyChange,
    StreakState,
    StreakPeriod,
    StreakLoss,
    AchievementCompletion,
    PointsTotal,
    PointsAward,
    PointsTriggerMark,
    PointsDailyChange,
    LeaderboardEntry,
]
SKIPPED = {"id", "public_id", "tenant"}


def snapshot(tenant: Tenant) -> dict[str, Any]:
    triggers = {
        t.pk: f"{t.system.key}:{t.type}:{t.points}"
        for t in PointsTrigger.objects.filter(system__tenant=tenant).select_related("system")
    }
    natural: dict[type[Model], dict[Any, Any]] = {
        EndUser: dict(EndUser.objects.filter(tenant=tenant).values_list("pk", "external_id")),
        Metric: dict(Metric.objects.filter(tenant=tenant).values_list("pk", "key")),
        PointsSystem: dict(PointsSystem.objects.filter(tenant=tenant).values_list("pk", "key")),
        PointsLevel: dict(
            PointsLevel.objects.filter(system__tenant=tenant).values_list("pk", "key")
        ),
        PointsTrigger: triggers,
        Achievement: dict(Achievement.objects.filter(tenant=tenant).values_list("pk", "name")),
        Leaderboard: dict(Leaderboard.objects.filter(tenant=tenant).values_list("pk", "key")),
    }
    state: dict[str, Any] = {}
    for model in STATE:
        rows = []
        for obj in model.objects.filter(user__tenant=tenant):  # type: ignore[attr-defined]
            row: dict[str, Any] = {}
            for field in model._meta.concrete_fields:
                if field.name in SKIPPED:
                    continue
                value = getattr(obj, field.attname)
                if field.is_relation and value is not None:
                    value = natural[field.related_model][value]  # type: ignore[index]
                row[field.name] = value
            if model is PointsAward:
                row["dedupe_key"] = _dedupe_natural(row["dedupe_key"], triggers, natural)
                row["trigger_snapshot"] = {
                    k: v
                    for k, v in row["trigger_snapshot"].items()
                    if k not in {"id", "metricId", "achievementId", "created", "updated"}
                }
            rows.append(row)
        state[model.__name__] = sorted(rows, key=repr)
    users = EndUser.objects.filter(tenant=tenant).order_by("external_id")
    state["EndUser"] = [
        (u.external_id, u.name, u.tz, u.attributes, u.last_active_at, u.last_active_on)
        for u in users
    ]
    return state


def _dedupe_natural(key: str, triggers: dict[int, str], natural: dict[Any, Any]) -> str:
    """`metric:<trigger pk>:<mark>`, `achievement:<trigger pk>:<achievement pk>`, ..."""
    kind, trigger_pk, *rest = key.split(":")
    if kind == "achievement":
        rest = [natural[Achievement][int(rest[0])]]
    return ":".join([kind, triggers[int(trigger_pk)], *rest])


def rankings(client: Any, key: str) -> list[dict[str, Any]]:
    response = client.get(f"/v1/leaderboards/{key}?limit=100")
    assert response.status_code == 200, response.content
    return [{k: r[k] for k in ("userId", "rank", "value")} for r in response.json()["rankings"]]


def test_a_batch_applies_the_same_as_one_event_at_a_time(
    api_client, other_tenant_client, tenant, other_tenant, rank_store
):
    """The same events, one at a time through event_process (tenant A) and as one batch a day
    through the grouped worker (tenant B), at the same instants: after every day, every total,
    event, streak, completion, points total and level, award, trigger mark, daily rollup and
    leaderboard entry and rank is equal, with ranks counted by PostgreSQL or kept in Redis
    (`rank_store`). Exact because no two users tie on a board and values only grow: then who
    ends on a full board, and where, does not depend on the order of users (the tie test below
    shows where it does)."""
    with time_machine.travel(DAY0, tick=False):
        configure(api_client)
        configure(other_tenant_client)
    boards: list[list[str]] = []
    for day, items in enumerate(daily_batches()):
        one_at_a_time(tenant, [[]] * day + [items])
        as_batches(other_tenant, [[]] * day + [items])
        assert snapshot(tenant) == snapshot(other_tenant), f"day {day}"
        for key in ("w", "x", "s"):
            assert rankings(api_client, key) == rankings(other_tenant_client, key), key
        boards.append([r["userId"] for r in rankings(api_client, "w")])

    # The premise of the comparison, and that it compared something.
    a = snapshot(tenant)
    assert len(a["MetricEvent"]) > 80
    assert len({user for board in boards for user in board}) > 3  # displacement happened
    for key, places in (("w", 3), ("x", 4)):
        values = [r["value"] for r in rankings(api_client, key)]
        assert len(values) == len(set(values)) == places  # full, no ties
    assert {r["length"] for r in a["StreakState"]} >= {1, 3}
    assert a["StreakLoss"]  # a streak was lost, and recorded alike
    assert {r["dedupe_key"].split(":")[0] for r in a["PointsAward"]} == {
        "metric",
        "streak",
        "user_creation",
        "achievement",
    }
    assert {r["achievement"] for r in a["AchievementCompletion"]} == {"a10", "a100"}
    assert {r["level"] for r in a["PointsTotal"]} == {None, "l50", "l200"}


def test_on_a_full_board_a_tie_is_decided_by_the_order_of_users(
    api_client, other_tenant_client, tenant, other_tenant, rank_store
):
    """The one outcome where the order of users matters. A batch's events share one instant,
    so reaching a value first cannot break a tie; on a full board a newcomer must exceed the
    lowest entry, so whoever reaches a tied value first stays. One at a time, z (1) enters,
    x (5) displaces it and z's 5 does not exceed x's; grouped, z's two events come first (z's
    first event is the batch's first) and x's 5 does not exceed z's. Both follow the rule."""
    for client in (api_client, other_tenant_client):
        with time_machine.travel(DAY0, tick=False):
            [words] = created(client, "/admin/v1/metrics", [{"name": "Words", "key": "words"}])
            board = {"name": "W", "key": "w", "rankBy": "metric", "metricId": words["id"]}
            created(client, "/admin/v1/leaderboards", [board | {"maxParticipants": 1, **ACTIVE}])
    items = [
        EventInput("words", "z", UserFields(), Decimal(1), {}),
        EventInput("words", "x", UserFields(), Decimal(5), {}),
        EventInput("words", "z", UserFields(), Decimal(4), {}),
    ]
    one_at_a_time(tenant, [items])
    as_batches(other_tenant, [items])

    assert rankings(api_client, "w") == [{"userId": "x", "rank": 1, "value": 5}]
    assert rankings(other_tenant_client, "w") == [{"userId": "z", "rank": 1, "value": 5}]
    a, b = snapshot(tenant), snapshot(other_tenant)
    assert a.pop("LeaderboardEntry") != b.pop("LeaderboardEntry")
    assert a == b  # the totals and everything else agree


def test_a_batch_takes_each_users_lock_once(tenant, metric):
    """20 events of 4 users: 4 user locks (and loads), 4 group transactions."""
    items = [EventInput("words", f"u{n % 4}", UserFields(), Decimal(n), {}) for n in range(20)]
    for n in range(4):  # existing users: each group finds its user
        event_process(tenant, EventInput("words", f"u{n}", UserFields(), Decimal(1), {}))
    events_enqueue(tenant, items)
    batch_id = QueuedEvent.objects.latest("id").batch_id

    with CaptureQueriesContext(connection) as queries:
        assert queued_events_process(str(batch_id)) == 20

    sql = [q["sql"] for q in queries.captured_queries]
    assert len([s for s in sql if 'FROM "users_enduser"' in s]) == 4
    done = [s for s in sql if s.startswith('UPDATE "pipeline_queuedevent"')]
    assert len(done) == 4  # one per group
    running = list(
        MetricEvent.objects.filter(user__external_id="u1")
        .order_by("id")
        .values_list("total_after", flat=True)
    )
    assert running == [Decimal(v) for v in (1, 2, 7, 16, 29, 46)]  # 1, then 1, 5, 9, 13, 17


def test_a_users_events_beyond_the_group_limit_go_in_further_transactions(
    tenant, metric, monkeypatch
):
    monkeypatch.setattr(batches, "GROUP_MAX_EVENTS", 3)
    items = [EventInput("words", "solo", UserFields(), Decimal(n + 1), {}) for n in range(8)]
    events_enqueue(tenant, items)
    batch_id = QueuedEvent.objects.latest("id").batch_id

    with CaptureQueriesContext(connection) as queries:
        assert queued_events_process(str(batch_id)) == 8

    sql = [q["sql"] for q in queries.captured_queries]
    assert len([s for s in sql if s.startswith('UPDATE "pipeline_queuedevent"')]) == 3
    running = MetricEvent.objects.order_by("id").values_list("total_after", flat=True)
    assert list(running) == [Decimal(sum(range(1, k + 1))) for k in range(1, 9)]


# --- failures ----------------------------------------------------------------------------------


def statuses(batch_id: Any) -> list[tuple[int, str, str]]:
    rows = QueuedEvent.objects.filter(batch_id=batch_id).order_by("seq")
    return [(r.seq, r.status, r.error) for r in rows]


def test_a_failing_event_in_the_middle_of_a_users_group_fails_only_that_row(
    api_client, tenant, metric
):
    """Accepted while u1 had an email; by the time the worker runs, u1 unsubscribed (which
    drops the email), so subscribing again fails. The event after it sets an email: applied
    to the stored user (unsubscribed: the email is not kept), as it would be alone, not to
    the loaded user the failed event had already changed."""
    event_process(
        tenant, EventInput("words", "u1", UserFields(email="a@example.com"), Decimal(1), {})
    )
    items = [
        EventInput("words", "u1", UserFields(), Decimal(2), {}),
        EventInput("words", "u2", UserFields(), Decimal(10), {}),
        EventInput("words", "u1", UserFields(subscribe_to_emails=True), Decimal(4), {}),
        EventInput("words", "u1", UserFields(email="b@example.com"), Decimal(8), {}),
    ]
    events_enqueue(tenant, items)
    batch_id = QueuedEvent.objects.latest("id").batch_id
    response = api_client.patch("/v1/users/u1", {"subscribeToEmails": False})
    assert response.status_code == 200, response.content

    assert queued_events_process(str(batch_id)) == 4

    message = "subscribeToEmails cannot be true for a user without an email"
    assert statuses(batch_id) == [
        (0, "done", ""),
        (1, "done", ""),
        (2, "failed", message),
        (3, "done", ""),
    ]
    totals = dict(MetricTotal.objects.values_list("user__external_id", "total"))
    assert totals == {"u1": Decimal(11), "u2": Decimal(10)}
    u1 = EndUser.objects.get(external_id="u1")
    assert (u1.subscribe_to_emails, u1.email) == (False, None)
    assert MetricEvent.objects.count() == 4


def test_an_event_of_a_metric_deleted_before_the_worker_ran_fails_alone(api_client, tenant, metric):
    minutes = created(api_client, "/admin/v1/metrics", [{"name": "Minutes", "key": "min"}])[0]
    items = [
        EventInput("words", "u1", UserFields(), Decimal(1), {}),
        EventInput("min", "u1", UserFields(), Decimal(30), {}),
        EventInput("words", "u1", UserFields(), Decimal(2), {}),
    ]
    events_enqueue(tenant, items)
    batch_id = QueuedEvent.objects.latest("id").batch_id
    assert api_client.delete(f"/admin/v1/metrics?ids={minutes['id']}").status_code == 200

    assert queued_events_process(str(batch_id)) == 3

    assert statuses(batch_id) == [
        (0, "done", ""),
        (1, "failed", 'Metric not found: "min"'),
        (2, "done", ""),
    ]
    running = MetricEvent.objects.order_by("id").values_list("total_after", flat=True)
    assert list(running) == [Decimal(1), Decimal(3)]


def test_an_event_failing_after_its_writes_is_undone_alone(api_client, tenant, metric, monkeypatch):
    """No step raises an application error after writing today; should one (a rule added
    later), its savepoint undoes what the event wrote, and only that. Simulated by failing the
    last step for the second event: its total, event row and points are gone, the others
    are kept."""
    [xp] = created(api_client, "/admin/v1/points", [{"name": "XP", "key": "xp"}])
    trigger = {"type": "metric", "metricId": str(metric.public_id), "metricThreshold": 1}
    created(
        api_client, f"/admin/v1/points/{xp['id']}/triggers", [trigger | {"points": 1, **ACTIVE}]
    )
    real = steps.leaderboards_step

    def failing_for_20(ctx: Any, *args: Any) -> Any:
        if ctx.value == 20:
            raise ValidationError("a rule that fails late")
        return real(ctx, *args)

    monkeypatch.setattr(steps, "leaderboards_step", failing_for_20)
    items = [EventInput("words", "u1", UserFields(), Decimal(v), {}) for v in (10, 20, 30)]
    events_enqueue(tenant, items)
    batch_id = QueuedEvent.objects.latest("id").batch_id

    assert queued_events_process(str(batch_id)) == 3

    assert [s for _, s, _ in statuses(batch_id)] == ["done", "failed", "done"]
    assert MetricTotal.objects.get().total == Decimal(40)
    assert list(MetricEvent.objects.values_list("total_after", flat=True)) == [10, 40]
    assert PointsTotal.objects.get().total == 40
    assert list(PointsAward.objects.order_by("id").values_list("awarded", flat=True)) == [10, 30]
    assert MetricDailyChange.objects.get().change == Decimal(40)
    assert PointsDailyChange.objects.get().change == 40


def deadlock() -> OperationalError:
    """What Django raises when PostgreSQL aborts a transaction to break a deadlock."""
    error = OperationalError("deadlock detected")
    error.__cause__ = psycopg.errors.DeadlockDetected("deadlock detected")
    return error


def deadlocking_at(monkeypatch: Any, user_id: str, value: int, times: int) -> None:
    """The event (user_id, value) is aborted as a deadlock the first `times` times it runs."""
    real = batches.event_apply
    left = [times]

    def apply(tenant: Any, identified: Any, config: Any, data: Any, now: Any) -> Any:
        if (data.user_id, data.value) == (user_id, value) and left[0]:
            left[0] -= 1
            raise deadlock()
        return real(tenant, identified, config, data, now)

    monkeypatch.setattr(batches, "event_apply", apply)


def enqueue(tenant: Tenant, *events: tuple[str, int]) -> Any:
    events_enqueue(
        tenant, [EventInput("words", u, UserFields(), Decimal(v), {}) for u, v in events]
    )
    return QueuedEvent.objects.latest("id").batch_id


def test_a_group_aborted_by_a_deadlock_is_run_again_at_once(tenant, metric, monkeypatch):
    """u2's group is aborted at its second event, after its first was applied: the rollback
    undoes both, and the group runs again and applies each of its events once."""
    deadlocking_at(monkeypatch, "u2", 5, times=batches.GROUP_DEADLOCK_RETRIES)
    batch_id = enqueue(tenant, ("u1", 1), ("u2", 2), ("u1", 3), ("u2", 5), ("u2", 6))

    assert queued_events_process(str(batch_id)) == 5

    assert {s for _, s, _ in statuses(batch_id)} == {"done"}
    running = MetricEvent.objects.filter(user__external_id="u2").order_by("id")
    assert list(running.values_list("total_after", flat=True)) == [2, 7, 13]
    assert MetricEvent.objects.count() == 5


def test_a_group_that_keeps_deadlocking_is_left_pending_for_the_outbox(tenant, metric, monkeypatch):
    deadlocking_at(monkeypatch, "u2", 5, times=batches.GROUP_DEADLOCK_RETRIES + 1)
    batch_id = enqueue(tenant, ("u1", 1), ("u2", 2), ("u1", 3), ("u2", 5), ("u2", 6))

    with pytest.raises(OperationalError):
        queued_events_process(str(batch_id))

    pending = [seq for seq, status, _ in statuses(batch_id) if status == "pending"]
    assert pending == [1, 3, 4]  # u2's
    assert list(MetricEvent.objects.values_list("total_after", flat=True)) == [1, 4]
    assert queued_events_process(str(batch_id)) == 3  # the outbox's next run
    assert MetricEvent.objects.count() == 5
