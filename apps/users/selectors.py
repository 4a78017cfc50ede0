"""Reads of end-users and attribute definitions. Every read starts from the tenant."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.db.models import Q

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.users.choices import AttributeType
from apps.users.errors import UserNotFoundError
from apps.users.models import Attribute, EndUser


@dataclass(frozen=True)
class AttributeDefinitions:
    user_keys: frozenset[str]
    event_keys: frozenset[str]
    ids_by_type_key: dict[tuple[str, str], str]


def attribute_labels(tenant: Tenant, kind: str) -> dict[str, str]:
    """The dashboard's names of the tenant's attributes of one type, by key: names first, keys
    second ("Plan (plan)"), the key alone when the name is the key. One query (the cached
    definitions carry no names)."""
    rows = Attribute.objects.filter(tenant=tenant, type=kind).values_list("key", "name")
    return {key: key if name in ("", key) else f"{name} ({key})" for key, name in rows}


def attribute_definitions(tenant: Tenant) -> AttributeDefinitions:
    def load() -> AttributeDefinitions:
        rows = list(Attribute.objects.filter(tenant=tenant).values_list("type", "key", "public_id"))
        return AttributeDefinitions(
            user_keys=frozenset(k for t, k, _ in rows if t == AttributeType.USER),
            event_keys=frozenset(k for t, k, _ in rows if t == AttributeType.EVENT),
            ids_by_type_key={(t, k): str(pid) for t, k, pid in rows},
        )

    return tenant_cached(tenant, "attributes", load)


def user_get(tenant: Tenant, external_id: str) -> EndUser:
    user = EndUser.objects.filter(tenant=tenant, external_id=external_id).first()
    if user is None:
        raise UserNotFoundError(external_id)
    return user


def users_by_external_ids(tenant: Tenant, external_ids: Sequence[str]) -> dict[str, EndUser]:
    users = EndUser.objects.filter(tenant=tenant, external_id__in=list(external_ids))
    return {user.external_id: user for user in users}


def users_with_email(tenant: Tenant, external_ids: set[str]) -> set[str]:
    """Which of these users exist with an email stored."""
    return set(
        EndUser.objects.filter(tenant=tenant, external_id__in=external_ids)
        .exclude(email__isnull=True)
        .exclude(email="")
        .values_list("external_id", flat=True)
    )


def attributes_list(tenant: Tenant, limit: int, skip: int) -> Sequence[Attribute]:
    return list(
        Attribute.objects.filter(tenant=tenant).order_by("created", "id")[skip : skip + limit]
    )


def attribute_get(tenant: Tenant, public_id: str) -> Attribute | None:
    return Attribute.objects.filter(tenant=tenant, public_id=public_id).first()


def attributes_q(filters: Mapping[str, str], field: str = "attributes") -> Q:
    """`attributes_match` (apps/users/domain.py) as a query condition: the rows whose JSON
    `field` (a user's or an event's attributes, or one reached through a relation) holds every
    filter value. A filter naming a deleted attribute (None) admits nobody: callers answer
    that case before they query."""
    return Q(*((f"{field}__{key}", value) for key, value in filters.items()))


AttributeRefs = list[dict[str, str]]  # [{"attributeId": uuid, "attributeValue": str}]


def attribute_filters_resolve(tenant: Tenant, refs: AttributeRefs) -> dict[str, str] | None:
    """Admin-side attribute filters (by attribute id) as {key: value}; None when one names a
    deleted attribute, so that nobody matches rather than everybody."""
    keys_by_id = {
        pid: key for (_, key), pid in attribute_definitions(tenant).ids_by_type_key.items()
    }
    filters: dict[str, str] = {}
    for ref in refs:
        key = keys_by_id.get(ref["attributeId"])
        if key is None:
            return None
        filters[key] = ref["attributeValue"]
    return filters
