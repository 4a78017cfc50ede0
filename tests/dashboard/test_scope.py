"""The header's tenant switcher and the organization scope of every dashboard page."""

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from apps.accounts.models import ApiKey, Organization, Tenant
from apps.accounts.services import tenant_create
from apps.metrics.models import Metric
from tests.dashboard.conftest import admin_url, org_staff, switch_tenant
from tests.factories import MetricFactory, OrganizationWithKey


@pytest.fixture
def rival(db: Any) -> OrganizationWithKey:
    return OrganizationWithKey("Zenith")


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def grant(user: Any, *codenames: str) -> None:
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))


def listed(client: Client, model: type) -> list[Any]:
    response = client.get(admin_url(model))
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


def test_a_superuser_switches_between_every_tenant(
    staff_client: Client, tenant: Tenant, other_tenant: Tenant, rival: OrganizationWithKey
) -> None:
    mine = MetricFactory(tenant=tenant, key="words")
    theirs = MetricFactory(tenant=rival.tenant, key="steps")

    page = staff_client.get(reverse("admin:index")).content.decode()
    assert 'id="tenant-switcher-select"' in page
    for choice in (tenant, other_tenant, rival.tenant):
        assert f'<option value="{choice.pk}"' in page
    # The first organization's default tenant is selected until another is picked.
    assert listed(staff_client, Metric) == [mine]

    switch_tenant(staff_client, rival.tenant)
    assert listed(staff_client, Metric) == [theirs]
    # A configuration page finds objects within the selected tenant only (config_pages.py).
    assert staff_client.get(admin_url(Metric, "change", mine.pk)).status_code == 404


def test_staff_see_only_their_organizations_tenants(
    org: OrganizationWithKey, tenant: Tenant, rival: OrganizationWithKey
) -> None:
    member = org_staff(org, username="member")
    grant(member, "view_metric", "view_tenant")
    client = logged_in(member)
    mine = MetricFactory(tenant=tenant, key="words")
    theirs = MetricFactory(tenant=rival.tenant, key="steps")

    assert listed(client, Metric) == [mine]
    assert client.get(admin_url(Metric, "change", theirs.pk)).status_code == 404
    assert rival.tenant not in listed(client, Tenant)
    # Switching to another organization's tenant is refused and changes nothing.
    response = client.post(reverse("admin:tenant-switch"), {"tenant": rival.tenant.pk})
    assert response.status_code == 302
    assert listed(client, Metric) == [mine]
    page = client.get(reverse("admin:index")).content.decode()
    # One tenant: it is simply selected, with no menu to pick from.
    assert 'id="tenant-switcher-select"' not in page
    assert "Acme / Production / default tenant" in page


def test_staff_of_no_organization_see_nothing(db: Any, tenant: Tenant) -> None:
    loner = get_user_model().objects.create_user(username="loner", is_staff=True)
    grant(loner, "view_metric")
    MetricFactory(tenant=tenant, key="words")
    client = logged_in(loner)

    assert listed(client, Metric) == []
    page = client.get(reverse("admin:index")).content.decode()
    assert "ask an administrator to add you to an organization" in page


def test_add_forms_create_in_the_selected_tenant_and_ignore_another(
    staff_client: Client, tenant: Tenant, other_tenant: Tenant
) -> None:
    form = staff_client.get(admin_url(Metric, "add")).content.decode()
    assert 'name="tenant"' not in form.split('id="metric_form"')[1]  # only in the switcher

    # A configuration page has no tenant input: what it adds goes into the selected tenant.
    data = {"key": "words", "name": "Words", "unit_type": "number", "units": ""}
    created = staff_client.post(admin_url(Metric, "add"), {**data, "tenant": other_tenant.pk})
    assert created.status_code == 302
    assert Metric.objects.get().tenant == tenant


