"""End-users are listed (the selected tenant only), searched and filtered; attribute definitions go
through services. tests/dashboard/test_user_page.py covers the end-user page itself."""

import datetime as dt
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.metrics.admin import RECENT_EVENTS
from apps.metrics.models import Metric, MetricEvent
from apps.users.choices import AttributeType
from apps.users.models import Attribute, EndUser
from apps.users.selectors import attribute_definitions
from tests.dashboard.conftest import admin_url, record_events, switch_tenant
from tests.factories import AttributeFactory, EndUserFactory, OrganizationWithKey


def listed(client: Any, query: str = "") -> list[str]:
    response = client.get(admin_url(EndUser) + query)
    assert response.status_code == 200
    return sorted(user.external_id for user in response.context["cl"].result_list)


def test_end_users_are_searched_by_id_name_and_email(staff_client: Any, tenant: Tenant) -> None:
    EndUserFactory(tenant=tenant, external_id="alice-1", email="alice@example.com")
    EndUserFactory(tenant=tenant, external_id="bob-2", email="bob@example.org", name="Robert")
    EndUserFactory(tenant=tenant, external_id="carol-3", email=None)

    assert listed(staff_client) == ["alice-1", "bob-2", "carol-3"]
    assert listed(staff_client, "?q=bob-2") == ["bob-2"]
    assert listed(staff_client, "?q=alice@example.com") == ["alice-1"]
    assert listed(staff_client, "?q=example.org") == ["bob-2"]
    assert listed(staff_client, "?q=rob") == ["bob-2"]
    assert listed(staff_client, "?q=nobody") == []
    assert b"Search by end-user id, name or email." in staff_client.get(admin_url(EndUser)).content


def test_the_list_shows_the_selected_tenant_and_filters_by_control(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant
) -> None:
    EndUserFactory(tenant=tenant, external_id="a", control=True)
    EndUserFactory(tenant=tenant, external_id="b")
    EndUserFactory(tenant=other_tenant, external_id="c", control=True)

    assert listed(staff_client) == ["a", "b"]
    assert listed(staff_client, "?control__exact=1") == ["a"]
    switch_tenant(staff_client, other_tenant)
    assert listed(staff_client) == ["c"]
    assert listed(staff_client, "?control__exact=0") == []
    # One tenant at a time: no tenant column, no tenant filter.
    page = staff_client.get(admin_url(EndUser)).content.decode()
    assert "column-tenant_column" not in page
    assert "tenant__id__exact" not in page


def test_end_user_page_shows_totals_and_only_the_latest_events(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    user = EndUserFactory(tenant=tenant, external_id="alice", device_tokens=["secret-token"])
    events = record_events(tenant, user, metric, RECENT_EVENTS + 10)

    response = staff_client.get(admin_url(EndUser, "change", user.pk))

    assert response.status_code == 200
    content = response.content.decode()
    shown = content
    total = RECENT_EVENTS + 10
    # The total is on the metrics card ...
    assert f'<td class="user-num user-strong">{total}</td>' in shown
    # ... and the latest events on theirs. Cells: value, then total after.
    events_card = shown.split('id="user-end-user-recent-events"')[1]
    assert events_card.count("<td>Words (words)</td>") == RECENT_EVENTS
    assert len(events) == total
    assert f"<td>1</td><td>{total}</td>" in events_card
    assert "<td>1</td><td>11</td>" in events_card
    assert "<td>1</td><td>10</td>" not in events_card
    assert f"?user={user.pk}" in events_card
    assert "1 push token" in shown
    assert "secret-token" not in content


def test_end_user_page_without_events(staff_client: Any, tenant: Tenant) -> None:
    user = EndUserFactory(tenant=tenant)
    response = staff_client.get(admin_url(EndUser, "change", user.pk))
    assert response.status_code == 200
    assert "No events yet." in response.content.decode()


def test_end_user_page_queries_do_not_grow_with_history(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    user = EndUserFactory(tenant=tenant)
    today = timezone.now()
    record_events(tenant, user, metric, 2, start=today - dt.timedelta(days=1))
    url = admin_url(EndUser, "change", user.pk)
    staff_client.get(url)  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    for days_ago in range(2, 62):
        record_events(tenant, user, metric, 2, start=today - dt.timedelta(days=days_ago))
    with CaptureQueriesContext(connection) as many:
        staff_client.get(url)
    assert MetricEvent.objects.filter(user=user).count() == 122
    assert len(many) == len(few)


def test_end_user_list_queries_do_not_grow_with_rows(
    staff_client: Any, tenant: Tenant, django_assert_max_num_queries: Any
) -> None:
    EndUserFactory.create_batch(2, tenant=tenant)
    staff_client.get(admin_url(EndUser))  # warm per-process caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(admin_url(EndUser))
    EndUserFactory.create_batch(100, tenant=tenant)
    # Other organizations' users are neither listed nor counted.
    for name in ("B", "C"):
        EndUserFactory.create_batch(20, tenant=OrganizationWithKey(name).tenant)
    assert EndUser.objects.count() == 142
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(admin_url(EndUser))
    assert len(response.context["cl"].result_list) == 100
    assert len(many) == len(few)
    # One of them reads the listed users' latest events (their metric totals' moments).
    with django_assert_max_num_queries(8):
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
    assert response.context["form"].errors
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
