"""Ranks held in Redis (apps/leaderboards/ranks.py) answer exactly as PostgreSQL's counts do,
and losing Redis loses nothing: a flushed Redis, an outage, a rebuild racing with events and a
deep page all end with the ranks PostgreSQL gives."""

import datetime as dt
import random
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import redis
import time_machine
from django.db import connection, connections, transaction

from apps.leaderboards import ranks, selectors
from apps.leaderboards.models import LeaderboardEntry
from tests.conftest import RANKS_REDIS, Client, redis_answers
from tests.factories import EndUserFactory, MetricFactory, OrganizationWithKey, bump

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not redis_answers(), reason="needs Redis on 127.0.0.1:6379"),
]

START = dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC)


@pytest.fixture
def in_redis(settings: Any) -> None:
    settings.LEADERBOARD_RANKS_REDIS_URL = RANKS_REDIS
    ranks.reset()


def tenant_client(name: str) -> Client:
    with time_machine.travel(START - dt.timedelta(hours=1), tick=False):
        return _tenant_client(name)


def _tenant_client(name: str) -> Client:
    org = OrganizationWithKey(name)
    MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    client.tenant = org.tenant  # type: ignore[attr-defined]
    for key, most in (("top", 6), ("all", 1000)):
        item = {
            "name": key,
            "key": key,
            "rankBy": "metric",
            "metricId": str(org.tenant.metrics.get().public_id),
            "status": "active",
            "maxParticipants": most,
        }
        assert client.post("/admin/v1/leaderboards", [item]).status_code == 201
    return client


def send(client: Client, user: str, value: int) -> dict[str, Any]:
    response = client.post("/v1/metrics/words/event", {"user": {"id": user}, "value": value})
    assert response.status_code == 201, response.content
    boards = response.json()["leaderboards"]
    return {
        key: {f: boards[key][f] for f in ("rank", "previousRank", "threshold")} for key in boards
    }


def standings(client: Client) -> dict[str, Any]:
    """Every board's rankings and every user's rank, as the API answers them."""
    seen: dict[str, Any] = {}
    for key in ("top", "all"):
        rankings = client.get(f"/v1/leaderboards/{key}?limit=1000").json()["rankings"]
        seen[key] = [(r["userId"], r["rank"], r["value"]) for r in rankings]
        for user in [f"u{n}" for n in range(12)]:
            body = client.get(f"/v1/users/{user}/leaderboards/{key}").json()
            seen[f"{key}/{user}"] = (body.get("rank"), body.get("value"))
    return seen


def script(seed: int) -> list[tuple[str, int, int]]:
    """(user, value, seconds to move the clock): ties of value and of time included, negative
    values too, on a 6-place board that 12 users fight over."""
    rng = random.Random(seed)
    return [
        (f"u{rng.randrange(12)}", rng.choice([1, 1, 2, 3, 5, 8, -2]), rng.choice([0, 0, 1]))
        for _ in range(120)
    ]


