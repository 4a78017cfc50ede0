"""A single event that PostgreSQL aborts as a deadlock victim (possible next to a batch group,
apps/pipeline/batches.py) runs again: applied once, answered 201, not 500."""

from decimal import Decimal
from typing import Any

import pytest
from django.db import OperationalError

from apps.metrics.models import MetricEvent, MetricTotal
from apps.pipeline import services
from apps.pipeline.services import EventInput, event_process
from apps.users.domain import UserFields
from tests.pipeline.test_batch_grouped import deadlock

pytestmark = pytest.mark.django_db


def deadlocking(monkeypatch: Any, times: int) -> list[int]:
    real = services.event_apply
    calls = [0]

    def apply(*args: Any) -> Any:
        calls[0] += 1
        if calls[0] <= times:
            real(*args)  # its writes happen, then the transaction is aborted
            raise deadlock()
        return real(*args)

    monkeypatch.setattr(services, "event_apply", apply)
    return calls


def test_an_event_aborted_as_a_deadlock_is_applied_once(api_client, metric, monkeypatch):
    calls = deadlocking(monkeypatch, times=services.EVENT_DEADLOCK_RETRIES)
    response = api_client.post("/v1/metrics/words/event", {"user": {"id": "u1"}, "value": 7})
    assert response.status_code == 201, response.content
    assert response.json()["total"] == 7
    assert calls[0] == services.EVENT_DEADLOCK_RETRIES + 1
    assert MetricEvent.objects.count() == 1
    assert MetricTotal.objects.get().total == Decimal(7)


def test_after_the_retries_the_deadlock_is_raised(tenant, metric, monkeypatch):
    deadlocking(monkeypatch, times=services.EVENT_DEADLOCK_RETRIES + 1)
    with pytest.raises(OperationalError):
        event_process(tenant, EventInput("words", "u1", UserFields(), Decimal(7), {}))
    assert MetricEvent.objects.count() == 0
