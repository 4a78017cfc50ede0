"""Reads that may lag go to a replica, under the rule of apps/core/replicas.py; each rule has its
test here. The replica is a second connection to the test database (what Django's TEST MIRROR
makes of a replica alias in the suite), so the tests commit (transaction=True): a replica never
sees a transaction in flight, and neither does a second connection. A dead replica is an alias
whose database cannot be reached; a lagging one answers the lag query with a large figure."""

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection, connections, transaction
from django.db.utils import load_backend
from django.test import Client as DjangoClient
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.core import replicas
from apps.core.replicas import lag_tolerant, primary_reads, read_alias, read_connection
from apps.metrics.models import Metric
from apps.users.models import EndUser
from tests.conftest import Client
from tests.factories import MetricFactory, OrganizationWithKey, bump

pytestmark = pytest.mark.django_db(transaction=True)

MIRROR = "test_mirror"
DEAD = "test_dead_replica"


def _alias_add(alias: str, **changes: Any) -> None:
    """A database alias made while the test runs, as the settings make a replica's: the test
    database's settings with `changes`. Made in this thread only, as Django lets a test make
    connections of its own."""
    settings_dict = {**connections["default"].settings_dict, **changes}
    settings_dict["OPTIONS"] = dict(settings_dict.get("OPTIONS", {}))
    backend = load_backend(settings_dict["ENGINE"])
    setattr(connections._connections, alias, backend.DatabaseWrapper(settings_dict, alias))


def _alias_remove(alias: str) -> None:
    if hasattr(connections._connections, alias):
        getattr(connections._connections, alias).close()
        delattr(connections._connections, alias)


@pytest.fixture
def replica(settings: Any) -> Iterator[str]:
    """The default cell with one replica: a second connection to the test database."""
    _alias_add(MIRROR)
    settings.DATABASE_REPLICAS = {"default": [MIRROR]}
    replicas.health_reset()
    cache.clear()
    replicas.work_begins()
    yield MIRROR
    replicas.health_reset()
    _alias_remove(MIRROR)


@pytest.fixture
def dead(settings: Any) -> Iterator[str]:
    """A replica alias that does not answer: a closed port, or on SQLite a file that cannot be
    opened."""
    if connection.vendor == "postgresql":
        _alias_add(DEAD, HOST="127.0.0.1", PORT=1, CONN_MAX_AGE=0)
        connections[DEAD].settings_dict["OPTIONS"]["connect_timeout"] = 1
    else:
        _alias_add(DEAD, NAME="/nonexistent-directory/replica.sqlite3")
    replicas.health_reset()
    yield DEAD
    replicas.health_reset()
    _alias_remove(DEAD)


# --- the rule, through the router ----------------------------------------------------------


def test_reads_outside_a_lag_tolerant_scope_go_to_the_primary(replica: str) -> None:
    assert read_alias() == "default"
    assert Metric.objects.all().db == "default"


def test_reads_inside_a_lag_tolerant_scope_go_to_the_replica(replica: str) -> None:
    with lag_tolerant():
        assert read_alias() == replica
        assert Metric.objects.all().db == replica
        assert read_connection().alias == replica
    assert read_alias() == "default"


def test_without_replicas_every_read_goes_to_the_primary(settings: Any) -> None:
    settings.DATABASE_REPLICAS = {"default": []}
    replicas.work_begins()
    with lag_tolerant():
        assert read_alias() == "default"


def test_a_write_sends_the_later_reads_of_the_work_to_the_primary(replica: str) -> None:
    tenant = OrganizationWithKey("Acme").tenant
    replicas.work_begins()
    with lag_tolerant():
        assert read_alias() == replica
        MetricFactory(tenant=tenant, key="words")  # through the router's db_for_write
        assert read_alias() == "default"
    replicas.work_begins()  # the next request
    with lag_tolerant():
        assert read_alias() == replica


def test_a_hand_written_write_in_the_scope_sends_the_later_reads_to_the_primary(
    replica: str,
) -> None:
    OrganizationWithKey("Acme")
    replicas.work_begins()
    with lag_tolerant():
        assert read_alias() == replica
        with connection.cursor() as cursor:  # the primary's, as the hot path's statements
            cursor.execute("SELECT 1")
        assert read_alias() == replica  # a read is no write
        with connection.cursor() as cursor:
            cursor.execute("UPDATE accounts_tenant SET name = name WHERE id = -1")
        assert read_alias() == "default"


