"""Bounded state: processed batch rows are purged, the configuration cache evicts."""

import datetime as dt
from types import SimpleNamespace

from django.utils import timezone

from apps.core import config_cache
from apps.pipeline.jobs import queued_events_purge
from apps.pipeline.models import QueuedEvent, QueuedEventStatus


def test_processed_batch_rows_are_purged_after_the_retention(tenant, settings):
    settings.QUEUED_EVENTS_RETENTION_DAYS = 7
    now = timezone.now()
    old, recent = now - dt.timedelta(days=8), now - dt.timedelta(days=1)
    rows = [
        QueuedEvent(tenant=tenant, seq=0, accepted_at=old, status=QueuedEventStatus.DONE),
        QueuedEvent(tenant=tenant, seq=1, accepted_at=old, status=QueuedEventStatus.FAILED),
        QueuedEvent(tenant=tenant, seq=2, accepted_at=old, status=QueuedEventStatus.PENDING),
        QueuedEvent(tenant=tenant, seq=3, accepted_at=recent, status=QueuedEventStatus.DONE),
    ]
    for row in rows:
        row.payload = {}
    QueuedEvent.objects.bulk_create(rows)
    assert queued_events_purge(now) == 2
    left = sorted(QueuedEvent.objects.values_list("seq", flat=True))
    assert left == [2, 3]  # the pending row is never purged


def test_the_configuration_cache_keeps_the_most_recently_used(monkeypatch):
    monkeypatch.setattr(config_cache, "MAX_ENTRIES", 3)
    config_cache.tenant_cache_clear()
    tenants = [SimpleNamespace(pk=n, config_version=1) for n in range(5)]
    loads: list[int] = []

    def read(tenant):
        return config_cache.tenant_cached(tenant, "x", lambda: loads.append(tenant.pk) or tenant.pk)

    for tenant in tenants[:3]:
        read(tenant)
    read(tenants[0])  # used again: now the most recent
    read(tenants[3])  # evicts tenant 1, the least recently used
    read(tenants[0])
    read(tenants[1])
    assert loads == [0, 1, 2, 3, 1]
    assert len(config_cache._entries) == 3
