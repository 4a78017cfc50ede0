"""Writes of user attribute definitions, for the admin API and the dashboard alike, and the
check every other configuration applies to the attributes it names (`attribute_refs_check`).
Every change bumps the tenant's configuration version."""

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.errors import ValidationError
from apps.core.wording import agreeing
from apps.users.models import Attribute


def attribute_create(tenant: Tenant, *, name: str, key: str, type: str) -> Attribute:
    if Attribute.objects.filter(tenant=tenant, key=key, type=type).exists():
        raise ValidationError("Key already in use by another attribute of this type")
    attribute = Attribute.objects.create(tenant=tenant, name=name, key=key, type=type)
    tenant_config_changed(tenant)
    return attribute


def attribute_update(attribute: Attribute, *, name: str | None) -> Attribute:
    if name is not None:
        attribute.name = name
        attribute.save(update_fields=["name", "updated"])
        tenant_config_changed(attribute.tenant)
    return attribute


def attribute_delete(attribute: Attribute) -> None:
    """Stored values stay on users and events but are no longer accepted or returned."""
    tenant = attribute.tenant
    attribute.delete()
    tenant_config_changed(tenant)


def attribute_refs_check(
    tenant: Tenant, refs: list[dict[str, str]] | None, kind: str
) -> list[dict[str, str]]:
    """Validate admin-side attribute filters: every attribute id must be an attribute of this
    tenant and kind. Returns the normalized list to store."""
    refs = refs or []
    ids = {ref["attributeId"] for ref in refs}
    found = {
        str(pid)
        for pid in Attribute.objects.filter(
            tenant=tenant, type=kind, public_id__in=ids
        ).values_list("public_id", flat=True)
    }
    missing = sorted(ids - found)
    if missing:
        noun = agreeing(len(missing), "attribute", "attributes")
        raise ValidationError(f"{kind} {noun} not found: {', '.join(missing)}")
    return [{"attributeId": r["attributeId"], "attributeValue": r["attributeValue"]} for r in refs]
