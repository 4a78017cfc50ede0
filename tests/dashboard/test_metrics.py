"""Metrics are configured through the metric services; events are only shown."""

import datetime as dt
from typing import Any
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from apps.metrics.models import Metric, MetricEvent
from apps.metrics.selectors import metric_definitions
from tests.dashboard.conftest import admin_url, message_texts, record_events, switch_tenant
from tests.factories import EndUserFactory, MetricFactory, OrganizationWithKey


def metric_form(tenant: Tenant, **changes: Any) -> dict[str, Any]:
    data = {"tenant": tenant.pk, "key": "steps", "name": "Steps", "unit_type": "number"}
    data["units"] = ""
    data.update(changes)
    return data


def test_creating_a_metric_bumps_the_config_version(staff_client: Any, tenant: Tenant) -> None:
    version = tenant.config_version
    assert "steps" not in metric_definitions(tenant)

    response = staff_client.post(admin_url(Metric, "add"), metric_form(tenant))

    assert response.status_code == 302
    metric = Metric.objects.get(tenant=tenant, key="steps")
    assert metric.name == "Steps"
    tenant.refresh_from_db()
    assert tenant.config_version > version
    # The pipeline's cached snapshot sees the new metric at once.
    assert "steps" in metric_definitions(tenant)


def test_a_metric_made_in_the_dashboard_takes_events(
    staff_client: Any, org: OrganizationWithKey, tenant: Tenant
) -> None:
    staff_client.post(admin_url(Metric, "add"), metric_form(tenant))
    response = staff_client.post(
        "/v1/metrics/steps/event",
        {"user": {"id": "u1"}, "value": 3},
        content_type="application/json",
        HTTP_X_API_KEY=org.admin_key,
    )
    assert response.status_code == 201, response.content


