"""Admin API: tenants and environments (reference §2.2 A53-A58, §3.10, §4.9), and the
Tenant-ID header that scopes both APIs to a tenant."""

import datetime as dt
import uuid
from typing import Any

import pytest
import time_machine
from rest_framework.test import APIClient

from apps.accounts.choices import TenantStatus
from apps.accounts.models import Tenant
from apps.accounts.services import environment_create, tenant_create
from apps.metrics.models import Metric
from tests.admin_issues import admin_issue
from tests.factories import MetricFactory, OrganizationWithKey

URL = "/admin/v1/tenants"


def create(client: Any, *items: dict[str, Any]) -> list[dict[str, Any]]:
    response = client.post(URL, list(items))
    assert response.status_code == 201, response.content
    assert response.json()["issues"] == []
    return response.json()["created"]


def scoped(org: OrganizationWithKey, customer_id: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=org.admin_key, HTTP_TENANT_ID=customer_id)
    return client


def parse_time(value: str) -> dt.datetime:
    assert value.endswith("Z"), value
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


# --- create ----------------------------------------------------------------------------------


def test_admin_tenant_create_renders_admin_tenant(api_client, tenant):
    response = api_client.post(URL, [{"customerId": "acme-42", "name": "Acme 42"}])

    assert response.status_code == 201
    created = Tenant.objects.get(customer_id="acme-42")
    body = response.json()
    assert body["issues"] == []
    [item] = body["created"]
    assert set(item) == {"id", "customerId", "name", "status", "created", "updated"}
    assert item["id"] == str(created.public_id)
    assert (item["customerId"], item["name"], item["status"]) == ("acme-42", "Acme 42", "active")
    assert parse_time(item["created"]) == created.created
    assert parse_time(item["updated"]) == created.updated
    assert created.environment == tenant.environment
    assert created.status == TenantStatus.ACTIVE
    assert not created.is_default


def test_admin_tenant_created_is_addressable_by_its_customer_id(api_client, org):
    create(api_client, {"customerId": "acme-42", "name": "Acme 42"})
    client = scoped(org, "acme-42")

    response = client.post("/admin/v1/metrics", [{"name": "Words", "key": "words"}], format="json")

    assert response.status_code == 201
    assert Metric.objects.get().tenant.customer_id == "acme-42"


def test_admin_tenant_customer_id_already_in_use_is_an_issue(api_client, other_tenant):
    response = api_client.post(URL, [{"customerId": "customer-b", "name": "Impostor"}])

    assert response.status_code == 200
    assert response.json() == {
        "created": [],
        "issues": [
            admin_issue('Customer ID "customer-b" already exists in this environment', index=0)
        ],
    }
    assert Tenant.objects.filter(customer_id="customer-b").count() == 1
    other_tenant.refresh_from_db()
    assert other_tenant.name == "Customer B"


def test_admin_tenant_duplicate_customer_id_within_one_request(api_client):
    response = api_client.post(
        URL,
        [
            {"customerId": "c1", "name": "First"},
            {"customerId": "c1", "name": "Second"},
            {"customerId": "c2", "name": "Third"},
        ],
    )

    assert response.status_code == 201
    body = response.json()
    assert [t["name"] for t in body["created"]] == ["First", "Third"]
    assert body["issues"] == [
        admin_issue('Customer ID "c1" already exists in this environment', index=1)
    ]
    assert Tenant.objects.get(customer_id="c1").name == "First"


def test_admin_tenant_customer_id_may_repeat_in_another_organization(api_client, other_tenant):
    stranger = OrganizationWithKey("Stranger")
    api_client.credentials(HTTP_X_API_KEY=stranger.admin_key)

    [created] = create(api_client, {"customerId": "customer-b", "name": "Their B"})

    assert created["customerId"] == "customer-b"
    assert Tenant.objects.filter(customer_id="customer-b").count() == 2


def test_admin_tenant_customer_id_may_repeat_in_another_environment(org, other_tenant):
    staging = environment_create(org.organization, name="Staging", key="staging", priority=2)

    again = tenant_create(staging, customer_id="customer-b", name="Staging B")

    assert again.environment == staging


@pytest.mark.parametrize(
    ("field", "value"),
    [("customerId", "c" * 256), ("name", "n" * 256), ("customerId", ""), ("name", "")],
)
def test_admin_tenant_over_long_or_empty_strings_are_issues(api_client, org, field, value):
    item = {"customerId": "c1", "name": "N", field: value}

    response = api_client.post(URL, [item])

    assert response.status_code == 200
    [issue] = response.json()["issues"]
    assert issue["index"] == 0
    assert issue["message"].startswith(f"{field}:")
    assert not Tenant.objects.filter(is_default=False).exists()


