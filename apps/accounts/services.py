"""Writes for organizations, environments, tenants, API keys and settings."""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypedDict

from django.db import IntegrityError, transaction
from django.db.models import F

from apps.accounts import domain, history
from apps.accounts.choices import ApiKeyKind, TenantStatus
from apps.accounts.keys import key_generate, key_hash
from apps.accounts.models import ApiKey, Environment, Organization, Tenant
from apps.cells.directory import key_indexed, key_unindexed, organization_placed
from apps.cells.move import staff_mirrored
from apps.core.cells import current_cell, using_cell
from apps.core.errors import ValidationError


@dataclass(frozen=True)
class CreatedOrganization:
    organization: Organization
    environment: Environment
    tenant: Tenant
    api_key: ApiKey
    full_key: str


def tenant_config_changed(tenant: Tenant) -> None:
    """Invalidate every process's configuration snapshot of this tenant. Called by every
    configuration write, inside its recording (apps/accounts/history.py)."""
    if not history.is_recording(tenant):
        history.unrecorded(tenant)
    Tenant.objects.filter(pk=tenant.pk).update(config_version=F("config_version") + 1)
    tenant.refresh_from_db(fields=["config_version"])


def environment_create(
    organization: Organization, *, name: str, key: str, priority: int
) -> Environment:
    environment = Environment.objects.create(
        organization=organization, name=name, key=key, priority=priority
    )
    environment.default_tenant = Tenant.objects.create(
        environment=environment, name=f"{organization.name} {name}", is_default=True
    )
    environment.save(update_fields=["default_tenant", "updated"])
    return environment


def _key_indexed(prefix: str, environment_id: int) -> None:
    """The cell directory learns which organization the new key opens (apps/cells)."""
    organization = Organization.objects.filter(environments__pk=environment_id).values_list(
        "public_id", flat=True
    )[0]
    key_indexed(prefix, organization)


def api_key_create_admin(environment: Environment, *, name: str = "") -> tuple[ApiKey, str]:
    prefix, secret, full_key = key_generate(application=False)
    _key_indexed(prefix, environment.pk)
    api_key = ApiKey.objects.create(
        environment=environment,
        kind=ApiKeyKind.ADMIN,
        name=name,
        prefix=prefix,
        secret_hash=key_hash(secret),
    )
    return api_key, full_key


def organization_create(name: str, *, cell: str | None = None) -> CreatedOrganization:
    """A new organization in `cell`: the current one when not named (the cell a command, a
    request or a test entered; settings.CELL_FOR_NEW_ORGANIZATIONS is the commands' default)."""
    with using_cell(cell or current_cell()):
        return _organization_create(name)


@transaction.atomic
def _organization_create(name: str) -> CreatedOrganization:
    name = name.strip()
    if not name or len(name) > 255:
        raise ValidationError("name must be 1 to 255 characters")
    organization = Organization.objects.create(name=name)
    organization_placed(organization.public_id)
    environment = environment_create(organization, name="Production", key="production", priority=1)
    api_key, full_key = api_key_create_admin(environment, name="Default admin key")
    return CreatedOrganization(
        organization, environment, environment.tenants.get(is_default=True), api_key, full_key
    )


def organization_update(organization: Organization, *, name: str) -> Organization:
    name = name.strip()
    if not name or len(name) > 255:
        raise ValidationError("name must be 1 to 255 characters")
    organization.name = name
    organization.save(update_fields=["name", "updated"])
    return organization


def organization_staff_set(organization: Organization, users: Iterable[Any]) -> None:
    """The dashboard users who may see the organization's tenants (superusers see all)."""
    users = list(users)
    staff_mirrored([user.pk for user in users])  # the cell's copy of their rows (apps/cells)
    organization.staff.set(users)


def environment_update(
    environment: Environment, *, name: str | None = None, priority: int | None = None
) -> Environment:
    """The key is not changeable: clients and the admin API know an environment by it."""
    if name is not None:
        environment.name = name
    if priority is not None:
        environment.priority = priority
    environment.save(update_fields=["name", "priority", "updated"])
    return environment


def api_key_revoke(api_key: ApiKey) -> None:
    """Authentication reads is_active on every request, so a revoked key stops working at once;
    the row stays so the dashboard still shows what the key was and when it was last used."""
    api_key.is_active = False
    api_key.save(update_fields=["is_active", "updated"])


