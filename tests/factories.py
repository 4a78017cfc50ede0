"""Factories that keep related objects in one tenant."""

from decimal import Decimal
from typing import Any

import factory

from apps.accounts.models import Environment, Organization, Tenant
from apps.accounts.services import api_key_create_admin, application_key_create, organization_create
from apps.metrics.models import Metric
from apps.users.choices import AttributeType
from apps.users.models import Attribute, EndUser


class OrganizationWithKey:
    """An organization made by the real service, with its admin key in clear."""

    def __init__(self, name: str = "Acme") -> None:
        created = organization_create(name)
        self.organization: Organization = created.organization
        self.environment: Environment = created.environment
        self.tenant: Tenant = created.tenant
        self.admin_key: str = created.full_key

    def new_admin_key(self) -> str:
        return api_key_create_admin(self.environment)[1]

    def application_key(self, user_id: str, tenant: Tenant | None = None) -> str:
        return application_key_create(tenant or self.tenant, user_id=user_id)[1]


class MetricFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Metric

    key = factory.Sequence(lambda n: f"metric-{n}")
    name = factory.LazyAttribute(lambda o: o.key.title())


class AttributeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Attribute

    key = factory.Sequence(lambda n: f"attr-{n}")
    name = factory.LazyAttribute(lambda o: o.key)
    type = AttributeType.USER


class EndUserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EndUser

    external_id = factory.Sequence(lambda n: f"user-{n}")


def bump(tenant: Tenant) -> None:
    """Configuration made by factories bypasses services; invalidate the snapshot like they do
    (without a change history: factories are not configuration writes)."""
    from apps.accounts import history
    from apps.accounts.services import tenant_config_changed

    with history.recording(tenant, ()):
        tenant_config_changed(tenant)


def event_body(user_id: str, value: Any = 1, **user_fields: Any) -> dict[str, Any]:
    return {"user": {"id": user_id, **user_fields}, "value": value}


def as_decimal(value: Any) -> Decimal:
    return Decimal(str(value))
