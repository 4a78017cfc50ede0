"""Writes of metric definitions and of recorded events, totals and daily rollups."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.db import insert, upsert
from apps.core.errors import ValidationError
from apps.metrics.choices import UnitType
from apps.metrics.models import Metric, MetricDailyChange, MetricEvent, MetricTotal
from apps.metrics.selectors import MetricDef
from apps.users.domain import local_date
from apps.users.models import EndUser

# The hot path adds to counters with one statement each (apps.core.db.upsert).
_TOTAL_UPSERT = (
    "INSERT INTO {t} (tenant_id, user_id, metric_id, total, updated) VALUES (%s, %s, %s, %s, %s) "
    "ON CONFLICT (user_id, metric_id) DO UPDATE "
    "SET total = {t}.total + EXCLUDED.total, updated = EXCLUDED.updated RETURNING total"
)
_DAILY_UPSERT = (
    "INSERT INTO {t} (tenant_id, user_id, metric_id, date, change, events) "
    "VALUES (%s, %s, %s, %s, %s, 1) "
    "ON CONFLICT (user_id, metric_id, date) DO UPDATE "
    "SET change = {t}.change + EXCLUDED.change, events = {t}.events + 1"
)
_QUANTUM = Decimal("0.000001")


def _total_add(
    tenant_pk: int, user_pk: int, metric_pk: int, value: Decimal, now: dt.datetime
) -> Decimal:
    row = upsert(_TOTAL_UPSERT, MetricTotal, [tenant_pk, user_pk, metric_pk, value, now])
    assert row is not None  # noqa: S101 - RETURNING always yields the row
    # PostgreSQL returns a Decimal; SQLite a number whose text is exact to 6 places.
    return Decimal(str(row[0])).quantize(_QUANTUM)


def _daily_change_add(
    tenant_pk: int, user_pk: int, metric_pk: int, day: dt.date, value: Decimal
) -> None:
    upsert(_DAILY_UPSERT, MetricDailyChange, [tenant_pk, user_pk, metric_pk, day, value])


@dataclass(frozen=True)
class RecordedEvent:
    event: MetricEvent
    previous_total: Decimal
    total: Decimal
    local_date: dt.date


def _units_check(unit_type: str, units: str) -> None:
    if unit_type == UnitType.CURRENCY and not (
        len(units) == 3 and units.isalpha() and units.isupper()
    ):
        raise ValidationError(
            "units must be an ISO 4217 currency code (such as USD) when unitType is currency"
        )


def metric_create(tenant: Tenant, *, name: str, key: str, unit_type: str, units: str) -> Metric:
    if Metric.objects.filter(tenant=tenant, key=key).exists():
        raise ValidationError("Key already in use by another metric")
    _units_check(unit_type, units)
    metric = Metric.objects.create(
        tenant=tenant, name=name, key=key, unit_type=unit_type, units=units
    )
    tenant_config_changed(tenant)
    return metric


def metric_update(
    tenant: Tenant,
    metric: Metric,
    *,
    name: str | None = None,
    unit_type: str | None = None,
    units: str | None = None,
) -> Metric:
    if name is not None:
        metric.name = name
    if unit_type is not None:
        metric.unit_type = unit_type
    if units is not None:
        metric.units = units
    _units_check(metric.unit_type, metric.units)
    metric.save(update_fields=["name", "unit_type", "units", "updated"])
    tenant_config_changed(tenant)
    return metric


def metric_delete(tenant: Tenant, metric: Metric) -> None:
    """Deletes the metric with its events, totals and rollups."""
    metric.delete()
    tenant_config_changed(tenant)


def event_record(
    tenant: Tenant,
    user: EndUser,
    metric: MetricDef,
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
    total = _total_add(tenant.pk, user.pk, metric.pk, value, now)
    event = MetricEvent(
        tenant=tenant,
        user=user,
        metric_id=metric.pk,
        value=value,
        total_after=total,
        attributes=attributes,
        idempotency_key=idempotency_key,
        occurred_at=now,
        local_date=day,
    )
    insert(event)  # the ORM's create(), with the statement built once per process
    _daily_change_add(tenant.pk, user.pk, metric.pk, day, value)
    previous = total - value
    return RecordedEvent(event=event, previous_total=previous, total=total, local_date=day)