def test_a_celery_task_begins_having_written_nothing(replica: str) -> None:
    from celery.signals import task_prerun

    OrganizationWithKey("Acme")  # the worker's thread wrote for an earlier task
    with lag_tolerant():
        assert read_alias() == "default"
    task_prerun.send(sender=None, task_id="t", task=None, args=(), kwargs={})
    with lag_tolerant():
        assert read_alias() == replica


def test_writes_are_always_routed_to_the_primary(replica: str) -> None:
    tenant = OrganizationWithKey("Acme").tenant
    metric = MetricFactory(tenant=tenant, key="words")
    replicas.work_begins()
    with lag_tolerant():
        read = Metric.objects.get(pk=metric.pk)
        assert read._state.db == replica
        read.name = "Words read from the replica"
        read.save()  # not to the replica, which would refuse it
    assert Metric.objects.get(pk=metric.pk).name == "Words read from the replica"
    assert read._state.db == "default"  # it was saved to the primary
    read._state.db = replica
    assert replicas.ReplicaRouter().db_for_write(Metric, instance=read) == "default"


def test_reads_inside_a_transaction_go_to_the_primary(replica: str) -> None:
    with lag_tolerant():
        with transaction.atomic():
            assert read_alias() == "default"
        assert read_alias() == replica


def test_primary_reads_hold_inside_a_lag_tolerant_scope(replica: str) -> None:
    with lag_tolerant():
        with primary_reads():
            assert read_alias() == "default"
            with lag_tolerant():  # an inner declaration does not undo it
                assert read_alias() == "default"
        assert read_alias() == replica


def test_a_user_written_within_the_window_is_read_from_the_primary(replica: str) -> None:
    tenant = OrganizationWithKey("Acme").tenant
    replicas.users_written(tenant.pk, ["ann"])  # outside a transaction: at once
    replicas.work_begins()
    with lag_tolerant():
        replicas.user_read(tenant.pk, "bob")
        assert read_alias() == replica
        replicas.user_read(tenant.pk, "ann")
        assert read_alias() == "default"
    with lag_tolerant():  # another tenant's "ann" is another user
        replicas.user_read(tenant.pk + 1, "ann")
        assert read_alias() == replica


def test_a_user_is_marked_when_written_and_again_when_the_request_ends(
    board: Any, replica: str, monkeypatch: Any
) -> None:
    _, client = board
    marks: list[tuple[list[str], bool]] = []
    set_many = cache.set_many

    def recorded(data: dict[str, Any], timeout: Any = None) -> Any:
        marks.append((list(data), connection.in_atomic_block))
        return set_many(data, timeout=timeout)

    monkeypatch.setattr(cache, "set_many", recorded)
    assert client.post("/v1/metrics/words/event", {"user": {"id": "ann"}, "value": 1}).status_code
    key = replicas._key("user", board[0].tenant.pk, "ann")
    assert [keys for keys, _ in marks] == [[key], [key]]
    assert marks[0][1] is True  # under the user's lock: reads of ann go to the primary at once
    assert marks[1][1] is False  # after the commit: the window runs from there


def test_the_mark_lasts_the_stickiness_window(replica: str, settings: Any, monkeypatch) -> None:
    tenant = OrganizationWithKey("Acme").tenant
    set_many = []
    monkeypatch.setattr(cache, "set_many", lambda data, timeout: set_many.append(timeout))
    replicas.users_written(tenant.pk, ["ann"])
    assert set_many == [settings.DATABASE_REPLICA_STICKY_SECONDS]


def test_the_lock_of_a_user_marks_them_written(replica: str) -> None:
    from apps.users.services import user_lock

    tenant = OrganizationWithKey("Acme").tenant
    EndUser.objects.create(tenant=tenant, external_id="ann")
    with transaction.atomic():
        user_lock(tenant, "ann")
    with lag_tolerant():
        replicas.user_read(tenant.pk, "ann")
        assert read_alias() == "default"


# --- a replica's health ------------------------------------------------------------------------


def test_a_dead_replica_is_skipped_and_logged_once(
    dead: str, settings: Any, caplog: Any, monkeypatch: Any
) -> None:
    settings.DATABASE_REPLICAS = {"default": [dead]}
    monkeypatch.setattr(replicas, "DEAD_CHECK_SECONDS", 0.0)  # asked again on every read
    caplog.set_level(logging.WARNING, logger="gamify.replicas")
    for _ in range(3):
        replicas.work_begins()
        with lag_tolerant():
            assert read_alias() == "default"
            assert Metric.objects.count() == 0  # served by the primary
    assert replicas.replica_state(dead) == "down"
    lines = [r.getMessage() for r in caplog.records if r.name == "gamify.replicas"]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"replica {dead} does not answer")


