"""Writes of metric configuration, for the admin API and the dashboard alike: creating,
renaming and deleting metrics. Every change bumps the tenant's configuration version."""

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.errors import ValidationError
from apps.metrics.choices import UnitType
from apps.metrics.models import Metric


def _units_check(unit_type: str, units: str) -> None:
    if unit_type == UnitType.CURRENCY and not (
        len(units) == 3 and units.isalpha() and units.isupper()
    ):
        raise ValidationError(
            "{units} must be an ISO 4217 currency code (such as USD) when {unit_type} is currency",
            fields=("units", "unit_type"),
            code="invalid",
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
