"""The batch endpoint through a real Redis broker and a Celery worker, as in production.

The rest of the suite runs tasks inline (no broker configured); this test proves that the same
code path works when the task is serialized, queued and picked up by a worker.
"""

import socket
import threading
import time

import pytest
from celery.contrib.testing.worker import start_worker

from apps.metrics.models import MetricTotal
from apps.pipeline.models import QueuedEvent, QueuedEventStatus
from gamify.celery import app as celery_app
from tests.factories import MetricFactory, OrganizationWithKey, bump

BROKER = "redis://127.0.0.1:6379/15"


def _redis_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _redis_up(), reason="needs Redis on 127.0.0.1:6379")


def _reset_connection_pools():
    # The app keeps the broker connection pool it made first (for the default broker, if an
    # earlier test touched it); a new broker URL needs new pools.
    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def redis_worker(settings):
    settings.CELERY_BROKER_URL = BROKER
    celery_app.conf.update(broker_url=BROKER, task_always_eager=False, result_backend=None)
    _reset_connection_pools()
    assert celery_app.pool.connection.as_uri().startswith("redis://")
    celery_app.loader.import_module("celery.contrib.testing.tasks")
    try:
        with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
            yield
    finally:
        celery_app.conf.update(task_always_eager=True, broker_url=None)
        _reset_connection_pools()


@pytest.mark.django_db(transaction=True)
def test_batch_is_processed_by_a_worker_through_redis(redis_worker, monkeypatch):
    from apps.pipeline import tasks

    threads: list[str] = []
    original = tasks.queued_events_process

    def recording(batch_id):
        threads.append(threading.current_thread().name)
        return original(batch_id)

    monkeypatch.setattr(tasks, "queued_events_process", recording)
    org = OrganizationWithKey("Broker")
    MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    events = [{"key": "words", "user": {"id": f"u{i % 3}"}, "value": i} for i in range(30)]
    response = client.post("/admin/v1/metrics/events", events, format="json")
    assert response.status_code == 202
    assert response.json() == {"accepted": 30}

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if not QueuedEvent.objects.filter(status=QueuedEventStatus.PENDING).exists():
            break
        time.sleep(0.1)
    assert QueuedEvent.objects.filter(status=QueuedEventStatus.DONE).count() == 30
    # Processed by the worker, not inline in the request thread.
    assert threads
    assert threading.current_thread().name not in threads
    totals = dict(MetricTotal.objects.values_list("user__external_id", "total"))
    assert totals == {f"u{r}": sum(i for i in range(30) if i % 3 == r) for r in range(3)}
