"""The batch endpoint through a real Redis broker and a Celery worker, as in production.

The rest of the suite runs tasks inline (no broker configured); this test proves that the same
code path works when the task is serialized, queued and picked up by a worker.
"""

import threading
import time

import pytest

from apps.metrics.models import MetricTotal
from apps.pipeline.models import QueuedEvent, QueuedEventStatus
from tests.broker import redis_up, worker_through
from tests.factories import MetricFactory, OrganizationWithKey, bump

BROKER = "redis://127.0.0.1:6379/15"

pytestmark = pytest.mark.skipif(not redis_up(), reason="needs Redis on 127.0.0.1:6379")


@pytest.fixture
def redis_worker(settings):
    with worker_through(BROKER, settings):
        yield


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