def application_key_create(tenant: Tenant, *, user_id: str) -> tuple[ApiKey, str]:
    prefix, secret, full_key = key_generate(application=True)
    _key_indexed(prefix, tenant.environment_id)
    api_key = ApiKey.objects.create(
        environment_id=tenant.environment_id,
        kind=ApiKeyKind.APPLICATION,
        tenant=tenant,
        user_id=user_id,
        prefix=prefix,
        secret_hash=key_hash(secret),
    )
    return api_key, full_key


def api_key_delete(api_key: ApiKey) -> None:
    api_key.delete()
    key_unindexed(api_key.prefix)


def _customer_id_taken(environment_id: int, customer_id: str, exclude_pk: int | None) -> bool:
    taken = Tenant.objects.filter(
        environment_id=environment_id, customer_id=customer_id, status=TenantStatus.ACTIVE
    )
    if exclude_pk is not None:
        taken = taken.exclude(pk=exclude_pk)
    return taken.exists()


def _customer_id_error(customer_id: str) -> ValidationError:
    return ValidationError(f'Customer ID "{customer_id}" already exists in this environment')


def tenant_create(environment: Environment, *, customer_id: str, name: str) -> Tenant:
    if _customer_id_taken(environment.pk, customer_id, exclude_pk=None):
        raise _customer_id_error(customer_id)
    try:
        with transaction.atomic():
            return Tenant.objects.create(
                environment=environment, customer_id=customer_id, name=name
            )
    except IntegrityError:
        raise _customer_id_error(customer_id) from None


def tenant_update(
    tenant: Tenant, *, customer_id: str | None = None, name: str | None = None
) -> Tenant:
    if tenant.is_default and customer_id is not None:
        raise ValidationError("The default tenant has no customer ID")
    if customer_id is not None and customer_id != tenant.customer_id:
        if _customer_id_taken(tenant.environment_id, customer_id, exclude_pk=tenant.pk):
            raise _customer_id_error(customer_id)
        tenant.customer_id = customer_id
    if name is not None:
        tenant.name = name
    tenant.save(update_fields=["customer_id", "name", "updated"])
    return tenant


def tenant_archive(tenant: Tenant) -> None:
    """Deleting a tenant archives it: its data stays, requests naming it get 404, and its
    customer id can be used for a new tenant."""
    if tenant.is_default:
        raise ValidationError("The default tenant cannot be deleted")
    tenant.status = TenantStatus.ARCHIVED
    tenant.save(update_fields=["status", "updated"])
    ApiKey.objects.filter(tenant=tenant).update(is_active=False)


class BrandingChanges(TypedDict, total=False):
    """Branding settings to change; None removes one (its default applies again)."""

    app_name: str | None
    app_url: str | None
    brand_color: str | None
    font: str | None
    logo_url: str | None
    app_icon_url: str | None


# Branding is stored as GET /settings shows it: these keys, logo and app icon as {"url": ...}.
_BRANDING_STORED = {
    "app_name": "appName",
    "app_url": "appUrl",
    "brand_color": "brandColor",
    "font": "font",
    "logo_url": "logo",
    "app_icon_url": "appIcon",
}
_BRANDING_IMAGES = frozenset({"logo_url", "app_icon_url"})


@history.recorded("settings")
def settings_update(
    tenant: Tenant,
    *,
    branding: BrandingChanges | None = None,
    control_ratio: int | None = None,
    user_activation_window: int | None = None,
    aggregation_period: str | None = None,
    reporting_tz: str | None = None,
) -> Tenant:
    """PATCH /settings and the tenant page: only the given settings change; branding changes
    per key, the others are kept. The reporting time zone (a gamify extension, not in Trophy's
    settings) is set on the tenant page only."""
    fields = ["updated"]
    if reporting_tz is not None and reporting_tz not in domain.reporting_zones():
        raise ValidationError(
            "{reporting_tz} is not a time zone this server knows", fields="reporting_tz"
        )
    if branding is not None:
        merged = dict(tenant.branding)
        for name, value in branding.items():
            stored = _BRANDING_STORED[name]
            if value is None:
                merged.pop(stored, None)
            else:
                merged[stored] = {"url": value} if name in _BRANDING_IMAGES else value
        tenant.branding = merged
        fields.append("branding")
    for field, value in (
        ("control_ratio", control_ratio),
        ("user_activation_window", user_activation_window),
        ("aggregation_period", aggregation_period),
        ("reporting_tz", reporting_tz),
    ):
        if value is not None:
            setattr(tenant, field, value)
            fields.append(field)
    tenant.save(update_fields=fields)
    tenant_config_changed(tenant)
    return tenant