def test_a_dead_replica_leaves_the_healthy_one_in_use(
    dead: str, replica: str, settings: Any
) -> None:
    settings.DATABASE_REPLICAS = {"default": [dead, replica]}
    with lag_tolerant():
        assert read_alias() == replica


def test_a_lagging_replica_is_skipped_until_it_catches_up(
    replica: str, settings: Any, caplog: Any, monkeypatch: Any
) -> None:
    lag = {"seconds": settings.DATABASE_REPLICA_MAX_LAG_SECONDS + 10.0}
    monkeypatch.setattr(replicas, "replica_lag", lambda alias: lag["seconds"])
    monkeypatch.setattr(replicas, "CHECK_SECONDS", 0.0)
    caplog.set_level(logging.WARNING, logger="gamify.replicas")
    for _ in range(2):
        with lag_tolerant():
            assert read_alias() == "default"
    assert replicas.replica_state(replica) == "lagging"
    lag["seconds"] = 0.0
    with lag_tolerant():
        assert read_alias() == replica
    lines = [r.getMessage() for r in caplog.records if r.name == "gamify.replicas"]
    assert len(lines) == 2, lines  # one when it fell behind, one when it caught up
    assert "lags beyond" in lines[0]
    assert "usable again" in lines[1]


def test_a_scope_keeps_its_replica_and_never_goes_back_to_one(
    replica: str, settings: Any, monkeypatch: Any
) -> None:
    _alias_add("test_mirror_2")
    settings.DATABASE_REPLICAS = {"default": [replica, "test_mirror_2"]}
    lag = {"seconds": 0.0}
    monkeypatch.setattr(replicas, "replica_lag", lambda alias: lag["seconds"])
    monkeypatch.setattr(replicas, "CHECK_SECONDS", 0.0)
    try:
        with lag_tolerant():
            chosen = read_alias()
            assert chosen in (replica, "test_mirror_2")
            assert {read_alias() for _ in range(10)} == {chosen}  # its reads never go back
            lag["seconds"] = 100.0
            assert read_alias() == "default"
            lag["seconds"] = 0.0
            assert read_alias() == "default"  # the primary, for the rest of the scope
        with lag_tolerant():
            assert read_alias() in (replica, "test_mirror_2")
    finally:
        _alias_remove("test_mirror_2")


def test_the_health_of_a_replica_is_asked_at_most_once_a_second(
    replica: str, monkeypatch: Any
) -> None:
    asked = []
    monkeypatch.setattr(replicas, "replica_lag", lambda alias: asked.append(alias) or 0.0)
    for _ in range(5):
        replicas.work_begins()
        with lag_tolerant():
            read_alias()
    assert asked == [replica]


def test_the_lag_of_a_replica_is_read_from_the_database(replica: str) -> None:
    # The test mirror is no replica (PostgreSQL is not in recovery): no lag.
    assert replicas.replica_lag(replica) == 0.0


# --- the routes that declare lag-tolerant reads -------------------------------------------------


@pytest.fixture
def board(replica: str) -> tuple[OrganizationWithKey, Client]:
    org = OrganizationWithKey("Acme")
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    metric = MetricFactory(tenant=org.tenant, key="words", name="Words")
    bump(org.tenant)
    created = client.post(
        "/admin/v1/leaderboards",
        [
            {
                "key": "top",
                "name": "Top",
                "rankBy": "metric",
                "metricId": str(metric.public_id),
                "status": "active",
            }
        ],
    )
    assert created.status_code == 201, created.content
    for user, value in (("ann", 5), ("bob", 3)):
        body = {"user": {"id": user}, "value": value}
        assert client.post("/v1/metrics/words/event", body).status_code == 201
    cache.clear()  # the users' marks: as if the window had passed
    return org, client


def _reads(alias: str) -> CaptureQueriesContext:
    return CaptureQueriesContext(connections[alias])


def _tables(captured: CaptureQueriesContext) -> str:
    return " ".join(q["sql"] for q in captured.captured_queries)


def test_a_leaderboard_page_reads_the_replica(board: Any, replica: str) -> None:
    _, client = board
    with _reads(replica) as on_replica, _reads("default") as on_primary:
        response = client.get("/v1/leaderboards/top")
    assert response.status_code == 200
    assert [r["userId"] for r in response.json()["rankings"]] == ["ann", "bob"]
    assert "leaderboards_leaderboardentry" in _tables(on_replica)
    assert "leaderboards_leaderboardentry" not in _tables(on_primary)
    assert "accounts_apikey" in _tables(on_primary)  # the key: from the primary, always