def test_switching_on_a_change_page_returns_to_the_list(
    staff_client: Client, tenant: Tenant, other_tenant: Tenant
) -> None:
    metric = MetricFactory(tenant=tenant, key="words")
    change = admin_url(Metric, "change", metric.pk)
    response = staff_client.post(
        reverse("admin:tenant-switch"), {"tenant": other_tenant.pk, "next": change}
    )
    assert response["Location"] == admin_url(Metric)
    outside = staff_client.post(
        reverse("admin:tenant-switch"), {"tenant": tenant.pk, "next": "https://evil.example/"}
    )
    assert outside["Location"] == reverse("admin:index")
    assert staff_client.get(reverse("admin:tenant-switch")).status_code == 405


def test_api_keys_are_those_of_the_selected_environment(
    staff_client: Client, org: OrganizationWithKey, rival: OrganizationWithKey
) -> None:
    assert {key.environment for key in listed(staff_client, ApiKey)} == {org.environment}
    switch_tenant(staff_client, rival.tenant)
    assert {key.environment for key in listed(staff_client, ApiKey)} == {rival.environment}


def test_organizations_list_only_the_staff_members_own(
    org: OrganizationWithKey, rival: OrganizationWithKey
) -> None:
    member = org_staff(org, username="member")
    grant(member, "view_organization")
    assert listed(logged_in(member), Organization) == [org.organization]


def test_a_new_tenant_appears_in_the_switcher(staff_client: Client, org: Any) -> None:
    added = tenant_create(org.environment, customer_id="customer-c", name="Customer C")
    page = staff_client.get(reverse("admin:index")).content.decode()
    assert "customer-c" in page
    switch_tenant(staff_client, added)


def test_a_superuser_adds_staff_to_an_organization(
    staff_client: Client, org: OrganizationWithKey
) -> None:
    member = get_user_model().objects.create_user(username="member", is_staff=True)
    inline = {
        "environments-TOTAL_FORMS": 1,
        "environments-INITIAL_FORMS": 1,
        "environments-0-id": org.environment.pk,
        "environments-0-organization": org.organization.pk,
    }
    url = admin_url(Organization, "change", org.organization.pk)
    response = staff_client.post(url, {"name": "Acme", "staff": [member.pk], **inline})
    assert response.status_code == 302
    assert list(org.organization.staff.all()) == [member]


def test_staff_cannot_change_who_belongs_to_their_organization(
    org: OrganizationWithKey,
) -> None:
    member = org_staff(org, username="member")
    grant(member, "view_organization", "change_organization")
    other = get_user_model().objects.create_user(username="other", is_staff=True)
    client = logged_in(member)
    inline = {
        "environments-TOTAL_FORMS": 1,
        "environments-INITIAL_FORMS": 1,
        "environments-0-id": org.environment.pk,
        "environments-0-organization": org.organization.pk,
    }
    url = admin_url(Organization, "change", org.organization.pk)
    response = client.post(url, {"name": "Acme 2", "staff": [other.pk], **inline})
    assert response.status_code == 302
    org.organization.refresh_from_db()
    assert org.organization.name == "Acme 2"
    assert list(org.organization.staff.all()) == [member]
    # Shown, not an input.
    page = client.get(url).content.decode()
    assert 'name="staff"' not in page
    assert '<div class="readonly">member</div>' in page


def test_a_key_is_made_in_the_environment_the_key_list_shows(
    staff_client: Client, org: OrganizationWithKey, rival: OrganizationWithKey
) -> None:
    switch_tenant(staff_client, rival.tenant)
    form = staff_client.get(admin_url(ApiKey, "add")).context["form"]
    assert list(form.fields["environment"].queryset) == [rival.environment]
    assert list(form.fields["tenant"].queryset) == [rival.tenant]

    # A key for the first organization's environment would never be listed, nor shown once.
    elsewhere = {"kind": "admin", "environment": org.environment.pk, "name": "CI"}
    assert staff_client.post(admin_url(ApiKey, "add"), elsewhere).status_code == 200
    assert not ApiKey.objects.filter(name="CI").exists()

    here = {**elsewhere, "environment": rival.environment.pk}
    response = staff_client.post(admin_url(ApiKey, "add"), here, follow=True)
    assert '<code id="api-key">' in response.content.decode()
    assert ApiKey.objects.get(name="CI") in listed(staff_client, ApiKey)
