"""Organizations, environments, tenants and API keys in the dashboard: every write goes through
the accounts services, and a full key is shown exactly once."""

import re
from typing import Any

from apps.accounts.choices import ApiKeyKind, TenantStatus
from apps.accounts.keys import key_hash, key_split
from apps.accounts.models import ApiKey, Environment, Organization, Tenant
from tests.dashboard.conftest import admin_url, message_texts
from tests.factories import OrganizationWithKey

_FULL_KEY = re.compile(r'<code id="api-key">(\S+\.\S+)</code>')


def shown_key(response: Any) -> str:
    """The full key from the page that shows it once, after the redirect of an add."""
    found = _FULL_KEY.search(response.content.decode())
    assert found is not None, message_texts(response)
    full_key = found.group(1)
    # Never in a cookie (the messages framework's default storage) nor in a message.
    for cookie in response.client.cookies.values():
        assert full_key.split(".")[1] not in cookie.value
    assert not any(full_key in text for text in message_texts(response))
    return full_key


def assert_stored_only_as_hash(full_key: str) -> ApiKey:
    parts = key_split(full_key)
    assert parts is not None
    prefix, secret = parts
    api_key = ApiKey.objects.get(prefix=prefix)
    assert api_key.secret_hash == key_hash(secret)
    stored = [str(v) for v in ApiKey.objects.filter(pk=api_key.pk).values().get().values()]
    assert not any(secret in value for value in stored)
    return api_key


def test_creating_an_organization_shows_its_key_once_and_stores_only_a_hash(
    staff_client: Any,
) -> None:
    response = staff_client.post(admin_url(Organization, "add"), {"name": "Globex"}, follow=True)
    assert response.status_code == 200

    full_key = shown_key(response)
    api_key = assert_stored_only_as_hash(full_key)
    organization = Organization.objects.get(name="Globex")
    assert api_key.kind == ApiKeyKind.ADMIN
    assert api_key.environment.organization == organization
    # organization_create made the production environment and its default tenant.
    environment = Environment.objects.get(organization=organization)
    assert environment.key == "production"
    assert environment.tenants.get().is_default

    assert response.redirect_chain[-1][0] == admin_url(Organization, "change", organization.pk)
    again = staff_client.get(admin_url(Organization, "change", organization.pk))
    assert full_key.encode() not in again.content
    detail = staff_client.get(admin_url(ApiKey, "change", api_key.pk))
    assert full_key.split(".")[1].encode() not in detail.content
    assert api_key.secret_hash.encode() not in detail.content


def test_a_blank_organization_name_is_a_form_error(staff_client: Any) -> None:
    response = staff_client.post(admin_url(Organization, "add"), {"name": "   "})
    assert response.status_code == 200
    assert response.context["form"].errors
    assert not Organization.objects.exists()


def test_renaming_an_organization(staff_client: Any, org: OrganizationWithKey) -> None:
    url = admin_url(Organization, "change", org.organization.pk)
    # What the browser posts: the name and the management form of the read-only inline.
    inline = {
        "environments-TOTAL_FORMS": 1,
        "environments-INITIAL_FORMS": 1,
        "environments-0-id": org.environment.pk,
        "environments-0-organization": org.organization.pk,
    }
    response = staff_client.post(url, {"name": "Acme Inc", **inline})
    assert response.status_code == 302
    org.organization.refresh_from_db()
    assert org.organization.name == "Acme Inc"


def test_organizations_cannot_be_deleted_from_the_dashboard(
    staff_client: Any, org: OrganizationWithKey
) -> None:
    url = admin_url(Organization, "delete", org.organization.pk)
    assert staff_client.post(url, {"post": "yes"}).status_code == 403
    assert Organization.objects.filter(pk=org.organization.pk).exists()


def test_creating_an_environment_gives_it_a_default_tenant(
    staff_client: Any, org: OrganizationWithKey
) -> None:
    data = {"organization": org.organization.pk, "name": "Staging", "key": "staging", "priority": 2}
    response = staff_client.post(admin_url(Environment, "add"), data)
    assert response.status_code == 302
    environment = Environment.objects.get(key="staging")
    assert environment.tenants.get().is_default


