"""Issue 32's proof on this machine (.ci/topology starts the servers and runs these with
TOPOLOGY=1; elsewhere they are skipped): the topology itself, then the service in production
settings on it (gunicorn and management commands against the real databases, through pgbouncer
in transaction mode, never Django's test databases), including a cell move under load.

A test of a feature this checkout does not have yet (the replica router, Redis Cluster ranks,
tenant cells) is skipped with "not in this checkout"; .ci/topology accepts no other skip here.
"""

import json
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest
import redis

from tests.topology import app
from tests.topology.app import (
    absent,
    cell2_url,
    connect,
    pooled_url,
    primary_url,
    replica_url,
    value,
    wait_until,
)

pytestmark = app.needs_topology


PSQL = shutil.which("psql") or "/usr/bin/psql"


def psql(database_url: str, sql: str) -> str:
    parts = urlsplit(database_url)
    return subprocess.run(
        [PSQL, "-h", "127.0.0.1", "-p", str(parts.port), "-U", "postgres", "-d",
         parts.path.lstrip("/"), "-XAtqc", sql],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout.strip()  # fmt: skip


# The topology itself.


def test_the_replica_is_a_hot_standby_streaming_from_the_primary() -> None:
    assert value(primary_url(), "select pg_is_in_recovery()") is False
    assert value(replica_url(), "select pg_is_in_recovery()") is True
    assert value(replica_url(), "select status from pg_stat_wal_receiver") == "streaming"
    assert (
        value(primary_url(), "select count(*) from pg_stat_replication where state = 'streaming'")
        == 1
    )
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        value(replica_url(), "create table refused (x int)")


def test_a_row_written_through_pgbouncer_arrives_on_the_replica() -> None:
    token = uuid.uuid4().hex
    with connect(pooled_url()) as conn:
        conn.execute("create table if not exists topology_probe (token text)")
        conn.execute("insert into topology_probe values (%s)", (token,))

    def arrived() -> bool:
        try:
            return bool(
                value(replica_url(), "select 1 from topology_probe where token = %s", token)
            )
        except psycopg.errors.UndefinedTable:
            return False

    wait_until("the row on the replica", arrived)


def test_the_redis_cluster_has_three_masters_each_with_a_replica() -> None:
    nodes = [
        (host, int(port))
        for host, _, port in (
            node.rpartition(":")
            for node in app.url("TEST_REDIS_CLUSTER_URL").split("://", 1)[1].split(",")
        )
    ]
    cluster = redis.RedisCluster(host=nodes[0][0], port=nodes[0][1])
    try:
        assert cluster.cluster_info()["cluster_state"] == "ok"
        nodes_seen = cluster.cluster_nodes()
        roles = sorted(
            "master" if "master" in node["flags"] else "replica" for node in nodes_seen.values()
        )
        assert roles == ["master"] * 3 + ["replica"] * 3, nodes_seen
        assert all(node["connected"] for node in nodes_seen.values()), nodes_seen
        # Keys of one hash tag share a slot: one command may name them all.
        cluster.set("{topology}a", 1)
        cluster.set("{topology}b", 2)
        assert cluster.keyslot("{topology}a") == cluster.keyslot("{topology}b")
        assert cluster.mget_nonatomic(["{topology}a", "{topology}b"]) == [b"1", b"2"]
        cluster.delete("{topology}a", "{topology}b")
    finally:
        cluster.close()


# The service on the topology: gunicorn and management commands in production settings.


@pytest.fixture(scope="module")
def service() -> Iterator[tuple[str, str]]:
    """The schema migrated through pgbouncer (and on cell 2), one organization, gunicorn: its
    base URL and the organization's admin key."""
    if app.has("apps.cells"):
        app.manage("cells", "migrate")
    else:
        app.manage("migrate", "--verbosity=0")
    key = json.loads(app.manage("create_organization", "Topology", "--json"))["apiKey"]
    with app.gunicorn(CELL_DIRECTORY_CACHE_SECONDS="1") as base:
        with httpx.Client(base_url=base, headers={"X-API-KEY": key}, timeout=30) as http:
            metric = app.admin(http, "POST", "/metrics", [{"key": "words", "name": "Words"}])
            app.admin(
                http,
                "POST",
                "/leaderboards",
                [
                    {
                        "name": "Top writers",
                        "key": "top-writers",
                        "rankBy": "metric",
                        "metricId": metric["id"],
                        "status": "active",
                    }
                ],
            )
        yield base, key


@pytest.fixture
def http(service: tuple[str, str]) -> Iterator[httpx.Client]:
    base, key = service
    with httpx.Client(base_url=base, headers={"X-API-KEY": key}, timeout=30) as client:
        yield client


def test_the_schema_migrated_through_pgbouncer_is_on_the_replica(service: Any) -> None:
    applied = value(primary_url(), "select count(*) from django_migrations")
    assert applied > 50
    wait_until(
        "the migrations on the replica",
        lambda: value(replica_url(), "select count(*) from django_migrations") == applied,
    )


def test_events_through_the_service_are_on_the_replica_exactly(http: httpx.Client) -> None:
    for value_ in (5, 7, 11):
        response = http.post(
            "/v1/metrics/words/event", json={"user": {"id": "replicated"}, "value": value_}
        )
        assert response.status_code == 201, response.text
    assert app.user_total(http, "replicated") == 23
    sql = (
        "select t.total from metrics_metrictotal t join users_enduser u on u.id = t.user_id"
        " where u.external_id = 'replicated'"
    )
    wait_until("the total on the replica", lambda: value(replica_url(), sql) == Decimal(23))


def test_ranks_are_kept_in_the_redis_cluster(http: httpx.Client) -> None:
    cluster_url = app.url("LEADERBOARD_RANKS_REDIS_URL")
    if "+cluster://" not in cluster_url:
        pytest.skip(absent("ranks on Redis Cluster"))
    for user, amount in (("r1", 30), ("r2", 10), ("r3", 20)):
        response = http.post(
            "/v1/metrics/words/event", json={"user": {"id": user}, "value": amount}
        )
        assert response.status_code == 201, response.text

    def ordered() -> list[str]:
        # The page may come from the replica, a moment behind (the replica router).
        response = http.get("/v1/leaderboards/top-writers")
        assert response.status_code == 200, response.text
        rankings = [row["userId"] for row in response.json()["rankings"]]
        return [user for user in rankings if user in ("r1", "r2", "r3")]

    wait_until("the board's order", lambda: ordered() == ["r1", "r3", "r2"])
    keys: list[bytes] = []
    for node in cluster_url.split("://", 1)[1].split(","):
        host, _, port = node.rpartition(":")
        with redis.Redis(host=host, port=int(port)) as one:
            if one.info("replication")["role"] == "master":
                keys += one.keys(f"gamify-topology-{app.RUN_ID}:*")
    assert keys, "no rank set in the cluster"


def test_the_service_went_through_pgbouncer_in_transaction_mode(http: httpx.Client) -> None:
    # The application's URL is the pooler's (and cell 2's too), not a primary's.
    pooled = [pooled_url(), app.url("CELL_DATABASE_URLS").partition("=")[2]]
    assert urlsplit(pooled[0]).port != urlsplit(primary_url()).port
    assert urlsplit(pooled[1]).port != urlsplit(cell2_url()).port
    response = http.get("/v1/users/replicated/metrics/words")
    assert response.status_code in (200, 404), response.text
    for url in pooled:
        console = f"postgres://postgres@127.0.0.1:{urlsplit(url).port}/pgbouncer"
        assert "pool_mode|transaction|" in psql(console, "show config")
    # The pool the service used: the application's database, in transaction mode.
    pools = [line.split("|") for line in psql(
        f"postgres://postgres@127.0.0.1:{urlsplit(pooled[0]).port}/pgbouncer", "show pools"
    ).splitlines()]  # fmt: skip
    database = urlsplit(pooled[0]).path.lstrip("/")
    assert any(row[0] == database and row[-1] == "transaction" for row in pools), pools


# The replica router on a real streaming replica (the replicas feature): a lag-tolerant read
# (a leaderboard page) comes from the replica, stale while the replica lags a little; the user
# who just wrote reads the primary; past DATABASE_REPLICA_MAX_LAG_SECONDS, and with the replica
# dead, every read goes to the primary.

ORDER_SQL = (
    "select u.external_id from leaderboards_leaderboardentry e"
    " join users_enduser u on u.id = e.user_id where u.external_id = %s"
)


RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"


def replica_pg(*args: str) -> None:
    subprocess.run(
        [RUNUSER, "-u", "postgres", "--", f"{app.url('PGBIN')}/pg_ctl", "-D",
         app.url("TOPOLOGY_REPLICA_DATA"), "-w", "-t", "60", *args],
        check=True, capture_output=True, timeout=90,
    )  # fmt: skip


def replica_caught_up() -> bool:
    lsn = value(primary_url(), "select pg_current_wal_lsn()::text")
    return bool(
        value(replica_url(), "select pg_last_wal_replay_lsn() >= %s::pg_lsn", lsn)
        and value(replica_url(), "select not pg_is_wal_replay_paused()")
    )


def board_users(http: httpx.Client) -> list[str]:
    response = http.get("/v1/leaderboards/top-writers")
    assert response.status_code == 200, response.text
    return [row["userId"] for row in response.json()["rankings"]]


def post(http: httpx.Client, user: str, amount: int) -> None:
    response = http.post("/v1/metrics/words/event", json={"user": {"id": user}, "value": amount})
    assert response.status_code == 201, response.text


def test_lag_tolerant_reads_come_from_the_replica_until_it_lags_too_much(
    http: httpx.Client,
) -> None:
    if not app.has("apps.core.replicas"):
        pytest.skip(absent("the replica router"))
    max_lag = 3  # DATABASE_REPLICA_MAX_LAG_SECONDS's default
    for attempt in range(3):
        user = f"lagging-{attempt}"
        # The replica has replayed everything up to a fresh commit, then stops replaying: its
        # lag grows from now, and stays under max_lag for about that long.
        post(http, f"warm-{attempt}", 1)
        wait_until("the replica caught up", replica_caught_up)
        paused_at = time.monotonic()
        value(replica_url(), "select pg_wal_replay_pause()")
        try:
            post(http, user, 1000)
            # Whoever wrote reads what they wrote: the user's own read goes to the primary.
            assert app.user_total(http, user) == 1000
            seen = board_users(http)
            if time.monotonic() - paused_at > max_lag - 1:
                continue  # too slow a machine to be inside the window: once more
            # The board's page came from the replica, which has not the new entry yet ...
            assert user not in seen, seen
            assert value(replica_url(), ORDER_SQL, user) is None
            # ... until the replica lags more than max_lag: then the primary answers, while
            # the replica still has not replayed it.
            wait_until("the primary read past max lag", lambda u=user: u in board_users(http), 15)
            assert value(replica_url(), ORDER_SQL, user) is None
            assert value(replica_url(), "select pg_is_wal_replay_paused()") is True
            break
        finally:
            value(replica_url(), "select pg_wal_replay_resume()")
            wait_until("the replica caught up", replica_caught_up, 30)
    else:
        pytest.fail("no attempt read the board within the replica's lag window")
    # Caught up again, the replica serves the board with the new entry.
    assert user in board_users(http)


def test_a_dead_replica_sends_every_read_to_the_primary(http: httpx.Client) -> None:
    if not app.has("apps.core.replicas"):
        pytest.skip(absent("the replica router"))
    replica_pg("stop", "-m", "fast")
    try:
        post(http, "while-dead", 500)
        for _ in range(3):  # every request answered, each with what the primary holds
            assert "while-dead" in board_users(http)
            assert app.user_total(http, "while-dead") == 500
    finally:
        replica_pg("start", "-l", f"{app.url('TOPOLOGY_RUN_DIR')}/logs/replica.log")
    wait_until(
        "streaming again",
        lambda: value(replica_url(), "select status from pg_stat_wal_receiver") == "streaming",
        30,
    )
    wait_until("the replica caught up", replica_caught_up, 30)
    # Back, it is read again: its entry for the user is there.
    assert value(replica_url(), ORDER_SQL, "while-dead") == "while-dead"


# A cell move under load, in production settings: gunicorn's processes take events for the
# organization without pause while `manage.py cells move` (another process) copies it to cell 2's
# primary, makes it read-only, catches up and switches; afterwards every event accepted counts
# exactly once, in cell 2, and nothing of it is left in the first cell.

EVENTS_SQL = (
    "select count(*), coalesce(sum(e.value), 0) from metrics_metricevent e"
    " join accounts_tenant t on t.id = e.tenant_id"
    " join accounts_environment v on v.id = t.environment_id"
    " join accounts_organization o on o.id = v.organization_id where o.public_id = %s"
)
TOTALS_SQL = (
    "select coalesce(sum(m.total), 0) from metrics_metrictotal m"
    " join accounts_tenant t on t.id = m.tenant_id"
    " join accounts_environment v on v.id = t.environment_id"
    " join accounts_organization o on o.id = v.organization_id where o.public_id = %s"
)


def test_a_cell_move_under_load_keeps_every_total_exact(service: tuple[str, str]) -> None:
    if not app.has("apps.cells.move"):
        pytest.skip(absent("tenant cells' move"))
    base, _ = service
    created = json.loads(app.manage("create_organization", "Mover", "--json"))
    organization, key = created["organization"]["id"], created["apiKey"]
    with httpx.Client(base_url=base, headers={"X-API-KEY": key}, timeout=30) as http:
        app.admin(http, "POST", "/metrics", [{"key": "words", "name": "Words"}])
        users = [f"mover-{n}" for n in range(8)]
        load = app.Load(base, key, users).start()
        try:
            wait_until("events before the move", lambda: load.total() >= 100, 60)
            moved = app.manage(
                "cells", "move", organization, "--to", "cell2", CELL_DIRECTORY_CACHE_SECONDS="1"
            )
            after_move = load.total()
            wait_until("events after the move", lambda: load.total() >= after_move + 100, 60)
        finally:
            load.stop()
        assert "cell2" in moved, moved
        # The switch's read-only window was real: writes were refused (503), then retried.
        assert load.refusals.get(503, 0) > 0, load.refusals
        assert set(load.refusals) <= {503}, load.refusals
        # Every accepted event exactly once, in cell 2: its events, its totals, the API's.
        expected = load.total()
        with connect(cell2_url()) as conn:
            count, summed = conn.execute(EVENTS_SQL, (organization,)).fetchone()
            totals = conn.execute(TOTALS_SQL, (organization,)).fetchone()[0]
        assert (count, summed, totals) == (expected, expected, expected)
        for user in users:
            assert app.user_total(http, user) == load.accepted.get(user, 0)
    # Nothing of it left in the first cell; the directory names cell 2.
    with connect(primary_url()) as conn:
        assert conn.execute(EVENTS_SQL, (organization,)).fetchone()[0] == 0
        cell = conn.execute(
            "select cell, read_only_since from cells_placement where organization = %s",
            (organization,),
        ).fetchone()
    assert cell == ("cell2", None)