def test_admin_tenant_customer_id_of_255_characters_is_accepted(api_client, org):
    [created] = create(api_client, {"customerId": "c" * 255, "name": "Long"})

    assert scoped(org, "c" * 255).get("/admin/v1/settings").status_code == 200
    assert created["customerId"] == "c" * 255


@pytest.mark.parametrize("field", ["customerId", "name"])
def test_admin_tenant_required_fields(api_client, org, field):
    item = {"customerId": "c1", "name": "N"}
    item.pop(field)

    response = api_client.post(URL, [item])

    assert response.status_code == 200
    assert response.json()["issues"][0]["message"].startswith(f"{field}:")


def test_admin_tenant_status_cannot_be_set_on_create(api_client, org):
    response = api_client.post(URL, [{"customerId": "c1", "name": "N", "status": "archived"}])

    assert response.status_code == 200
    assert response.json()["issues"][0]["message"] == "status: unknown field"


# --- list and get ----------------------------------------------------------------------------


def test_admin_tenant_list_omits_the_default_tenant(api_client, tenant, other_tenant):
    response = api_client.get(URL)

    assert response.status_code == 200
    assert [t["id"] for t in response.json()] == [str(other_tenant.public_id)]
    assert str(tenant.public_id) not in response.text


def test_admin_tenant_list_is_the_same_from_any_tenant_of_the_environment(
    api_client, other_tenant_client, other_tenant
):
    create(api_client, {"customerId": "c3", "name": "Third"})

    assert other_tenant_client.get(URL).json() == api_client.get(URL).json()
    assert [t["customerId"] for t in api_client.get(URL).json()] == ["customer-b", "c3"]


def test_admin_tenant_list_omits_tenants_of_other_organizations(api_client, other_tenant):
    stranger = OrganizationWithKey("Stranger")
    tenant_create(stranger.environment, customer_id="theirs", name="Theirs")

    assert [t["customerId"] for t in api_client.get(URL).json()] == ["customer-b"]


def test_admin_tenant_of_another_environment_is_invisible(api_client, org, other_tenant):
    staging = environment_create(org.organization, name="Staging", key="staging", priority=2)
    staged = tenant_create(staging, customer_id="staged", name="Staged")

    assert [t["customerId"] for t in api_client.get(URL).json()] == ["customer-b"]
    assert api_client.get(f"{URL}/{staged.public_id}").status_code == 404
    assert scoped(org, "staged").get("/admin/v1/metrics").status_code == 404


def test_admin_tenant_get_by_id(api_client, other_tenant):
    response = api_client.get(f"{URL}/{other_tenant.public_id}")

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == str(other_tenant.public_id)
    assert (body["customerId"], body["name"], body["status"]) == (
        "customer-b",
        "Customer B",
        "active",
    )


def test_admin_tenant_default_tenant_is_not_addressable_by_id(api_client, tenant):
    response = api_client.get(f"{URL}/{tenant.public_id}")

    assert response.status_code == 404
    assert response.json() == {"error": "Tenant not found by ID"}


def test_admin_tenant_of_another_organization_is_404(api_client, org):
    stranger = OrganizationWithKey("Stranger")
    theirs = tenant_create(stranger.environment, customer_id="theirs", name="Theirs")

    assert api_client.get(f"{URL}/{theirs.public_id}").status_code == 404
    patched = api_client.patch(URL, [{"id": str(theirs.public_id), "name": "Mine"}])
    deleted = api_client.delete(f"{URL}?ids={theirs.public_id}")

    assert patched.json()["issues"][0]["message"] == "Tenant not found by ID"
    assert deleted.json()["issues"][0]["message"] == "Tenant not found by ID"
    theirs.refresh_from_db()
    assert (theirs.name, theirs.status) == ("Theirs", TenantStatus.ACTIVE)


# --- update ----------------------------------------------------------------------------------


def test_admin_tenant_update_name_keeps_customer_id(api_client, other_tenant):
    response = api_client.patch(URL, [{"id": str(other_tenant.public_id), "name": "B Corp"}])

    assert response.status_code == 200
    [item] = response.json()["updated"]
    assert (item["customerId"], item["name"]) == ("customer-b", "B Corp")
    other_tenant.refresh_from_db()
    assert (other_tenant.customer_id, other_tenant.name) == ("customer-b", "B Corp")
    assert parse_time(item["updated"]) >= parse_time(item["created"])


def test_admin_tenant_update_moves_updated_but_not_created(api_client):
    with time_machine.travel(dt.datetime(2026, 1, 1, 9, 0, tzinfo=dt.UTC), tick=False):
        [created] = create(api_client, {"customerId": "c1", "name": "N"})
    with time_machine.travel(dt.datetime(2026, 1, 2, 9, 0, tzinfo=dt.UTC), tick=False):
        response = api_client.patch(URL, [{"id": created["id"], "name": "M"}])

    [updated] = response.json()["updated"]
    assert updated["created"] == created["created"] == "2026-01-01T09:00:00Z"
    assert updated["updated"] == "2026-01-02T09:00:00Z"


