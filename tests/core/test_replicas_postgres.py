"""The replica router against a real PostgreSQL streaming replica: the first of
DATABASE_REPLICA_URLS (CI's topology starts one with pg_basebackup). The suite's replica aliases
mirror the default database (Django's TEST MIRROR); these tests open a connection of their own
to the replica, to the test database that streaming replication copies there, and read what
the primary committed. Skipped without a replica."""

import os
import time
from collections.abc import Iterator
from typing import Any

import dj_database_url
import pytest
from django.db import connection, connections
from django.db.utils import load_backend
from django.test.utils import CaptureQueriesContext

from apps.core import replicas
from apps.core.replicas import lag_tolerant, read_alias
from apps.metrics.models import Metric
from tests.concurrency import POSTGRES_ONLY
from tests.conftest import Client
from tests.factories import MetricFactory, OrganizationWithKey, bump

REPLICA_URLS = [u.strip() for u in os.environ.get("DATABASE_REPLICA_URLS", "").split(",")]
REAL = "test_real_replica"

pytestmark = [
    *POSTGRES_ONLY,
    pytest.mark.skipif(
        not REPLICA_URLS[0], reason="needs a streaming replica: DATABASE_REPLICA_URLS"
    ),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def real_replica(settings: Any) -> Iterator[str]:
    parsed = dj_database_url.parse(REPLICA_URLS[0])
    settings_dict = {
        **connections["default"].settings_dict,
        **{k: parsed[k] for k in ("HOST", "PORT", "USER", "PASSWORD") if parsed.get(k)},
    }
    settings_dict["OPTIONS"] = {"connect_timeout": 2}
    backend = load_backend(settings_dict["ENGINE"])
    setattr(connections._connections, REAL, backend.DatabaseWrapper(settings_dict, REAL))
    settings.DATABASE_REPLICAS = {"default": [REAL]}
    replicas.health_reset()
    replicas.work_begins()
    yield REAL
    replicas.health_reset()
    getattr(connections._connections, REAL).close()
    delattr(connections._connections, REAL)


def _caught_up(alias: str, check: Any, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_the_replica_is_in_recovery_and_its_lag_is_measured(real_replica: str) -> None:
    with connections[real_replica].cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery()")
        assert cursor.fetchone() == (True,)
    lag = replicas.replica_lag(real_replica)
    assert 0 <= lag < 60


def test_a_lag_tolerant_read_sees_on_the_replica_what_the_primary_committed(
    real_replica: str,
) -> None:
    tenant = OrganizationWithKey("Acme").tenant
    metric = MetricFactory(tenant=tenant, key="words")
    on_replica = Metric.objects.using(real_replica).filter(pk=metric.pk)
    assert _caught_up(real_replica, on_replica.exists)
    replicas.work_begins()
    with lag_tolerant(), CaptureQueriesContext(connections[real_replica]) as captured:
        assert read_alias() == real_replica
        assert Metric.objects.get(pk=metric.pk).key == "words"
    assert any("metrics_metric" in q["sql"] for q in captured.captured_queries)


def test_the_replica_refuses_writes_which_the_router_never_sends_it(real_replica: str) -> None:
    from django.db import DatabaseError

    tenant = OrganizationWithKey("Acme").tenant
    replicas.work_begins()
    with lag_tolerant():
        MetricFactory(tenant=tenant, key="words")  # to the primary
        assert read_alias() == "default"
    with pytest.raises(DatabaseError, match="read-only"), connections[real_replica].cursor() as c:
        c.execute("UPDATE metrics_metric SET name = name")


def test_a_leaderboard_page_is_read_from_the_replica(real_replica: str) -> None:
    org = OrganizationWithKey("Acme")
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    metric = MetricFactory(tenant=org.tenant, key="words", name="Words")
    bump(org.tenant)
    board = {"key": "top", "name": "Top", "rankBy": "metric", "status": "active"}
    board["metricId"] = str(metric.public_id)
    assert client.post("/admin/v1/leaderboards", [board]).status_code == 201
    assert client.post("/v1/metrics/words/event", {"user": {"id": "ann"}, "value": 2}).status_code
    from apps.leaderboards.models import LeaderboardEntry

    entries = LeaderboardEntry.objects.using(real_replica)
    assert _caught_up(real_replica, entries.exists)
    with CaptureQueriesContext(connections[real_replica]) as captured:
        response = client.get("/v1/leaderboards/top")
    assert [r["userId"] for r in response.json()["rankings"]] == ["ann"]
    assert any("leaderboards_leaderboardentry" in q["sql"] for q in captured.captured_queries)
    assert connection.vendor == "postgresql"
