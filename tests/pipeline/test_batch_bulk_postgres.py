"""Batches in bulk (apps/pipeline/bulk.py), on PostgreSQL: the same random stream of events sent
one at a time and as batches leaves every table the same, with most of each batch applied in
bulk; what bulk does not take (user fields, crowded boards, a row already there) goes the
grouped way and still ends the same."""

import datetime as dt
import random
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.pipeline import batches, bulk
from apps.pipeline.services import EventInput
from apps.points.models import PointsTriggerMark
from apps.users.domain import UserFields
from apps.webhooks.models import WebhookEndpoint
from tests.concurrency import POSTGRES_ONLY
from tests.factories import bump
from tests.pipeline import test_batch_grouped as grouped
from tests.pipeline.test_batch_grouped import (
    ACTIVE,
    DAY0,
    DAYS,
    as_batches,
    created,
    one_at_a_time,
    points_configured,
    rankings,
    snapshot,
)

pytestmark = [*POSTGRES_ONLY, pytest.mark.django_db]

USERS = [f"u{n}" for n in range(40)]


def configure(client: Any) -> None:
    """Every feature the bulk path computes, on metric `words`: a daily streak with freezes; XP
    (a point a word, 50 at 500, 20 at a 3-day streak) and coins (one per 10 words, 5 on
    creation, 7 for the 100-words achievement) with levels and a global boost; achievements at
    10, 100 and 1000 words and a composite of the first two; boards with room on words, XP and
    streaks, one broken down by an attribute and one counting only a daily window. A second
    metric, `m`, has only its total."""
    words, _ = created(
        client, "/admin/v1/metrics", [{"name": "Words", "key": "words"}, {"name": "M", "key": "m"}]
    )
    [team] = created(
        client, "/admin/v1/attributes", [{"name": "Team", "key": "team", "type": "user"}]
    )
    response = client.patch(
        "/admin/v1/streaks/settings",
        {
            "frequency": "daily",
            "metrics": [{"key": "words", "threshold": 5}],
            "freezes": {"startCount": 1, "maxCount": 2},
        },
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
    created(
        client,
        "/admin/v1/achievements",
        [
            {"name": "both", "trigger": "achievement", **ACTIVE}
            | {"achievementIds": [achievements[0]["id"], achievements[1]["id"]]}
        ],
    )
    xp, coins = points_configured(client, words, achievements)
    created(
        client,
        f"/admin/v1/points/{coins['id']}/boosts",
        [{"name": "Double", "start": "2026-03-03", "end": "2026-03-04", "multiplier": 2}],
    )
    board = {"start": "2026-03-01", "maxParticipants": 1000, **ACTIVE}
    words_board = {"rankBy": "metric", "metricId": words["id"], **board}
    created(
        client,
        "/admin/v1/leaderboards",
        [
            {"name": "W", "key": "w", **words_board},
            {"name": "X", "key": "x", "rankBy": "points", "pointsSystemId": xp["id"], **board},
            {"name": "S", "key": "s", "rankBy": "streak", **board},
            {"name": "T", "key": "t", "breakdownAttributes": [team["id"]], **words_board},
            {"name": "Noon", "key": "noon", "startTime": "11:00", "endTime": "13:00"} | words_board,
        ],
    )


def stream(seed: int, fields_rate: float) -> list[list[EventInput]]:
    """One batch a day for DAYS: 40 users, 150 events a day, users joining over the days and
    skipping some (streaks lost, a freeze used), replays by idempotency key within and across
    batches, a second metric, now and then an event with user fields (`fields_rate`)."""
    rng = random.Random(seed)
    days: list[list[EventInput]] = []
    for day in range(len(DAYS)):
        active = USERS[: 20 + 7 * day]
        skipping = set(rng.sample(active, 5))
        items: list[EventInput] = []
        for _ in range(150):
            user = rng.choice(active)
            if user in skipping:
                continue
            fields = UserFields()
            if rng.random() < fields_rate:
                fields = replace(fields, attributes={"team": rng.choice("ab")})
            key = f"k{rng.randrange(6)}" if rng.random() < 0.15 else None
            metric = "m" if rng.random() < 0.1 else "words"
            value = Decimal(rng.randint(0, 40)) + Decimal(USERS.index(user)) / 1000
            items.append(EventInput(metric, user, fields, value, {}, key))
        days.append(items)
    return days


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts what each way applied: events in bulk, users the grouped way, chunks sent back."""
    counts = {"bulk": 0, "slow users": 0, "not in bulk": 0}
    chunk_apply, slow_apply = bulk.chunk_apply, batches._group_apply

    def counted_chunk(tenant: Tenant, rows: list[Any], slow: Any) -> bulk.ChunkResult:
        try:
            result = chunk_apply(tenant, rows, slow)
        except bulk.NotInBulk:
            counts["not in bulk"] += 1
            raise
        counts["bulk"] += len(result.done)
        return result

    def counted_slow(tenant: Tenant, rows: list[Any]) -> bulk.ChunkResult:
        counts["slow users"] += 1
        return slow_apply(tenant, rows)

    monkeypatch.setattr(bulk, "chunk_apply", counted_chunk)
    monkeypatch.setattr(batches, "_group_apply", counted_slow)
    return counts


def differences(single: dict[str, Any], batched: dict[str, Any]) -> dict[str, Any]:
    """The rows of each table that only one side has (a failure's message)."""
    found = {}
    for table, rows in single.items():
        one, other = {repr(r) for r in rows}, {repr(r) for r in batched[table]}
        if one != other:
            found[table] = {"single": sorted(one - other)[:3], "batch": sorted(other - one)[:3]}
    return found


def compare(
    api_client: Any,
    other_tenant_client: Any,
    tenant: Tenant,
    other_tenant: Tenant,
    days: list[list[EventInput]],
    boards: tuple[str, ...] = ("w", "x", "s", "noon"),
) -> dict[str, Any]:
    """Send `days` one at a time to `tenant` and as batches to `other_tenant`, and compare
    everything after each day, and the rankings of `boards` (t needs a group: its entries are
    compared with the rest)."""
    with time_machine.travel(DAY0, tick=False):
        configure(api_client)
        configure(other_tenant_client)
    for day, items in enumerate(days):
        one_at_a_time(tenant, [[]] * day + [items])
        as_batches(other_tenant, [[]] * day + [items])
        single, batched = state_of(tenant), state_of(other_tenant)
        assert single == batched, f"day {day}: {differences(single, batched)}"
        for key in boards:
            assert rankings(api_client, key) == rankings(other_tenant_client, key), key
    return state_of(tenant)


def state_of(tenant: Tenant) -> dict[str, Any]:
    """test_batch_grouped's snapshot, the boosts in awards without their ids (each tenant
    has its own boost)."""
    state = snapshot(tenant)
    for award in state["PointsAward"]:
        award["boosts"] = [{k: v for k, v in b.items() if k != "id"} for b in award["boosts"]]
    return state


def test_a_random_stream_applied_in_bulk_ends_as_one_event_at_a_time(
    api_client, other_tenant_client, tenant, other_tenant, rank_store, spy
):
    days = stream(seed=25, fields_rate=0.0)
    state = compare(api_client, other_tenant_client, tenant, other_tenant, days)

    sent = sum(len(items) for items in days)
    assert spy == {"bulk": sent, "slow users": 0, "not in bulk": 0}
    # The premise: the comparison covered what bulk computes.
    assert len(state["MetricEvent"]) < sent  # replays applied nothing
    assert {r["length"] for r in state["StreakState"]} >= {1, 2, 3}
    assert any(r["used_freeze"] for r in state["StreakPeriod"])
    assert {r["dedupe_key"].split(":")[0] for r in state["PointsAward"]} == {
        "metric",
        "streak",
        "user_creation",
        "achievement",
    }
    assert any(r["boosts"] for r in state["PointsAward"])
    assert {r["achievement"] for r in state["AchievementCompletion"]} >= {"a10", "a100", "both"}
    assert {r["level"] for r in state["PointsTotal"]} >= {None, "l50", "l200"}
    assert {r["leaderboard"] for r in state["LeaderboardEntry"]} == {"w", "x", "s", "noon"}


def test_newcomers_to_full_boards_go_the_grouped_way_and_end_the_same(
    api_client, other_tenant_client, tenant, other_tenant, rank_store, spy
):
    """test_batch_grouped's stream on tiny boards (3 and 4 places: newcomers displace the
    lowest), in bulk: whoever would enter a full board goes the grouped way after the chunk's
    others, and every table and ranking ends as one event at a time (no two users tie)."""
    with time_machine.travel(DAY0, tick=False):
        grouped.configure(api_client)
        grouped.configure(other_tenant_client)
    for day, items in enumerate(grouped.daily_batches()):
        one_at_a_time(tenant, [[]] * day + [items])
        as_batches(other_tenant, [[]] * day + [items])
        single, batched = snapshot(tenant), snapshot(other_tenant)
        assert single == batched, f"day {day}: {differences(single, batched)}"
        for key in ("w", "x", "s"):
            assert rankings(api_client, key) == rankings(other_tenant_client, key), key
    assert spy["slow users"] > 0
    assert spy["bulk"] > 0
    assert spy["not in bulk"] == 0


def test_users_sending_fields_go_the_grouped_way_in_the_same_chunk(
    api_client, other_tenant_client, tenant, other_tenant, spy
):
    """Events with user fields (here a team that moves users between a board's groups) are
    applied event by event after the chunk's other users; the end is the same. Only the
    boards whose values never tie have the same rankings: the users such a chunk creates get
    their ids (which break a tie at one instant) those of the grouped way last."""
    days = stream(seed=7, fields_rate=0.05)
    state = compare(api_client, other_tenant_client, tenant, other_tenant, days, ("w", "noon"))
    assert "t" in {r["leaderboard"] for r in state["LeaderboardEntry"]}
    assert spy["slow users"] > 0
    assert spy["bulk"] > 3 * spy["slow users"]
    assert spy["not in bulk"] == 0


def test_a_chunk_meeting_an_award_already_paid_is_applied_the_grouped_way(
    api_client, other_tenant_client, tenant, other_tenant, spy
):
    """Trigger marks lost (a rolled back write) make the batch pay awards again: the
    dedupe key refuses it, the chunk rolls back and goes the grouped way, whose ledger keeps
    only the awards inserted: the same as one event at a time with the same mark lost."""
    days = stream(seed=3, fields_rate=0.0)[:2]
    with time_machine.travel(DAY0, tick=False):
        configure(api_client)
        configure(other_tenant_client)
    one_at_a_time(tenant, days[:1])
    as_batches(other_tenant, days[:1])
    for t in (tenant, other_tenant):
        PointsTriggerMark.objects.filter(user__tenant=t).delete()
    one_at_a_time(tenant, [[], days[1]])
    as_batches(other_tenant, [[], days[1]])
    assert state_of(tenant) == state_of(other_tenant)
    assert spy["not in bulk"] == 1


def test_a_tenant_with_a_webhook_endpoint_is_not_applied_in_bulk(tenant, settings):
    assert bulk.bulk_ready(tenant)
    WebhookEndpoint.objects.create(tenant=tenant, url="http://127.0.0.1:9/hook", status="active")
    bump(tenant)
    assert not bulk.bulk_ready(tenant)


def test_a_chunk_of_events_accepted_at_different_instants_is_not_applied_in_bulk(tenant, metric):
    first = DAYS[0]
    rows = []
    for n, at in enumerate((first, first + dt.timedelta(seconds=1))):
        row = batches.QueuedEvent(tenant=tenant, seq=n, accepted_at=at, payload={"userId": "u"})
        rows.append(row)
    with pytest.raises(bulk.NotInBulk):
        bulk.chunk_apply(tenant, rows, batches._group_apply)