def test_a_duplicate_metric_key_is_an_error_not_a_500(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    response = staff_client.post(admin_url(Metric, "add"), metric_form(tenant, key=metric.key))
    assert response.status_code == 200
    assert response.context["form"].errors
    assert Metric.objects.filter(tenant=tenant).count() == 1


def test_the_same_key_in_another_tenant_is_fine(
    staff_client: Any, other_tenant: Tenant, metric: Metric
) -> None:
    switch_tenant(staff_client, other_tenant)
    response = staff_client.post(
        admin_url(Metric, "add"), metric_form(other_tenant, key=metric.key)
    )
    assert response.status_code == 302
    assert Metric.objects.filter(key=metric.key).count() == 2


@pytest.mark.parametrize("key", ["has space", " padded", "caf\u00e9", "\u0663", "a.b"])
def test_a_malformed_metric_key_is_a_form_error(
    staff_client: Any, tenant: Tenant, key: str
) -> None:
    response = staff_client.post(admin_url(Metric, "add"), metric_form(tenant, key=key))
    assert response.status_code == 200
    assert "key" in response.context["form"].errors
    assert not Metric.objects.exists()


def test_a_service_refusal_is_shown_on_the_form_and_keeps_the_input(
    staff_client: Any, tenant: Tenant
) -> None:
    version = tenant.config_version
    data = metric_form(tenant, key="revenue", unit_type="currency", units="dollars")

    response = staff_client.post(admin_url(Metric, "add"), data)

    assert response.status_code == 200
    form = response.context["form"]
    # About two inputs: above the form, naming them by their labels.
    assert form.non_field_errors() == [
        "“Units” must be an ISO 4217 currency code (such as USD) when “Unit type” is currency"
    ]
    assert form.data["key"] == "revenue"
    assert b"ISO 4217" in response.content
    assert not Metric.objects.exists()
    tenant.refresh_from_db()
    assert tenant.config_version == version


def test_editing_a_metric_goes_through_the_service(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    version = Tenant.objects.get(pk=tenant.pk).config_version
    url = admin_url(Metric, "change", metric.pk)
    data = {"name": "Revenue", "unit_type": "currency", "units": "EUR"}

    response = staff_client.post(url, data)

    assert response.status_code == 302
    metric.refresh_from_db()
    assert (metric.key, metric.name, metric.unit_type, metric.units) == (
        "words",
        "Revenue",
        "currency",
        "EUR",
    )
    assert Tenant.objects.get(pk=tenant.pk).config_version > version


def test_emptying_the_units_input_clears_the_units(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    # "" is the units' own value (none), not an input left out.
    metric.units = "words"
    metric.save()

    response = staff_client.post(
        admin_url(Metric, "change", metric.pk),
        {"name": "Words", "unit_type": "number", "units": ""},
    )

    assert response.status_code == 302
    metric.refresh_from_db()
    assert metric.units == ""


def test_an_invalid_metric_edit_changes_nothing(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    url = admin_url(Metric, "change", metric.pk)
    response = staff_client.post(url, {"name": "Renamed", "unit_type": "currency", "units": "$"})
    assert response.status_code == 200
    assert "ISO 4217" in str(response.context["form"].non_field_errors())
    metric.refresh_from_db()
    assert (metric.name, metric.unit_type) == ("Words", "number")


def test_deleting_a_metric_counts_what_goes_with_it(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    record_events(tenant, EndUserFactory(tenant=tenant), metric, 7)
    version = Tenant.objects.get(pk=tenant.pk).config_version
    url = admin_url(Metric, "delete", metric.pk)

    Achievement.objects.create(
        tenant=tenant, name="Novelist", trigger="metric", metric=metric, metric_value=1000
    )

    confirm = staff_client.get(url)
    assert confirm.status_code == 200
    counts = dict(confirm.context["model_count"])
    assert counts["metric events (deleted with it)"] == 7
    assert counts["achievements (deleted with it)"] == 1
    # Configuration that goes with the metric is named, with a link to it.
    page = confirm.content.decode()
    assert "Achievement (deleted with it):" in page
    assert "Novelist" in page

    # A user has events: the key is typed, or nothing goes (tests/dashboard/test_guard_rails.py).
    assert staff_client.post(url, {"post": "yes"}).status_code == 200
    assert Metric.objects.exists()
    confirmed = {"post": "yes", f"confirm-{metric.pk}": metric.key}
    assert staff_client.post(url, confirmed).status_code == 302
    assert not Metric.objects.exists()
    assert not MetricEvent.objects.exists()
    assert not Achievement.objects.exists()
    assert Tenant.objects.get(pk=tenant.pk).config_version > version


def test_the_metric_page_says_where_the_metric_is_used(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    page = staff_client.get(admin_url(Metric, "change", metric.pk)).content.decode()
    assert "Nothing yet" in page
    Achievement.objects.create(
        tenant=tenant, name="Novelist", trigger="metric", metric=metric, metric_value=1000
    )
    page = staff_client.get(admin_url(Metric, "change", metric.pk)).content.decode()
    assert "Achievements: " in page
    assert "Novelist" in page


def test_bulk_deleting_metrics_goes_through_the_service(staff_client: Any, tenant: Tenant) -> None:
    metrics = MetricFactory.create_batch(3, tenant=tenant)
    version = Tenant.objects.get(pk=tenant.pk).config_version
    response = staff_client.post(
        admin_url(Metric),
        {"action": "delete_selected", "_selected_action": [m.pk for m in metrics], "post": "yes"},
        follow=True,
    )
    assert response.status_code == 200
    assert "Successfully deleted 3 metrics." in message_texts(response)
    assert not Metric.objects.exists()
    assert Tenant.objects.get(pk=tenant.pk).config_version >= version + 3


def test_events_are_filtered_by_metric_date_and_user(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    other_metric = MetricFactory(tenant=tenant, key="pages")
    alice, bob = EndUserFactory(tenant=tenant), EndUserFactory(tenant=tenant)
    record_events(tenant, alice, metric, 2)
    record_events(tenant, bob, other_metric, 3)
    record_events(tenant, bob, metric, 4, start=timezone.now() - dt.timedelta(days=30))

    def shown(query: str) -> int:
        response = staff_client.get(admin_url(MetricEvent) + query)
        assert response.status_code == 200
        return len(response.context["cl"].result_list)

    assert shown("") == 9
    assert shown(f"?metric__id__exact={metric.pk}") == 6
    assert shown(f"?user={bob.pk}") == 7
    since = timezone.now() - dt.timedelta(days=7)
    assert shown("?" + urlencode({"occurred_at__gte": since.isoformat()})) == 5
    assert shown(f"?q={alice.external_id}") == 2


def count_queries(client: Any, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_event_list_queries_do_not_grow_with_rows(
    staff_client: Any, django_assert_max_num_queries: Any
) -> None:
    # Several organizations: a default tenant's label reads its environment and organization.
    def populate(names: list[str], events_each: int) -> None:
        for name in names:
            org = OrganizationWithKey(name)
            metric = MetricFactory(tenant=org.tenant)
            for _ in range(3):
                record_events(org.tenant, EndUserFactory(tenant=org.tenant), metric, events_each)

    populate(["A"], 1)
    few = count_queries(staff_client, admin_url(MetricEvent))
    populate(["B", "C", "D", "E"], 10)
    assert MetricEvent.objects.count() == 123
    assert count_queries(staff_client, admin_url(MetricEvent)) == few
    with django_assert_max_num_queries(8):
        staff_client.get(admin_url(MetricEvent))


def test_control_characters_are_refused_in_dashboard_names(
    staff_client: Any, tenant: Tenant
) -> None:
    response = staff_client.post(
        admin_url(Metric, "add"), metric_form(tenant, key="words", name="Words\x1b[31m")
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert "must not contain control characters" in str(errors["name"])
    assert not Metric.objects.exists()
