"""Concurrent events for one user on PostgreSQL, where row locks are real (SQLite serializes
every write transaction, so the race cannot happen there)."""

import threading
from collections import Counter
from decimal import Decimal

import pytest
from django.db import connections
from rest_framework.test import APIClient

from apps.metrics.models import MetricEvent, MetricTotal
from apps.users.models import EndUser
from tests.concurrency import POSTGRES_ONLY
from tests.factories import MetricFactory, OrganizationWithKey

pytestmark = [
    *POSTGRES_ONLY,
]

THREADS = 20


def _send_all(api_key, requests):
    """Send each (value, idempotency key) from its own thread, all released at once."""
    barrier = threading.Barrier(len(requests))
    results = [None] * len(requests)

    def send(index, value, key):
        client = APIClient()
        client.credentials(HTTP_X_API_KEY=api_key)
        barrier.wait()
        try:
            response = client.post(
                "/v1/metrics/words/event",
                {"user": {"id": "racer"}, "value": value},
                format="json",
                HTTP_IDEMPOTENCY_KEY=key,
            )
            results[index] = (response.status_code, key)
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=send, args=(i, value, key))
        for i, (value, key) in enumerate(requests)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.django_db(transaction=True)
def test_parallel_events_for_one_user_sum_exactly_and_apply_each_key_once():
    org = OrganizationWithKey("Race")
    MetricFactory(tenant=org.tenant, key="words")
    # 20 requests: 15 distinct keys, 5 of them sent twice at the same moment.
    requests = [(Decimal(i + 1) / 4, f"key-{i}") for i in range(15)]
    requests += [(Decimal(i + 1) / 4, f"key-{i}") for i in range(5)]
    assert len(requests) == THREADS

    results = _send_all(org.admin_key, requests)

    assert all(result is not None for result in results), "a request did not finish"
    statuses = Counter(status for status, _ in results)
    assert statuses == {201: 15, 202: 5}
    created_keys = Counter(key for status, key in results if status == 201)
    assert all(count == 1 for count in created_keys.values())
    expected_total = sum(Decimal(i + 1) / 4 for i in range(15))
    assert MetricTotal.objects.get().total == expected_total
    assert MetricEvent.objects.count() == 15
    assert EndUser.objects.filter(external_id="racer").count() == 1
    # Each event's running total is distinct: the events were applied one after another.
    totals_after = list(MetricEvent.objects.values_list("total_after", flat=True))
    assert len(set(totals_after)) == 15
    assert max(totals_after) == expected_total
