"""Queued batch events are shown, filtered and never edited."""

import uuid
from typing import Any

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.pipeline.models import QueuedEvent, QueuedEventStatus
from tests.dashboard.conftest import admin_url, switch_tenant


def queue(tenant: Tenant, count: int, status: str, error: str = "") -> None:
    batch = uuid.uuid4()
    QueuedEvent.objects.bulk_create(
        QueuedEvent(
            tenant=tenant,
            batch_id=batch,
            seq=i,
            payload={"metric": "words", "user": {"id": f"u{i}"}, "value": 1},
            status=status,
            error=error,
            accepted_at=timezone.now(),
        )
        for i in range(count)
    )


def test_queued_events_are_filtered_by_status_and_tenant(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant, django_assert_max_num_queries: Any
) -> None:
    queue(tenant, 30, QueuedEventStatus.DONE)
    queue(tenant, 2, QueuedEventStatus.FAILED, error='Metric not found: "words"' * 10)
    queue(other_tenant, 5, QueuedEventStatus.PENDING)

    def shown(query: str) -> int:
        response = staff_client.get(admin_url(QueuedEvent) + query)
        assert response.status_code == 200
        return len(response.context["cl"].result_list)

    assert shown("") == 32
    assert shown("?status__exact=failed") == 2
    switch_tenant(staff_client, other_tenant)
    assert shown("") == 5
    with django_assert_max_num_queries(7):
        staff_client.get(admin_url(QueuedEvent))


def test_queued_event_page_shows_the_payload(staff_client: Any, tenant: Tenant) -> None:
    queue(tenant, 1, QueuedEventStatus.PENDING)
    event = QueuedEvent.objects.get()
    response = staff_client.get(admin_url(QueuedEvent, "change", event.pk))
    assert response.status_code == 200
    assert "&quot;metric&quot;: &quot;words&quot;" in response.content.decode()
