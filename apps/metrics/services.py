"""Writes of metric definitions and of recorded events, totals and daily rollups."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import F

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.errors import ValidationError
from apps.metrics.choices import UnitType
from apps.metrics.models import Metric, MetricDailyChange, MetricEvent, MetricTotal
from apps.metrics.selectors import MetricDef
from apps.users.domain import local_date
from apps.users.models import EndUser


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

    The caller holds the user's row lock (the pipeline), so reading the total and then adding
    to it with F() cannot interleave with another event of the same user.
    """
    day = local_date(now, user.tz)
    previous = (
        MetricTotal.objects.filter(user=user, metric_id=metric.pk)
        .values_list("total", flat=True)
        .first()
    )
    if previous is None:
        previous = Decimal(0)
        MetricTotal.objects.create(tenant=tenant, user=user, metric_id=metric.pk, total=value)
    else:
        MetricTotal.objects.filter(user=user, metric_id=metric.pk).update(total=F("total") + value)
    total = previous + value
    event = MetricEvent.objects.create(
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
    rolled = MetricDailyChange.objects.filter(user=user, metric_id=metric.pk, date=day).update(
        change=F("change") + value, events=F("events") + 1
    )
    if not rolled:
        MetricDailyChange.objects.create(
            tenant=tenant, user=user, metric_id=metric.pk, date=day, change=value, events=1
        )
    return RecordedEvent(event=event, previous_total=previous, total=total, local_date=day)