def test_a_duplicate_or_malformed_environment_key_is_a_form_error(
    staff_client: Any, org: OrganizationWithKey
) -> None:
    for key in ("production", "no spaces"):
        data = {"organization": org.organization.pk, "name": "X", "key": key, "priority": 2}
        response = staff_client.post(admin_url(Environment, "add"), data)
        assert response.status_code == 200
        assert response.context["form"].errors
    assert Environment.objects.count() == 1


def test_creating_an_admin_key_shows_it_once(staff_client: Any, org: OrganizationWithKey) -> None:
    data = {"kind": "admin", "environment": org.environment.pk, "name": "CI"}
    response = staff_client.post(admin_url(ApiKey, "add"), data, follow=True)
    assert response.status_code == 200
    full_key = shown_key(response)
    api_key = assert_stored_only_as_hash(full_key)
    assert (api_key.kind, api_key.name, api_key.environment) == ("admin", "CI", org.environment)

    again = staff_client.get(admin_url(ApiKey, "change", api_key.pk))
    assert again.status_code == 200
    assert full_key.encode() not in again.content
    # The new key works against the admin API.
    listed = staff_client.get("/admin/v1/metrics", HTTP_X_API_KEY=full_key)
    assert listed.status_code == 200


def test_creating_an_application_key_binds_it_to_tenant_and_user(
    staff_client: Any, org: OrganizationWithKey, tenant: Tenant
) -> None:
    data = {
        "kind": "application",
        "environment": org.environment.pk,
        "tenant": tenant.pk,
        "user_id": "alice",
    }
    response = staff_client.post(admin_url(ApiKey, "add"), data, follow=True)
    api_key = assert_stored_only_as_hash(shown_key(response))
    assert (api_key.tenant, api_key.user_id) == (tenant, "alice")


def test_key_kind_and_binding_must_match(
    staff_client: Any, org: OrganizationWithKey, tenant: Tenant
) -> None:
    before = ApiKey.objects.count()
    bad = [
        {"kind": "admin", "environment": org.environment.pk, "tenant": tenant.pk},
        {"kind": "application", "environment": org.environment.pk, "user_id": "alice"},
        {"kind": "application", "environment": org.environment.pk, "tenant": tenant.pk},
    ]
    for data in bad:
        response = staff_client.post(admin_url(ApiKey, "add"), data)
        assert response.status_code == 200
        assert response.context["form"].errors
    assert ApiKey.objects.count() == before


def test_api_key_list_shows_key_metadata_but_never_the_hash(
    staff_client: Any, org: OrganizationWithKey
) -> None:
    org.application_key("alice")
    response = staff_client.get(admin_url(ApiKey))
    assert response.status_code == 200
    content = response.content.decode()
    for api_key in ApiKey.objects.all():
        assert api_key.prefix in content
        assert api_key.secret_hash not in content
    assert "alice" in content
    for column in ("column-kind", "column-environment", "column-tenant_column", "column-user_id"):
        assert column in content
    assert "column-last_used_at" in content
    assert "column-is_active" in content


def test_api_keys_are_not_editable(staff_client: Any, org: OrganizationWithKey) -> None:
    api_key = ApiKey.objects.get()
    url = admin_url(ApiKey, "change", api_key.pk)
    response = staff_client.post(url, {"name": "renamed", "secret_hash": "0" * 64})
    assert response.status_code == 403
    api_key.refresh_from_db()
    assert api_key.name != "renamed"
    assert api_key.secret_hash != "0" * 64


def test_revoking_keys_deactivates_them(staff_client: Any, org: OrganizationWithKey) -> None:
    extra_key = org.new_admin_key()
    revoked = ApiKey.objects.get(prefix=key_split(extra_key)[0])  # type: ignore[index]
    response = staff_client.post(
        admin_url(ApiKey), {"action": "revoke", "_selected_action": [revoked.pk]}, follow=True
    )
    assert response.status_code == 200
    assert "Revoked 1 API key." in message_texts(response)
    revoked.refresh_from_db()
    assert revoked.is_active is False
    assert ApiKey.objects.filter(is_active=True).count() == 1
    # A revoked key no longer authenticates.
    assert staff_client.get("/admin/v1/metrics", HTTP_X_API_KEY=extra_key).status_code == 401
    assert staff_client.get("/admin/v1/metrics", HTTP_X_API_KEY=org.admin_key).status_code == 200


