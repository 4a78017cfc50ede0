"""Reads for accounts: key authentication, tenant resolution, tenant reads."""

import datetime as dt
from collections.abc import Sequence

from django.utils import timezone

from apps.accounts import sql
from apps.accounts.choices import TenantStatus
from apps.accounts.keys import key_matches, key_split
from apps.accounts.models import ApiKey, Environment, Tenant
from apps.core.errors import NotFoundError

# Recording use on every request would turn every read into a write; once a minute is enough
# for the dashboard's "last used".
_LAST_USED_RESOLUTION = dt.timedelta(minutes=1)


def api_key_authenticate(raw: str) -> ApiKey | None:
    parts = key_split(raw)
    if parts is None:
        return None
    prefix, secret = parts
    api_key = sql.api_key_with_tenants(prefix)  # select_related, hand-compiled
    if api_key is None or not key_matches(secret, api_key.secret_hash):
        return None
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at > _LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
    return api_key


def tenant_resolve(environment: Environment, customer_id: str | None) -> Tenant:
    """The tenant named by a Tenant-ID header (its customer id), or the default tenant."""
    tenants = Tenant.objects.filter(environment=environment, status=TenantStatus.ACTIVE)
    tenant = (
        tenants.filter(is_default=True)
        if customer_id is None
        else tenants.filter(customer_id=customer_id)
    ).first()
    if tenant is None:
        raise NotFoundError(f'Tenant not found: "{customer_id}"')
    return tenant


def tenants_list(environment: Environment, limit: int, skip: int) -> Sequence[Tenant]:
    return list(
        Tenant.objects.filter(
            environment=environment, status=TenantStatus.ACTIVE, is_default=False
        ).order_by("created", "id")[skip : skip + limit]
    )


def tenant_get(environment: Environment, public_id: str) -> Tenant | None:
    return Tenant.objects.filter(
        environment=environment, public_id=public_id, status=TenantStatus.ACTIVE, is_default=False
    ).first()


def environments_list(environment: Environment) -> Sequence[Environment]:
    return list(Environment.objects.filter(organization_id=environment.organization_id))


def application_key_get(tenant: Tenant, public_id: str) -> ApiKey | None:
    return ApiKey.objects.filter(tenant=tenant, public_id=public_id).first()
