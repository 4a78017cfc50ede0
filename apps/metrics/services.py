"""Writes of recorded events, totals and daily rollups (metric definitions: configuration.py)."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import connection

from apps.accounts.models import Tenant
from apps.core.db import Table, insert, upsert
from apps.metrics import sql
from apps.metrics.models import MetricDailyChange, MetricEvent, MetricTotal
from apps.metrics.selectors import MetricDef
from apps.users.domain import local_date
from apps.users.models import EndUser

# The hot path adds to counters with one statement each (apps.core.db.upsert), or, on
# PostgreSQL, records the whole event in one (metrics/sql.py).
_TOTALS, _DAILY = Table(MetricTotal), Table(MetricDailyChange)
_QUANTUM = _TOTALS.quantum("total")  # the event's total_after has the same places


def _total_add(
    tenant_pk: int, user_pk: int, metric_pk: int, value: Decimal, now: dt.datetime
) -> Decimal:
    row = upsert(sql.TOTAL_UPSERT, MetricTotal, [tenant_pk, user_pk, metric_pk, value, now])
    assert row is not None  # noqa: S101 - RETURNING always yields the row
    # PostgreSQL returns a Decimal; SQLite a number whose text is exact to 6 places.
    return Decimal(str(row[0])).quantize(_QUANTUM)


def _record_in_one_statement(event: MetricEvent, now: dt.datetime) -> Decimal:
    """The total, the daily rollup and the event row in one statement (metrics/sql.py); the
    event gets its id and total_after, and the new total is returned."""
    tenant_pk, user_pk, metric_pk = event.tenant_id, event.user_id, event.metric_id
    value, day = event.value, event.local_date
    total, daily = _TOTALS, _DAILY
    params: list[Any] = [
        tenant_pk,
        user_pk,
        metric_pk,
        total.prep("total", value),
        total.prep("updated", now),
        tenant_pk,
        user_pk,
        metric_pk,
        daily.prep("date", day),
        daily.prep("change", value),
    ]
    params += [
        f.get_db_prep_save(f.pre_save(event, True), connection)
        for f in sql.EVENT_FIELDS
        if f.attname != "total_after"
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql.record_statement(), params)
        total, pk = cursor.fetchone()
    event.pk, event.total_after = pk, Decimal(total).quantize(_QUANTUM)
    event._state.adding = False
    event._state.db = connection.alias
    return event.total_after


def _daily_change_add(
    tenant_pk: int, user_pk: int, metric_pk: int, day: dt.date, value: Decimal
) -> None:
    upsert(sql.DAILY_UPSERT, MetricDailyChange, [tenant_pk, user_pk, metric_pk, day, value])


@dataclass(frozen=True)
class RecordedEvent:
    event: MetricEvent
    previous_total: Decimal
    total: Decimal
    local_date: dt.date


def event_record(
    tenant: Tenant,
    user: EndUser,
    metric: MetricDef,
    *,
    value: Decimal,
    attributes: dict[str, str],
    idempotency_key: str | None,
    now: dt.datetime,
) -> RecordedEvent:
    """Insert the event and add its value to the user's total and daily rollup.

    The caller holds the user's row lock (the pipeline), which serializes the events of one
    user; the additions themselves are also atomic upserts in the database.
    """
    day = local_date(now, user.tz)
    event = MetricEvent(
        tenant=tenant,
        user=user,
        metric_id=metric.pk,
        value=value,
        attributes=attributes,
        idempotency_key=idempotency_key,
        occurred_at=now,
        local_date=day,
    )
    if connection.vendor == "postgresql":
        total = _record_in_one_statement(event, now)
    else:
        total = _total_add(tenant.pk, user.pk, metric.pk, value, now)
        event.total_after = total
        insert(event)  # the ORM's create(), with the statement built once per process
        _daily_change_add(tenant.pk, user.pk, metric.pk, day, value)
    previous = total - value
    return RecordedEvent(event=event, previous_total=previous, total=total, local_date=day)
