"""Writes of user attribute definitions, for the admin API and the dashboard alike, and the
check every other configuration applies to the attributes it names (`attribute_refs_check`).
Every change bumps the tenant's configuration version."""

from apps.accounts.history import ALL, recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values, required_check
from apps.core.errors import ValidationError
from apps.core.wording import agreeing, listed
from apps.users.domain import AttributeSettings
from apps.users.models import Attribute


@recorded("attribute")
def attribute_create(tenant: Tenant, settings: AttributeSettings) -> Attribute:
    required_check(settings)
    values = given_values(settings)
    if Attribute.objects.filter(tenant=tenant, key=values["key"], type=values["type"]).exists():
        raise ValidationError("Key already in use by another attribute of this type")
    attribute = Attribute.objects.create(tenant=tenant, **values)
    tenant_config_changed(tenant)
    return attribute


@recorded("attribute")
def attribute_update(tenant: Tenant, attribute: Attribute, changes: AttributeSettings) -> Attribute:
    """Change the name, if given. The key and type stay: API calls and stored values refer to
    them."""
    values = given_values(changes)
    stored = {"key": attribute.key, "type": attribute.type}
    frozen = [name for name, value in stored.items() if values.pop(name, value) != value]
    if frozen:
        placeholders = listed(["{" + name + "}" for name in frozen])
        verb = agreeing(len(frozen), "is", "are")
        raise ValidationError(f"{placeholders} {verb} set for good", fields=frozen, code="frozen")
    if values:
        for name, value in values.items():
            setattr(attribute, name, value)
        attribute.save(update_fields=[*values, "updated"])
        tenant_config_changed(tenant)
    return attribute


@recorded(ALL)
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