def test_admin_tenant_update_customer_id_moves_the_tenant_id_header(api_client, org, other_tenant):
    response = api_client.patch(
        URL, [{"id": str(other_tenant.public_id), "customerId": "customer-b2"}]
    )

    assert response.json()["updated"][0]["customerId"] == "customer-b2"
    other_tenant.refresh_from_db()
    assert (other_tenant.customer_id, other_tenant.name) == ("customer-b2", "Customer B")
    assert scoped(org, "customer-b2").get("/admin/v1/metrics").status_code == 200
    assert scoped(org, "customer-b").get("/admin/v1/metrics").status_code == 404


def test_admin_tenant_update_to_a_customer_id_in_use_is_an_issue(api_client, other_tenant):
    [third] = create(api_client, {"customerId": "c3", "name": "Third"})

    response = api_client.patch(URL, [{"id": third["id"], "customerId": "customer-b"}])

    assert response.json() == {
        "updated": [],
        "issues": [
            admin_issue(
                'Customer ID "customer-b" already exists in this environment', id=third["id"]
            )
        ],
    }
    assert Tenant.objects.get(public_id=third["id"]).customer_id == "c3"


def test_admin_tenant_update_to_its_own_customer_id_is_fine(api_client, other_tenant):
    item = {"id": str(other_tenant.public_id), "customerId": "customer-b", "name": "Same"}

    response = api_client.patch(URL, [item])

    assert response.json()["issues"] == []
    assert response.json()["updated"][0]["name"] == "Same"


@pytest.mark.parametrize(
    ("field", "value"),
    [("customerId", "c" * 256), ("name", "n" * 256), ("customerId", ""), ("name", None)],
)
def test_admin_tenant_invalid_update_values_are_issues(api_client, other_tenant, field, value):
    response = api_client.patch(URL, [{"id": str(other_tenant.public_id), field: value}])

    assert response.status_code == 200
    [issue] = response.json()["issues"]
    assert issue["message"].startswith(f"{field}:")
    other_tenant.refresh_from_db()
    assert (other_tenant.customer_id, other_tenant.name) == ("customer-b", "Customer B")


def test_admin_tenant_status_cannot_be_patched(api_client, other_tenant):
    response = api_client.patch(URL, [{"id": str(other_tenant.public_id), "status": "archived"}])

    assert response.json()["issues"][0]["message"] == "status: unknown field"
    other_tenant.refresh_from_db()
    assert other_tenant.status == TenantStatus.ACTIVE


# --- delete (archive) ------------------------------------------------------------------------


def test_admin_tenant_delete_archives_and_keeps_data(api_client, org, other_tenant):
    metric = MetricFactory(tenant=other_tenant, key="words")

    response = api_client.delete(f"{URL}?ids={other_tenant.public_id}")

    assert response.status_code == 200
    assert response.json() == {"deleted": [{"id": str(other_tenant.public_id)}], "issues": []}
    other_tenant.refresh_from_db()
    assert other_tenant.status == TenantStatus.ARCHIVED
    assert Metric.objects.filter(pk=metric.pk).exists()
    assert api_client.get(URL).json() == []
    assert api_client.get(f"{URL}/{other_tenant.public_id}").status_code == 404


def test_admin_tenant_archived_is_404_through_tenant_id(api_client, org, other_tenant):
    api_client.delete(f"{URL}?ids={other_tenant.public_id}")

    response = scoped(org, "customer-b").get("/admin/v1/metrics")

    assert response.status_code == 404
    assert response.json() == {"error": 'Tenant not found: "customer-b"'}
    app_response = scoped(org, "customer-b").get("/v1/users/u1")
    assert app_response.status_code == 404


def test_admin_tenant_archived_cannot_be_updated_or_deleted_again(api_client, other_tenant):
    api_client.delete(f"{URL}?ids={other_tenant.public_id}")

    patched = api_client.patch(URL, [{"id": str(other_tenant.public_id), "name": "Back"}])
    deleted = api_client.delete(f"{URL}?ids={other_tenant.public_id}")

    assert patched.json()["issues"][0]["message"] == "Tenant not found by ID"
    assert deleted.json()["issues"][0]["message"] == "Tenant not found by ID"
    other_tenant.refresh_from_db()
    assert other_tenant.name == "Customer B"


def test_admin_tenant_archived_customer_id_can_be_reused_with_fresh_data(
    api_client, org, other_tenant
):
    MetricFactory(tenant=other_tenant, key="old-metric")
    api_client.delete(f"{URL}?ids={other_tenant.public_id}")

    [reborn] = create(api_client, {"customerId": "customer-b", "name": "Customer B again"})

    assert reborn["id"] != str(other_tenant.public_id)
    assert [t["id"] for t in api_client.get(URL).json()] == [reborn["id"]]
    client = scoped(org, "customer-b")
    assert client.get("/admin/v1/metrics").json() == []
    assert client.get("/admin/v1/settings").json()["branding"]["appName"] == "Customer B again"
    assert Tenant.objects.filter(customer_id="customer-b").count() == 2


