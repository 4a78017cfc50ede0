"""Ranks on a real Redis Cluster (LEADERBOARD_RANKS_REDIS_URL=redis+cluster://...): three masters
and three replicas started on loopback ports (tests/leaderboards/redis_cluster.py), or the cluster
TEST_REDIS_CLUSTER_URL names. Events, pages and standings answer as on one Redis node and as
PostgreSQL's counts; a set rebuilds on the cluster; a master that dies or hands over to its
replica costs no correct answer, and writes the old master never passed on are restored by the
rebuild every failover sets off. Select with `-m redis_cluster`."""

import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from apps.leaderboards import ranks, selectors
from tests.conftest import RANKS_REDIS, redis_answers
from tests.leaderboards import redis_cluster
from tests.leaderboards.test_ranks_redis import (
    play,
    script,
    send,
    standings,
    tenant_client,
)

pytestmark = [pytest.mark.django_db, pytest.mark.redis_cluster]


@pytest.fixture
def on_cluster(settings: Any, redis_cluster_session: redis_cluster.Cluster) -> Iterator[Any]:
    settings.LEADERBOARD_RANKS_REDIS_URL = redis_cluster_session.url
    ranks.reset()
    yield redis_cluster_session
    ranks.forget_all()


def _conn() -> ranks._Redis:
    conn = ranks._redis()
    assert conn is not None
    assert conn.cluster is not None
    return conn


def held_members(run: ranks.RunKey) -> list[str]:
    """Every sub-board's members, merged in rank order."""
    conn = _conn()
    members: list[str] = []
    for sub in range(ranks.subboards()):
        members += conn.client.zrange(run.keys(sub)[0], 0, -1)
    return sorted(m for m in members if m != ranks.MARKER)


def truth(client: Any, key: str = "all") -> tuple[ranks.RunKey, list[str]]:
    board = selectors.board_definitions(client.tenant)[key]
    entries = selectors.ordered(board.pk, board.start, "").values_list(
        "value", "reached_at", "user_id"
    )
    return ranks.RunKey(board.pk, board.start, ""), [ranks.member(*e) for e in entries]


def counted(client: Any, settings: Any) -> Any:
    """The standings as PostgreSQL counts them."""
    url = settings.LEADERBOARD_RANKS_REDIS_URL
    settings.LEADERBOARD_RANKS_REDIS_URL = ""
    try:
        return standings(client)
    finally:
        settings.LEADERBOARD_RANKS_REDIS_URL = url


@pytest.mark.parametrize("subs", [1, 3])
def test_the_cluster_answers_as_one_node_and_as_postgres(settings, redis_cluster_session, subs):
    settings.LEADERBOARD_RANKS_SUBBOARDS = subs
    steps = script(11)
    stores = {"postgres": ""}
    if redis_answers():
        stores["node"] = RANKS_REDIS
    stores["cluster"] = redis_cluster_session.url
    answers, seen = {}, {}
    for name, url in stores.items():
        settings.LEADERBOARD_RANKS_REDIS_URL = url
        ranks.reset()
        client = tenant_client(name.title())
        answers[name] = play(client, steps)
        seen[name] = standings(client)
    try:
        assert answers["cluster"] == answers["postgres"]
        assert seen["cluster"] == seen["postgres"]
        if "node" in answers:
            assert answers["node"] == answers["postgres"]
        # The cluster holds the board, each ranking's keys in one slot, sub-boards apart.
        run, members = truth(client)
        assert held_members(run) == members
        conn = _conn()
        slots = [{conn.client.keyslot(key) for key in run.keys(sub)[:4]} for sub in range(subs)]
        assert all(len(slot) == 1 for slot in slots)
        assert len(set.union(*slots)) == subs
    finally:
        ranks.forget_all()


@pytest.mark.parametrize("subs", [1, 3])
def test_a_board_rebuilds_on_the_cluster(settings, on_cluster, monkeypatch, subs):
    settings.LEADERBOARD_RANKS_SUBBOARDS = subs
    client = tenant_client("Rebuilt")
    steps = script(12)
    play(client, steps[:50])
    ranks.forget_all()  # the cluster lost every set
    # (and the cluster epoch last seen: the next read of it makes every set stale; now)
    _conn().cluster_epoch(fresh=True)
    play(client, steps[50:80])
    run, members = truth(client)
    assert held_members(run) == members
    # A forced rebuild with an event landing between the read of PostgreSQL and the swap.
    loaded = ranks._load
    raced = []

    def load_then_an_event(*args: Any) -> None:
        loaded(*args)
        if not raced:
            raced.append({})  # once, even if the event's own call rebuilt a set
            raced[0] = send(client, "late", 1000)

    monkeypatch.setattr(ranks, "_load", load_then_an_event)
    assert ranks.rebuild(run, force=True)
    monkeypatch.undo()
    assert raced
    assert raced[0]["all"]["rank"] == 1
    run, members = truth(client)
    assert held_members(run) == members
    # A change lost between PostgreSQL and the cluster is restored by the daily rebuild.
    ranks.change(run, [(ranks.member_user(members[0]), None)])
    assert held_members(run) == members[1:]
    assert ranks.rebuild(run, force=True)
    assert held_members(run) == members
    assert standings(client) == counted(client, settings)