def play(client: Client, steps: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
    answers = []
    with time_machine.travel(START, tick=False) as clock:
        for user, value, seconds in steps:
            clock.shift(dt.timedelta(seconds=seconds))
            answers.append(send(client, user, value))
    return answers


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_redis_and_postgres_give_the_same_ranks_to_every_event(settings, seed):
    steps = script(seed)
    settings.LEADERBOARD_RANKS_REDIS_URL = ""
    counted = tenant_client("Counted")
    by_counting = play(counted, steps)
    settings.LEADERBOARD_RANKS_REDIS_URL = RANKS_REDIS
    ranks.reset()
    held = tenant_client("Held")
    in_redis = play(held, steps)
    assert in_redis == by_counting
    assert standings(held) == standings(counted)
    # The set holds exactly the board's entries, in rank order, and the board is full.
    board = selectors.board_definitions(held.tenant)["top"]
    entries = selectors.ordered(board.pk, board.start, "").values_list(
        "value", "reached_at", "user_id"
    )
    assert len(entries) == 6
    assert held_members(board.pk) == [ranks.member(*entry) for entry in entries]


def held_members(board_pk: int) -> list[str]:
    conn = ranks._redis()
    assert conn is not None
    zset = ranks.RunKey(board_pk, START.date(), "").keys()[0]
    return [m for m in conn.client.zrange(zset, 0, -1) if m != ranks.MARKER]


def _compare_with_counting(client: Client, settings: Any) -> None:
    via_redis = standings(client)
    settings.LEADERBOARD_RANKS_REDIS_URL = ""
    assert via_redis == standings(client)
    settings.LEADERBOARD_RANKS_REDIS_URL = RANKS_REDIS


def test_a_flushed_redis_is_rebuilt_from_postgres(settings, in_redis):
    client = tenant_client("Flushed")
    steps = script(4)
    play(client, steps[:60])
    ranks.forget_all()  # Redis restarted without its data
    play(client, steps[60:])
    _compare_with_counting(client, settings)
    conn = ranks._redis()
    assert conn is not None
    assert any(key.endswith(":z") for key in conn.client.scan_iter(match=ranks._prefix() + "lb:*"))


@pytest.fixture
def outage(in_redis) -> Iterator[Any]:
    """Makes Redis fail for this process (`outage.start()`), then answer again (`.end()`)."""
    conn = ranks._redis()
    assert conn is not None
    scripts = {name: getattr(conn, name) for name in ("standing", "set", "page", "finish")}

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise redis.ConnectionError("connection refused")

    class Outage:
        def start(self) -> None:
            for name in scripts:
                setattr(conn, name, failing)

        def end(self) -> None:
            for name, original in scripts.items():
                setattr(conn, name, original)
            if conn.failed_at is not None:
                conn.failed_at -= ranks.RETRY_AFTER  # the retry delay has passed

    yield Outage()
    Outage().end()


def test_events_during_an_outage_count_and_the_sets_are_rebuilt_after(settings, outage):
    client = tenant_client("Outage")
    steps = script(5)
    play(client, steps[:40])
    outage.start()
    epoch_key = ranks._prefix() + "ranks:epoch"
    conn = ranks._redis()
    assert conn is not None
    epoch = int(conn.client.get(epoch_key) or 0)
    during = play(client, steps[40:80])  # PostgreSQL answers; the changes miss Redis
    assert ranks._redis() is None  # this process leaves Redis alone for a while
    assert all(answer["all"]["rank"] is not None for answer in during)
    outage.end()
    play(client, steps[80:])
    # Redis answered again: the sets that missed changes were made stale, and rebuilt.
    assert int(conn.client.get(epoch_key) or 0) == epoch + 1
    _compare_with_counting(client, settings)


def test_changes_made_while_a_set_is_rebuilt_are_kept(settings, in_redis, monkeypatch):
    client = tenant_client("Rebuilt")
    play(client, script(6)[:50])
    board = selectors.board_definitions(client.tenant)["all"]
    run = ranks.RunKey(board.pk, board.start, "")
    loaded = ranks._load
    raced = []

    def load_then_an_event(*args: Any) -> None:
        loaded(*args)
        if not raced:  # an event lands between the snapshot and the swap
            raced.append(send(client, "late", 1000))

    monkeypatch.setattr(ranks, "_load", load_then_an_event)
    assert ranks.rebuild(run, force=True)
    monkeypatch.undo()
    assert raced
    assert raced[0]["all"]["rank"] == 1
    with time_machine.travel(START + dt.timedelta(hours=1), tick=False):
        assert client.get("/v1/users/late/leaderboards/all").json()["rank"] == 1
        _compare_with_counting(client, settings)


def test_a_set_found_missing_is_rebuilt_once(settings, in_redis):
    """Two processes find the set missing; the second asks to rebuild it after the first has:
    the set is ready, and taking changes without recording them, so rebuilding it again from
    PostgreSQL would drop the change of a transaction still in flight (seen as a board
    overfilled by newcomers racing onto it)."""
    client = tenant_client("Once")
    play(client, script(9)[:30])
    board = selectors.board_definitions(client.tenant)["all"]
    run = ranks.RunKey(board.pk, board.start, "")
    ranks.reset()
    assert ranks.rebuild(run)  # the first process
    # A change made in Redis by a transaction that has not committed yet.
    in_flight = ranks.member(Decimal(1000), START, 10**9)
    ranks.change(run, [(10**9, (Decimal(1000), START))])
    assert ranks.rebuild(run)  # the second process: the set is ready
    assert held_members(board.pk)[0] == in_flight


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_a_daily_rebuild_waits_for_the_changes_in_flight(settings, in_redis):
    client = tenant_client("InFlight")
    play(client, script(10)[:30])
    board = selectors.board_definitions(client.tenant)["all"]
    run = ranks.RunKey(board.pk, board.start, "")
    user = EndUserFactory(tenant=client.tenant, external_id="late")
    written = threading.Event()

    def event_in_flight() -> None:
        try:
            with transaction.atomic():
                LeaderboardEntry.objects.create(
                    leaderboard_id=board.pk,
                    run_start=board.start,
                    group="",
                    user=user,
                    value=Decimal(1000),
                    reached_at=START,
                )
                ranks.change(run, [(user.pk, (Decimal(1000), START))])
                written.set()
                time.sleep(0.5)  # the rebuild begins meanwhile
        finally:
            connections.close_all()

    thread = threading.Thread(target=event_in_flight)
    thread.start()
    assert written.wait(10)
    assert ranks.rebuild(run, force=True)
    thread.join()
    assert held_members(board.pk)[0] == ranks.member(Decimal(1000), START, user.pk)


def test_deep_pages_come_from_redis_with_the_same_rows(settings, in_redis, monkeypatch):
    client = tenant_client("Deep")
    play(client, script(7))
    monkeypatch.setattr(selectors, "DEEP_PAGE", 2)
    from_redis = client.get("/v1/leaderboards/all?offset=3&limit=5").json()["rankings"]
    settings.LEADERBOARD_RANKS_REDIS_URL = ""
    counted = client.get("/v1/leaderboards/all?offset=3&limit=5").json()["rankings"]
    assert from_redis == counted
    assert [r["rank"] for r in counted] == [4, 5, 6, 7, 8]


def test_a_member_sorts_as_the_rankings_do():
    at = START
    later = at + dt.timedelta(microseconds=1)

    places = [
        (Decimal("10.5"), at, 3),
        (Decimal("10.5"), at, 7),
        (Decimal("10.5"), later, 1),
        (Decimal("10.499999"), at, 1),
        (Decimal("0"), at, 2),
        (Decimal("-4"), at, 5),
        (Decimal("-999999999999999999.999999"), at, 9),
    ]
    encoded = [ranks.member(*p) for p in places]
    assert sorted(encoded) == encoded
    assert [ranks.member_value(m) for m in encoded] == [p[0] for p in places]
    assert [ranks.member_user(m) for m in encoded] == [p[2] for p in places]


def test_the_snapshot_job_rebuilds_the_sets_once_a_day(settings, in_redis):
    from apps.leaderboards.jobs import leaderboards_snapshots

    client = tenant_client("Daily")
    play(client, script(8))
    board = selectors.board_definitions(client.tenant)["all"]
    truth = held_members(board.pk)
    run = ranks.RunKey(board.pk, board.start, "")
    # A change lost between PostgreSQL and Redis: the first participant is missing from Redis.
    ranks.change(run, [(ranks.member_user(truth[0]), None)])
    assert held_members(board.pk) == truth[1:]
    with time_machine.travel(START.replace(hour=12), tick=False):
        leaderboards_snapshots(START.replace(hour=12))
    assert held_members(board.pk) == truth[1:]
    with time_machine.travel(START.replace(hour=0) + dt.timedelta(days=1), tick=False):
        leaderboards_snapshots(START.replace(hour=0) + dt.timedelta(days=1))
    assert held_members(board.pk) == truth
