"""The per-tenant configuration snapshot the pipeline reads instead of configuration tables.

Each part is cached in process by the owning app, keyed by the tenant's config_version (see
apps/core/config_cache.py); this module only assembles them.
"""

from dataclasses import dataclass

from apps.accounts.models import Tenant
from apps.metrics.selectors import MetricDef, metric_by_key
from apps.users.selectors import AttributeDefinitions, attribute_definitions


@dataclass(frozen=True)
class EventConfig:
    metric: MetricDef
    attributes: AttributeDefinitions


def event_config(tenant: Tenant, metric_key: str) -> EventConfig:
    return EventConfig(
        metric=metric_by_key(tenant, metric_key), attributes=attribute_definitions(tenant)
    )