def test_admin_tenant_customer_id_of_an_archived_tenant_can_be_taken_by_update(
    api_client, other_tenant
):
    [third] = create(api_client, {"customerId": "c3", "name": "Third"})
    api_client.delete(f"{URL}?ids={other_tenant.public_id}")

    response = api_client.patch(URL, [{"id": third["id"], "customerId": "customer-b"}])

    assert response.json()["issues"] == []
    assert response.json()["updated"][0]["customerId"] == "customer-b"


def test_admin_tenant_archive_disables_its_application_keys(
    api_client, anon_client, org, other_tenant
):
    key = org.application_key("u1", tenant=other_tenant)
    anon_client.credentials(HTTP_X_API_KEY=key)
    assert anon_client.put("/v1/users/u1", {"name": "Ada"}).status_code == 200

    api_client.delete(f"{URL}?ids={other_tenant.public_id}")

    response = anon_client.get("/v1/users/u1")
    assert response.status_code == 401
    assert set(response.json()) == {"error"}


def test_admin_tenant_default_tenant_cannot_be_deleted(api_client, tenant):
    response = api_client.delete(f"{URL}?ids={tenant.public_id}")

    assert response.json()["deleted"] == []
    assert response.json()["issues"][0]["message"] == "Tenant not found by ID"
    tenant.refresh_from_db()
    assert tenant.status == TenantStatus.ACTIVE


def test_admin_tenant_may_archive_the_tenant_it_is_scoped_to(other_tenant_client, other_tenant):
    response = other_tenant_client.delete(f"{URL}?ids={other_tenant.public_id}")

    assert response.json()["deleted"] == [{"id": str(other_tenant.public_id)}]
    assert other_tenant_client.get(URL).status_code == 404


# --- the Tenant-ID header --------------------------------------------------------------------


def test_tenant_id_header_scopes_the_application_api(api_client, other_tenant_client):
    api_client.put("/v1/users/u1", {"name": "Default user"})

    assert other_tenant_client.get("/v1/users/u1").status_code == 404
    other_tenant_client.put("/v1/users/u1", {"name": "Other user"})
    assert api_client.get("/v1/users/u1").json()["name"] == "Default user"
    assert other_tenant_client.get("/v1/users/u1").json()["name"] == "Other user"


@pytest.mark.parametrize("customer_id", ["unknown", "CUSTOMER-B", "customer", "x" * 1000])
def test_tenant_id_header_must_name_an_active_tenant_exactly(org, other_tenant, customer_id):
    response = scoped(org, customer_id).get("/admin/v1/metrics")

    assert response.status_code == 404
    assert set(response.json()) == {"error"}


def test_tenant_id_of_another_organization_is_404(org):
    stranger = OrganizationWithKey("Stranger")
    tenant_create(stranger.environment, customer_id="theirs", name="Theirs")

    response = scoped(org, "theirs").get("/admin/v1/metrics")

    assert response.status_code == 404
    assert response.json() == {"error": 'Tenant not found: "theirs"'}


def test_tenant_id_uuid_of_a_tenant_is_not_its_customer_id(org, other_tenant):
    # The header carries the customer's own id (reference §4.9), not our UUID.
    assert scoped(org, str(other_tenant.public_id)).get("/admin/v1/metrics").status_code == 404


# --- environments ----------------------------------------------------------------------------


def test_admin_environments_list_shape(api_client):
    response = api_client.get("/admin/v1/environments")

    assert response.status_code == 200
    assert response.json() == [{"name": "Production", "key": "production", "priority": 1}]


def test_admin_environments_list_is_ordered_by_priority(api_client, org):
    environment_create(org.organization, name="Development", key="development", priority=3)
    environment_create(org.organization, name="Staging", key="staging", priority=2)

    response = api_client.get("/admin/v1/environments")

    assert [e["key"] for e in response.json()] == ["production", "staging", "development"]
    assert [e["priority"] for e in response.json()] == [1, 2, 3]


def test_admin_environments_list_omits_other_organizations(api_client, org):
    OrganizationWithKey("Stranger")

    assert len(api_client.get("/admin/v1/environments").json()) == 1


def test_admin_environments_are_read_only(api_client):
    assert api_client.post("/admin/v1/environments", [{"name": "x"}]).status_code == 405


def test_admin_tenant_ids_are_uuids(api_client):
    [created] = create(api_client, {"customerId": "c1", "name": "N"})

    assert str(uuid.UUID(created["id"])) == created["id"]
