"""Admin tenants through the SDK, and isolation of tenants scoped with `tenant_id`."""

import datetime as dt
import uuid

import pytest
from trophy import CreateTenantRequestItem, TrophyApi, UpdateTenantRequestItem
from trophy.core import ApiError
from trophy.errors import NotFoundError
from trophy.types import AdminTenant, DeletedResource

from tests.contract.helpers import (
    CONTRACT_DB,
    MakeClient,
    create_attribute,
    create_metric,
    error_message,
)
from tests.factories import OrganizationWithKey

pytestmark = [pytest.mark.contract, CONTRACT_DB]


def create_tenant(client: TrophyApi, customer_id: str, name: str = "") -> AdminTenant:
    response = client.admin.tenants.create(
        request=[CreateTenantRequestItem(customer_id=customer_id, name=name or customer_id)]
    )
    assert response.issues == []
    (tenant,) = response.created
    return tenant


def test_create_returns_201_with_active_tenants(client: TrophyApi) -> None:
    before = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=5)

    response = client.admin.tenants.with_raw_response.create(
        request=[
            CreateTenantRequestItem(customer_id="acme-eu", name="Acme Europe"),
            CreateTenantRequestItem(customer_id="org_42", name="Org 42"),
        ]
    )

    assert response.status_code == 201
    assert response.data.issues == []
    created = response.data.created
    assert all(isinstance(t, AdminTenant) for t in created)
    assert [(t.customer_id, t.name, t.status) for t in created] == [
        ("acme-eu", "Acme Europe", "active"),
        ("org_42", "Org 42", "active"),
    ]
    assert all(uuid.UUID(t.id) and before <= t.created <= t.updated for t in created)


def test_a_taken_customer_id_is_an_issue(client: TrophyApi) -> None:
    create_tenant(client, "acme-eu")

    response = client.admin.tenants.with_raw_response.create(
        request=[
            CreateTenantRequestItem(customer_id="acme-eu", name="Again"),
            CreateTenantRequestItem(customer_id="acme-us", name="US"),
            CreateTenantRequestItem(customer_id="acme-us", name="US again"),
        ]
    )

    assert response.status_code == 201
    assert [t.customer_id for t in response.data.created] == ["acme-us"]
    assert [(i.index, i.severity, i.message) for i in response.data.issues] == [
        (0, "error", 'Customer ID "acme-eu" already exists in this environment'),
        (2, "error", 'Customer ID "acme-us" already exists in this environment'),
    ]


def test_list_get_and_update(client: TrophyApi) -> None:
    first, second = create_tenant(client, "a", "A"), create_tenant(client, "b", "B")

    # The environment's default tenant is not one of the customer's tenants.
    assert client.admin.tenants.list() == [first, second]
    assert client.admin.tenants.list(limit=1, skip=1) == [second]
    assert client.admin.tenants.get(first.id) == first

    response = client.admin.tenants.update(
        request=[
            UpdateTenantRequestItem(id=first.id, name="A renamed", customer_id="a-2"),
            UpdateTenantRequestItem(id=second.id, customer_id="a-2"),
        ]
    )

    (updated,) = response.updated
    assert (updated.id, updated.customer_id, updated.name) == (first.id, "a-2", "A renamed")
    assert updated.updated >= first.updated
    assert [(i.id, i.message) for i in response.issues] == [
        (second.id, 'Customer ID "a-2" already exists in this environment')
    ]
    assert client.admin.tenants.get(first.id) == updated


def test_get_of_an_unknown_tenant_raises_not_found(client: TrophyApi) -> None:
    with pytest.raises(NotFoundError) as caught:
        client.admin.tenants.get(str(uuid.uuid4()))

    assert error_message(caught.value) == "Tenant not found by ID"


def test_a_deleted_tenant_is_gone_and_its_customer_id_free_again(
    client: TrophyApi, make_client: MakeClient, org: OrganizationWithKey
) -> None:
    tenant = create_tenant(client, "acme-eu")
    scoped = make_client(org.admin_key, tenant_id="acme-eu")
    scoped.users.create(id="user-1")
    unknown = str(uuid.uuid4())

    response = client.admin.tenants.delete(ids=[tenant.id, unknown])

    assert response.deleted == [DeletedResource(id=tenant.id)]
    assert [(i.id, i.message) for i in response.issues] == [(unknown, "Tenant not found by ID")]
    assert client.admin.tenants.list() == []
    with pytest.raises(NotFoundError):
        client.admin.tenants.get(tenant.id)
    with pytest.raises(ApiError) as caught:
        scoped.users.get("user-1")
    assert caught.value.status_code == 404
    assert "acme-eu" in error_message(caught.value)

    again = create_tenant(client, "acme-eu")
    assert again.id != tenant.id
    with pytest.raises(ApiError) as fresh:
        scoped.users.get("user-1")  # the new tenant starts empty
    assert fresh.value.status_code == 404


def test_an_unknown_tenant_id_is_a_404_on_both_apis(
    make_client: MakeClient, org: OrganizationWithKey
) -> None:
    scoped = make_client(org.admin_key, tenant_id="no-such-customer")

    for call in (
        lambda: scoped.users.identify("user-1"),
        lambda: scoped.metrics.event("words", user={"id": "user-1"}, value=1),
        lambda: scoped.admin.metrics.list(),
        lambda: scoped.admin.settings.get(),
    ):
        with pytest.raises(ApiError) as caught:
            call()
        assert caught.value.status_code == 404
        assert "no-such-customer" in error_message(caught.value)


def test_data_in_one_tenant_is_invisible_in_another(
    client: TrophyApi, make_client: MakeClient, org: OrganizationWithKey
) -> None:
    create_tenant(client, "acme-eu")
    create_tenant(client, "acme-us")
    eu = make_client(org.admin_key, tenant_id="acme-eu")
    us = make_client(org.admin_key, tenant_id="acme-us")

    eu_words = create_metric(eu, "words", "EU words")
    create_attribute(eu, "plan", "user")
    eu.users.create(id="user-1", name="EU Ada", attributes={"plan": "pro"})
    assert eu.metrics.event("words", user={"id": "user-1"}, value=5).total == 5

    # Invisible from the default tenant and from the other customer's tenant.
    for other in (client, us):
        assert other.admin.metrics.list() == []
        assert other.admin.attributes.list() == []
        with pytest.raises(NotFoundError):
            other.admin.metrics.get(eu_words.id)
        with pytest.raises(ApiError) as caught:
            other.users.get("user-1")
        assert caught.value.status_code == 404
        with pytest.raises(ApiError) as unknown_metric:
            other.metrics.event("words", user={"id": "user-1"}, value=1)
        assert unknown_metric.value.status_code == 404

    # The same keys and user ids live independently in each tenant.
    us_words = create_metric(us, "words", "US words")
    assert us_words.id != eu_words.id
    assert us.metrics.event("words", user={"id": "user-1"}, value=2).total == 2
    assert us.users.get("user-1").name is None
    assert us.users.single_metric("user-1", "words").name == "US words"
    assert eu.users.single_metric("user-1", "words").current == 5
    assert eu.users.get("user-1").attributes == {"plan": "pro"}
    assert [m.id for m in eu.admin.metrics.list()] == [eu_words.id]


def test_a_tenant_made_outside_the_api_is_addressed_by_its_customer_id(
    make_client: MakeClient, org: OrganizationWithKey, other_tenant: object
) -> None:
    scoped = make_client(org.admin_key, tenant_id="customer-b")

    assert scoped.users.identify("user-1", name="B").name == "B"
    assert [t.customer_id for t in scoped.admin.tenants.list()] == ["customer-b"]
