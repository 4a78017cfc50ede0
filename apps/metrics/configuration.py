"""Writes of metric configuration, for the admin API and the dashboard alike: creating,
renaming and deleting metrics. Every change bumps the tenant's configuration version."""

from apps.accounts.history import ALL, recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values, required_check
from apps.core.errors import ValidationError
from apps.metrics.choices import UnitType
from apps.metrics.domain import MetricSettings
from apps.metrics.models import Metric
from apps.metrics.selectors import metric_deletion_impact


def _units_check(unit_type: str, units: str) -> None:
    if unit_type == UnitType.CURRENCY and not (
        len(units) == 3 and units.isalpha() and units.isupper()
    ):
        raise ValidationError(
            "{units} must be an ISO 4217 currency code (such as USD) when {unit_type} is currency",
            fields=("units", "unit_type"),
            code="invalid",
        )


@recorded("metric")
def metric_create(tenant: Tenant, settings: MetricSettings) -> Metric:
    """A new metric; a number without units unless `unit_type` and `units` say otherwise."""
    required_check(settings)
    values = given_values(settings)
    if Metric.objects.filter(tenant=tenant, key=values["key"]).exists():
        raise ValidationError("Key already in use by another metric")
    metric = Metric(tenant=tenant, **values)
    _units_check(metric.unit_type, metric.units)
    metric.save(force_insert=True)
    tenant_config_changed(tenant)
    return metric


@recorded("metric")
def metric_update(tenant: Tenant, metric: Metric, changes: MetricSettings) -> Metric:
    """Change the given settings; the others are kept. The key is not one of them: API calls
    and events name the metric by it."""
    values = given_values(changes)
    if values.pop("key", metric.key) != metric.key:
        raise ValidationError("{key} is set for good", fields="key", code="frozen")
    for name, value in values.items():
        setattr(metric, name, value)
    _units_check(metric.unit_type, metric.units)
    metric.save(update_fields=["name", "unit_type", "units", "updated"])
    tenant_config_changed(tenant)
    return metric


@recorded(ALL)
def metric_delete(tenant: Tenant, metric: Metric, *, confirm: str = "") -> None:
    """Deletes the metric with its events, totals and rollups, and the configuration that counts
    it. Refused while something would be left unusable (the streak's only condition, a league
    that scores by it); a metric users have data in needs its key as `confirm`
    (metric_deletion_impact)."""
    metric_deletion_impact(tenant, metric).check(confirm=confirm)
    metric.delete()
    tenant_config_changed(tenant)
