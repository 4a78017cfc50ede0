"""Reads of the change history, tenant first."""

from collections.abc import Sequence

from apps.accounts.models import ConfigChange, Tenant


def changes_list(
    tenant: Tenant, *, kind: str | None = None, key: str | None = None, limit: int, skip: int
) -> Sequence[ConfigChange]:
    changes = ConfigChange.objects.filter(tenant=tenant).select_related("reverted_by")
    if kind is not None:
        changes = changes.filter(kind=kind)
    if key is not None:
        changes = changes.filter(key=key)
    return list(changes.order_by("-at", "-id")[skip : skip + limit])


def change_get(tenant: Tenant, public_id: str) -> ConfigChange | None:
    return (
        ConfigChange.objects.filter(tenant=tenant, public_id=public_id)
        .select_related("reverted_by", "tenant__environment")
        .first()
    )
