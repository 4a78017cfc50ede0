"""The hand-compiled statements of apps/core/db.py make and read exactly what the ORM does."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.core.db import CompiledSelect, insert
from apps.metrics.models import MetricEvent
from apps.users.models import EndUser

# `sql`: make unit runs these on PostgreSQL too, whose statements differ (apps/core/db.py).
pytestmark = [pytest.mark.django_db, pytest.mark.sql]


def fields(obj: Any) -> dict[str, Any]:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


def test_insert_stores_what_create_would(tenant, metric):
    user = EndUser.objects.create(tenant=tenant, external_id="u1", attributes={"plan": "pro"})
    now = dt.datetime(2026, 3, 10, 12, 30, 15, 123456, tzinfo=dt.UTC)
    event = MetricEvent(
        tenant=tenant,
        user=user,
        metric=metric,
        value=Decimal("2.5"),
        total_after=Decimal("7.25"),
        attributes={"device": "ios", "émoji": "✓"},
        idempotency_key="k1",
        occurred_at=now,
        local_date=now.date(),
    )
    with CaptureQueriesContext(connection) as queries:
        insert(event)
    assert len(queries.captured_queries) == 1
    assert event.pk is not None
    assert not event._state.adding
    assert fields(MetricEvent.objects.get(pk=event.pk)) == fields(event)


def test_insert_raises_the_integrity_error_the_orm_would(tenant, metric):
    user = EndUser.objects.create(tenant=tenant, external_id="u1")
    now = dt.datetime(2026, 3, 10, tzinfo=dt.UTC)
    common = {"tenant": tenant, "user": user, "metric": metric, "value": 1, "total_after": 1}
    insert(MetricEvent(**common, idempotency_key="k", occurred_at=now, local_date=now.date()))
    with pytest.raises(IntegrityError), transaction.atomic():
        insert(MetricEvent(**common, idempotency_key="k", occurred_at=now, local_date=now.date()))


def test_compiled_select_reads_the_instance_the_orm_reads(tenant, other_tenant):
    EndUser.objects.create(tenant=other_tenant, external_id="u1")
    user = EndUser.objects.create(
        tenant=tenant, external_id="u1", email="a@example.com", attributes={"plan": "pro"}
    )
    select = CompiledSelect(EndUser, "{m[tenant]} = %s AND {m[external_id]} = %s", for_update=True)
    with transaction.atomic():
        found = select.first([tenant.pk, "u1"])
    assert fields(found) == fields(EndUser.objects.get(pk=user.pk))
    assert select.first([tenant.pk, "nobody"]) is None


def test_compiled_select_many_orders_and_limits_as_the_orm(tenant, metric):
    user = EndUser.objects.create(tenant=tenant, external_id="u1")
    start = dt.datetime(2026, 3, 10, tzinfo=dt.UTC)
    for n in range(5):
        insert(
            MetricEvent(
                tenant=tenant,
                user=user,
                metric=metric,
                value=n,
                total_after=n,
                occurred_at=start + dt.timedelta(minutes=n % 3),
                local_date=start.date(),
            )
        )
    select = CompiledSelect(
        MetricEvent, "{m[user]} = %s ORDER BY {m[occurred_at]} DESC, {m[id]} DESC"
    )
    expected = MetricEvent.objects.filter(user=user).order_by("-occurred_at", "-id")[:3]
    assert [fields(e) for e in select.many([user.pk], 3)] == [fields(e) for e in expected]