def _master_of(key: str) -> tuple[str, int]:
    node = _conn().client.get_node_from_key(key)
    return node.host, int(node.port)


def _replica_of(master: tuple[str, int]) -> tuple[str, int]:
    nodes = redis.Redis(*master, decode_responses=True).execute_command("CLUSTER NODES")
    master_id = next(node["node_id"] for node in nodes.values() if "myself" in node["flags"])
    for address, node in nodes.items():
        if node["master_id"] == master_id and "fail" not in node["flags"]:
            host, port = address.rsplit(":", 1)
            return host, int(port)
    raise AssertionError(f"no replica of {master}")


def _wait_master(node: tuple[str, int], cluster: redis_cluster.Cluster) -> None:
    deadline = time.monotonic() + 30
    client = redis.Redis(*node, decode_responses=True)
    while client.execute_command("ROLE")[0] != "master":
        assert time.monotonic() < deadline, f"{node} was not promoted"
        time.sleep(0.05)
    cluster.wait_ok()


def test_a_failover_rebuilds_the_sets_and_restores_writes_it_lost(settings, on_cluster):
    """A replica takes over from its master (CLUSTER FAILOVER): the client follows the slot's
    new owner (MOVED), and the process, seeing the cluster's epoch move, makes every set stale,
    so a write the old master had not passed on (here: removed by hand from the set) comes
    back from PostgreSQL."""
    client = tenant_client("Handover")
    steps = script(13)
    play(client, steps[:60])
    run, members = truth(client)
    zset = run.keys()[0]
    conn = _conn()
    # A write lost in the failover: the set lacks the first participant.
    conn.client.zrem(zset, members[0])
    conn.client.hdel(run.keys()[1], str(ranks.member_user(members[0])))
    assert held_members(run) == members[1:]
    replica = _replica_of(_master_of(zset))
    redis.Redis(*replica).execute_command("CLUSTER FAILOVER")
    _wait_master(replica, on_cluster)
    conn.epoch_read_at -= ranks.EPOCH_CHECK_SECONDS  # the next call reads the epoch again
    # Reads alone (no event of the lost participant to set their member right) see them.
    assert standings(client) == counted(client, settings)
    assert held_members(run) == members
    assert _master_of(zset) == replica  # the client followed the slot to its new master
    play(client, steps[60:])
    run, members = truth(client)
    assert held_members(run) == members
    assert standings(client) == counted(client, settings)


PARTS = (slice(0, 50), slice(50, 80), slice(80, None))


def test_ranks_keep_answering_when_a_master_dies(settings, on_cluster, monkeypatch):
    """A master is killed mid-play: while its replica is not yet promoted the events are ranked
    by PostgreSQL (the calls fail), after it by the cluster again, with the sets rebuilt; every
    answer is the one PostgreSQL's counts give."""
    if not on_cluster.own:
        pytest.skip("kills a node: only on a cluster this session started")
    monkeypatch.setattr(ranks, "RETRY_AFTER", 0.2)
    steps = script(14)
    settings.LEADERBOARD_RANKS_REDIS_URL = ""
    counting = tenant_client("Counted")
    # In the same three plays as below (each starts its clock at START).
    by_counting = [answer for part in PARTS for answer in play(counting, steps[part])]
    settings.LEADERBOARD_RANKS_REDIS_URL = on_cluster.url
    client = tenant_client("Killed")
    answers = play(client, steps[PARTS[0]])
    run, _ = truth(client)
    master = _master_of(run.keys()[0])
    replica = _replica_of(master)
    victim = on_cluster.node(master[1])
    victim.kill()
    try:
        answers += play(client, steps[PARTS[1]])  # during the failover
        _wait_master(replica, on_cluster)
        time.sleep(ranks.RETRY_AFTER)
        answers += play(client, steps[PARTS[2]])
        assert answers == by_counting
        run, members = truth(client)
        assert held_members(run) == members
        assert _master_of(run.keys()[0]) == replica
        assert standings(client) == counted(client, settings)
    finally:
        on_cluster.restart(victim)


def test_a_process_whose_copy_of_the_epoch_is_old_reads_it_again(settings, on_cluster):
    """Another process moved the epoch on and rebuilt a set: this one, still holding the old
    epoch (read less than EPOCH_CHECK_SECONDS ago), is told so by the set and reads it again,
    instead of taking the new set as stale and rebuilding it once more."""
    client = tenant_client("Stale")
    play(client, script(15)[:40])
    run, _ = truth(client)
    conn = _conn()
    conn.cluster_epoch(fresh=True)  # (the first sight of the cluster's epoch moves it on)
    ranks.reset()  # "another process" moves the epoch on...
    fourth = selectors.ordered(run.board_pk, run.run_start, "")[3]
    place = (fourth.value, fourth.reached_at)
    assert ranks.rank(run, fourth.user_id, place) == 4  # ... and rebuilds the set
    current = conn.cluster_epoch()
    conn.epoch, conn.epoch_read_at = str(int(current) - 1), time.monotonic()
    rebuilt: list[Any] = []
    original = ranks.rebuild

    def rebuild(*args: Any, **kwargs: Any) -> bool:
        rebuilt.append(args)
        return original(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranks, "rebuild", rebuild)
        assert ranks.rank(run, fourth.user_id, place) == 4
    assert rebuilt == []
    assert conn.epoch == current
    assert conn.failed_at is None