def test_a_users_rank_reads_the_replica_unless_the_user_was_just_written(
    board: Any, replica: str
) -> None:
    _, client = board
    with _reads(replica) as on_replica:
        assert client.get("/v1/users/bob/leaderboards/top").json()["rank"] == 2
    assert "leaderboards_leaderboardentry" in _tables(on_replica)
    assert client.post("/v1/metrics/words/event", {"user": {"id": "bob"}, "value": 9}).status_code
    with _reads(replica) as on_replica, _reads("default") as on_primary:
        assert client.get("/v1/users/bob/leaderboards/top").json()["rank"] == 1
        others = client.get("/v1/leaderboards/top")  # concerns no one in particular
    assert others.status_code == 200
    assert "users_enduser" in _tables(on_primary)
    assert "leaderboards_leaderboardentry" in _tables(on_primary)
    assert _tables(on_replica).count("leaderboards_leaderboardentry") == 1  # the page's


def test_the_page_of_a_user_just_written_reads_the_primary(board: Any, replica: str) -> None:
    _, client = board
    assert client.post("/v1/metrics/words/event", {"user": {"id": "cy"}, "value": 1}).status_code
    with _reads(replica) as on_replica:
        response = client.get("/v1/leaderboards/top", {"userId": "cy"})
    assert response.status_code == 200
    assert "leaderboards_leaderboardentry" not in _tables(on_replica)


def test_writes_and_their_requests_read_the_primary(board: Any, replica: str) -> None:
    _, client = board
    with _reads(replica) as on_replica:
        assert client.post(
            "/v1/metrics/words/event", {"user": {"id": "dee"}, "value": 1}
        ).status_code
    assert "leaderboards_leaderboardentry" not in _tables(on_replica)


def test_wrapped_and_the_analytics_api_read_the_replica(board: Any, replica: str) -> None:
    _, client = board
    with _reads(replica) as on_replica:
        assert client.get("/v1/users/ann/wrapped").status_code == 200
    assert "metrics_metricevent" in _tables(on_replica) or "metrics_" in _tables(on_replica)
    for path in ("/admin/v1/analytics/overview", "/admin/v1/analytics/events"):
        with _reads(replica) as on_replica:
            assert client.get(path).status_code == 200, path
        assert on_replica.captured_queries, path
    with _reads(replica) as on_replica:
        assert client.get("/admin/ext/v1/analytics/impact").status_code == 200
    assert on_replica.captured_queries


def test_the_admin_apis_configuration_reads_the_primary(board: Any, replica: str) -> None:
    _, client = board
    with _reads(replica) as on_replica:
        assert client.get("/admin/v1/leaderboards").status_code == 200
    assert "leaderboards_leaderboard" not in _tables(on_replica)


def test_the_dashboards_lists_and_analytics_read_the_replica(board: Any, replica: str) -> None:
    from django.contrib.auth import get_user_model

    org, _ = board
    staff = get_user_model().objects.create_superuser(username="staff", password="unused")
    browser = DjangoClient()
    browser.force_login(staff)
    switched = browser.post(reverse("admin:tenant-switch"), {"tenant": org.tenant.pk})
    assert switched.status_code == 302
    cache.clear()
    with _reads(replica) as on_replica:
        assert browser.get("/dashboard/metrics/metricevent/").status_code == 200
    assert "metrics_metricevent" in _tables(on_replica)
    with _reads(replica) as on_replica:
        assert browser.get("/dashboard/analytics/").status_code == 200
    assert on_replica.captured_queries
    # A session that wrote reads the primary for the window: its next page shows its change.
    replicas.staff_wrote(staff.pk)
    with _reads(replica) as on_replica:
        assert browser.get("/dashboard/metrics/metricevent/").status_code == 200
    assert "metrics_metricevent" not in _tables(on_replica)


def test_a_rank_set_is_filled_from_the_primary(replica: str, settings: Any) -> None:
    from tests.conftest import RANKS_REDIS, redis_answers

    if not redis_answers():
        pytest.skip("needs Redis on 127.0.0.1:6379")
    import datetime as dt

    from apps.leaderboards import ranks

    settings.LEADERBOARD_RANKS_REDIS_URL = RANKS_REDIS
    ranks.reset()
    with _reads(replica) as on_replica, lag_tolerant():
        ranks.rebuild(ranks.RunKey(1, dt.date(2026, 1, 1), ""))
    assert "leaderboards_leaderboardentry" not in _tables(on_replica)