def test_deleting_a_key_goes_through_the_service(
    staff_client: Any, org: OrganizationWithKey
) -> None:
    api_key = ApiKey.objects.get()
    response = staff_client.post(admin_url(ApiKey, "delete", api_key.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not ApiKey.objects.exists()


def test_creating_a_tenant(staff_client: Any, org: OrganizationWithKey) -> None:
    data = {"environment": org.environment.pk, "customer_id": "cust-1", "name": "Customer 1"}
    response = staff_client.post(admin_url(Tenant, "add"), data)
    assert response.status_code == 302
    tenant = Tenant.objects.get(customer_id="cust-1")
    assert (tenant.name, tenant.is_default, tenant.status) == ("Customer 1", False, "active")


def test_a_tenant_needs_a_unique_customer_id(
    staff_client: Any, org: OrganizationWithKey, other_tenant: Tenant
) -> None:
    for customer_id in ("", other_tenant.customer_id):
        data = {"environment": org.environment.pk, "customer_id": customer_id, "name": "X"}
        response = staff_client.post(admin_url(Tenant, "add"), data)
        assert response.status_code == 200
        assert response.context["form"].errors
    assert Tenant.objects.count() == 2


def tenant_form(tenant: Tenant, **changes: Any) -> dict[str, Any]:
    data = {
        "customer_id": tenant.customer_id or "",
        "name": tenant.name,
        "control_ratio": tenant.control_ratio,
        "user_activation_window": tenant.user_activation_window,
        "aggregation_period": tenant.aggregation_period,
        "reporting_tz": tenant.reporting_tz,
    }
    if tenant.is_default:
        del data["customer_id"]
    data.update(changes)
    return data


def test_editing_a_tenant_and_its_settings(staff_client: Any, other_tenant: Tenant) -> None:
    version = other_tenant.config_version
    data = tenant_form(
        other_tenant,
        customer_id="customer-b2",
        name="Renamed",
        control_ratio=20,
        aggregation_period="monthly",
        reporting_tz="Pacific/Kiritimati",
        brand_color="#123456",
        logo="https://example.com/l.png",
        font="BOOK_SERIF",
    )
    response = staff_client.post(admin_url(Tenant, "change", other_tenant.pk), data)
    assert response.status_code == 302, response.context["form"].errors
    other_tenant.refresh_from_db()
    assert (other_tenant.customer_id, other_tenant.name) == ("customer-b2", "Renamed")
    assert other_tenant.control_ratio == 20
    assert other_tenant.aggregation_period == "monthly"
    assert other_tenant.reporting_tz == "Pacific/Kiritimati"
    assert other_tenant.branding == {
        "brandColor": "#123456",
        "logo": {"url": "https://example.com/l.png"},
        "font": "BOOK_SERIF",
    }
    page = staff_client.get(admin_url(Tenant, "change", other_tenant.pk)).content.decode()
    assert 'value="https://example.com/l.png"' in page  # the form shows what is stored
    # settings_update invalidates the configuration cache.
    assert other_tenant.config_version > version

    # Clearing a branding input removes that setting.
    data.update(logo="", font="")
    staff_client.post(admin_url(Tenant, "change", other_tenant.pk), data)
    other_tenant.refresh_from_db()
    assert other_tenant.branding == {"brandColor": "#123456"}


def test_settings_the_admin_api_refuses_are_form_errors(
    staff_client: Any, other_tenant: Tenant
) -> None:
    url = admin_url(Tenant, "change", other_tenant.pk)
    bad = [
        {"control_ratio": 101},
        {"user_activation_window": 0},
        {"reporting_tz": "Mars/Olympus"},
        {"brand_color": "blue"},
        {"logo": "not a url"},
        {"font": "COMIC_SANS"},
    ]
    for change in bad:
        response = staff_client.post(url, tenant_form(other_tenant, **change))
        assert response.status_code == 200, change
        errors = response.context["form"].errors
        assert set(errors) == set(change), change  # the error is next to the input
    fresh = Tenant.objects.get(pk=other_tenant.pk)
    assert (fresh.control_ratio, fresh.branding) == (0, {})
    assert fresh.config_version == other_tenant.config_version


def test_changing_a_customer_id_to_a_taken_one_shows_the_service_error(
    staff_client: Any, org: OrganizationWithKey, other_tenant: Tenant
) -> None:
    third = Tenant.objects.create(environment=org.environment, customer_id="c3", name="C3")
    url = admin_url(Tenant, "change", third.pk)
    response = staff_client.post(url, tenant_form(third, customer_id=other_tenant.customer_id))
    assert response.status_code == 200
    assert response.context["form"].errors
    third.refresh_from_db()
    assert third.customer_id == "c3"


def test_default_tenant_settings_are_editable(staff_client: Any, tenant: Tenant) -> None:
    url = admin_url(Tenant, "change", tenant.pk)
    response = staff_client.post(url, tenant_form(tenant, user_activation_window=30))
    assert response.status_code == 302
    tenant.refresh_from_db()
    assert tenant.user_activation_window == 30
    assert tenant.customer_id is None


def test_deleting_a_tenant_archives_it(staff_client: Any, other_tenant: Tenant) -> None:
    url = admin_url(Tenant, "delete", other_tenant.pk)
    confirm = staff_client.get(url)
    assert confirm.status_code == 200
    assert b"archived: its data is kept" in confirm.content
    response = staff_client.post(url, {"post": "yes"})
    assert response.status_code == 302
    other_tenant.refresh_from_db()
    assert other_tenant.status == TenantStatus.ARCHIVED


def test_the_default_tenant_cannot_be_deleted(staff_client: Any, tenant: Tenant) -> None:
    url = admin_url(Tenant, "delete", tenant.pk)
    assert staff_client.post(url, {"post": "yes"}).status_code == 403


def test_bulk_delete_including_the_default_tenant_archives_nothing(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant
) -> None:
    response = staff_client.post(
        admin_url(Tenant),
        {
            "action": "delete_selected",
            "_selected_action": [tenant.pk, other_tenant.pk],
            "post": "yes",
        },
        follow=True,
    )
    assert response.status_code == 200
    assert "The default tenant cannot be deleted" in message_texts(response)
    assert not Tenant.objects.filter(status=TenantStatus.ARCHIVED).exists()


def test_the_organization_page_lists_its_environments(
    staff_client: Any, org: OrganizationWithKey
) -> None:
    page = staff_client.get(admin_url(Organization, "change", org.organization.pk))
    content = page.content.decode()
    assert 'id="environments-group"' in content
    assert admin_url(Environment, "change", org.environment.pk) in content
    assert 'name="staff"' in content  # a superuser's input


def test_an_api_key_page_is_read_only_with_its_delete_link(
    staff_client: Any, org: OrganizationWithKey
) -> None:
    api_key = ApiKey.objects.get()
    response = staff_client.get(admin_url(ApiKey, "change", api_key.pk))
    assert response.context["form"].fields == {}
    content = response.content.decode()
    assert 'name="_save"' not in content
    assert admin_url(ApiKey, "delete", api_key.pk) in content
    assert admin_url(Environment, "change", org.environment.pk) in content


def test_an_environment_priority_beyond_the_column_is_a_form_error(
    staff_client: Any, org: OrganizationWithKey
) -> None:
    url = admin_url(Environment, "change", org.environment.pk)
    data = {"name": org.environment.name, "priority": str(10**30)}

    response = staff_client.post(url, data)

    assert response.status_code == 200
    assert response.context["form"].errors["priority"]
    org.environment.refresh_from_db()
    assert org.environment.priority == 1
