"""End-users are shown, searched and filtered; attribute definitions go through services."""

from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Tenant
from apps.metrics.admin import RECENT_EVENTS
from apps.metrics.models import Metric, MetricEvent
from apps.users.choices import AttributeType
from apps.users.models import Attribute, EndUser
from apps.users.selectors import attribute_definitions
from tests.dashboard.conftest import admin_url, record_events
from tests.factories import AttributeFactory, EndUserFactory, MetricFactory, OrganizationWithKey


def listed(client: Any, query: str = "") -> list[str]:
    response = client.get(admin_url(EndUser) + query)
    assert response.status_code == 200
    return sorted(user.external_id for user in response.context["cl"].result_list)


def test_end_users_are_searched_by_id_and_email(staff_client: Any, tenant: Tenant) -> None:
    EndUserFactory(tenant=tenant, external_id="alice-1", email="alice@example.com")
    EndUserFactory(tenant=tenant, external_id="bob-2", email="bob@example.org")
    EndUserFactory(tenant=tenant, external_id="carol-3", email=None)

    assert listed(staff_client) == ["alice-1", "bob-2", "carol-3"]
    assert listed(staff_client, "?q=bob-2") == ["bob-2"]
    assert listed(staff_client, "?q=alice@example.com") == ["alice-1"]
    assert listed(staff_client, "?q=example.org") == ["bob-2"]
    assert listed(staff_client, "?q=nobody") == []


def test_end_users_are_filtered_by_tenant_and_control(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant
) -> None:
    EndUserFactory(tenant=tenant, external_id="a", control=True)
    EndUserFactory(tenant=tenant, external_id="b")
    EndUserFactory(tenant=other_tenant, external_id="c", control=True)

    assert listed(staff_client, f"?tenant__id__exact={other_tenant.pk}") == ["c"]
    assert listed(staff_client, "?control__exact=1") == ["a", "c"]
    assert listed(staff_client, f"?tenant__id__exact={tenant.pk}&control__exact=0") == ["b"]
    # The tenant filter names tenants by organization, environment and customer id.
    page = staff_client.get(admin_url(EndUser)).content.decode()
    assert "Acme / Production / default tenant" in page
    assert "Acme / Production / customer-b" in page


def test_end_user_page_shows_totals_and_only_the_latest_events(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    user = EndUserFactory(tenant=tenant, external_id="alice", device_tokens=["secret-token"])
    events = record_events(tenant, user, metric, RECENT_EVENTS + 10)

    response = staff_client.get(admin_url(EndUser, "change", user.pk))

    assert response.status_code == 200
    content = response.content.decode()
    assert "Metric totals" in content
    assert "<td>words</td><td>Words</td><td>60</td>" in content
    assert content.count("<td>words</td>") == 1 + RECENT_EVENTS
    # Cells: value, then total after. Events 11 to 60 are the latest 50.
    assert len(events) == 60
    assert "<td>1</td><td>60</td>" in content
    assert "<td>1</td><td>11</td>" in content
    assert "<td>1</td><td>10</td>" not in content
    assert f"?user={user.pk}" in content
    assert "secret-token" not in content


def test_end_user_page_without_events(staff_client: Any, tenant: Tenant) -> None:
    user = EndUserFactory(tenant=tenant)
    response = staff_client.get(admin_url(EndUser, "change", user.pk))
    assert response.status_code == 200


def test_end_user_page_queries_do_not_grow_with_history(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    user = EndUserFactory(tenant=tenant)
    record_events(tenant, user, metric, 2)
    url = admin_url(EndUser, "change", user.pk)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    for extra in MetricFactory.create_batch(4, tenant=tenant):
        record_events(tenant, user, extra, 30)
    with CaptureQueriesContext(connection) as many:
        staff_client.get(url)
    assert MetricEvent.objects.filter(user=user).count() == 122
    assert len(many) == len(few)


def test_end_user_list_queries_do_not_grow_with_rows(
    staff_client: Any, django_assert_max_num_queries: Any
) -> None:
    def populate(names: list[str], users_each: int) -> None:
        for name in names:
            org = OrganizationWithKey(name)
            EndUserFactory.create_batch(users_each, tenant=org.tenant)

    populate(["A"], 2)
    staff_client.get(admin_url(EndUser))  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(admin_url(EndUser))
    populate(["B", "C", "D", "E", "F"], 20)
    assert EndUser.objects.count() == 102
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(admin_url(EndUser))
    assert len(response.context["cl"].result_list) == 100
    assert len(many) == len(few)
    with django_assert_max_num_queries(7):
        staff_client.get(admin_url(EndUser) + "?q=user")


def attribute_form(tenant: Tenant, **changes: Any) -> dict[str, Any]:
    return {"tenant": tenant.pk, "name": "Plan", "key": "plan", "type": "user", **changes}


def test_creating_an_attribute_goes_through_the_service(staff_client: Any, tenant: Tenant) -> None:
    version = tenant.config_version
    response = staff_client.post(admin_url(Attribute, "add"), attribute_form(tenant))
    assert response.status_code == 302
    assert Attribute.objects.get().key == "plan"
    tenant.refresh_from_db()
    assert tenant.config_version > version
    assert "plan" in attribute_definitions(tenant).user_keys


def test_a_duplicate_attribute_key_is_an_error_not_a_500(staff_client: Any, tenant: Tenant) -> None:
    AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)
    response = staff_client.post(admin_url(Attribute, "add"), attribute_form(tenant))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    # The same key for the other kind of attribute is allowed.
    response = staff_client.post(admin_url(Attribute, "add"), attribute_form(tenant, type="event"))
    assert response.status_code == 302
    assert Attribute.objects.count() == 2


def test_editing_and_deleting_an_attribute_go_through_the_service(
    staff_client: Any, tenant: Tenant
) -> None:
    attribute = AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)
    version = Tenant.objects.get(pk=tenant.pk).config_version

    url = admin_url(Attribute, "change", attribute.pk)
    response = staff_client.post(url, {"name": "Subscription plan", "key": "other"})
    assert response.status_code == 302
    attribute.refresh_from_db()
    assert (attribute.name, attribute.key) == ("Subscription plan", "plan")
    edited = Tenant.objects.get(pk=tenant.pk).config_version
    assert edited > version

    response = staff_client.post(admin_url(Attribute, "delete", attribute.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not Attribute.objects.exists()
    assert Tenant.objects.get(pk=tenant.pk).config_version > edited
