"""Every dashboard page renders for staff, and the pipeline's records are read-only."""

import datetime as dt
from typing import Any

import pytest
from django.contrib import admin
from django.utils import timezone

from apps.accounts.models import ApiKey, Environment, Organization, Tenant
from apps.metrics.models import Metric, MetricDailyChange, MetricEvent
from apps.pipeline.models import QueuedEvent
from apps.users.choices import AttributeType
from apps.users.models import Attribute, EndUser
from tests.dashboard.conftest import admin_url, page_main, record_events
from tests.factories import AttributeFactory, EndUserFactory, OrganizationWithKey

OUR_APPS = {"accounts", "users", "metrics", "pipeline"}


@pytest.fixture
def world(org: OrganizationWithKey, tenant: Tenant, other_tenant: Tenant, metric: Metric) -> dict:
    """One object of every model the dashboard shows."""
    user = EndUserFactory(tenant=tenant, external_id="alice", email="alice@example.com")
    record_events(tenant, user, metric, 3)
    org.application_key("alice")
    AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)
    QueuedEvent.objects.create(
        tenant=tenant,
        seq=0,
        payload={"metric": "words", "user": {"id": "alice"}, "value": 1},
        accepted_at=timezone.now(),
    )
    return {
        Organization: org.organization,
        Environment: org.environment,
        Tenant: other_tenant,
        ApiKey: ApiKey.objects.filter(kind="application").get(),
        EndUser: user,
        Attribute: Attribute.objects.get(),
        Metric: metric,
        MetricEvent: MetricEvent.objects.first(),
        QueuedEvent: QueuedEvent.objects.get(),
    }


def test_every_model_of_the_service_has_a_dashboard_page(world: dict) -> None:
    registered = {m for m in admin.site._registry if m._meta.app_label in OUR_APPS}
    assert registered == set(world)


def test_dashboard_needs_a_staff_login(client: Any, world: dict) -> None:
    response = client.get(admin_url(Metric))
    assert response.status_code == 302
    assert "/dashboard/login/" in response["Location"]


def test_dashboard_index_lists_every_app(staff_client: Any, world: dict) -> None:
    response = staff_client.get("/dashboard/")
    assert response.status_code == 200
    for model in world:
        if model is QueuedEvent:
            # The pipeline's own table: reachable, not worth a place on the home page.
            assert admin_url(model).encode() not in response.content
            assert staff_client.get(admin_url(model)).status_code == 200
        else:
            assert admin_url(model).encode() in response.content


def test_the_home_page_shows_the_tenant_at_a_glance(
    staff_client: Any, tenant: Tenant, metric: Metric
) -> None:
    today = timezone.localdate()
    users = [EndUserFactory(tenant=tenant, external_id=f"u{i}") for i in range(4)]
    for user, days_ago, events in ((0, 0, 3), (1, 0, 1), (0, 1, 2), (2, 20, 1), (3, 40, 1)):
        MetricDailyChange.objects.create(
            tenant=tenant,
            user=users[user],
            metric=metric,
            date=today - dt.timedelta(days=days_ago),
            change=events,
            events=events,
        )

    response = staff_client.get("/dashboard/")

    numbers = response.context["overview"]
    assert (numbers.users, numbers.dau, numbers.mau, response.context["events_today"]) == (
        4,
        2,
        3,
        4,
    )
    bars = response.context["event_bars"]
    assert [bar.events for bar in bars] == [0, 0, 0, 0, 0, 2, 4]
    assert [bar.height for bar in bars][-2:] == [50, 100]
    page = response.content.decode()
    assert admin_url(Metric, "add") in page  # the tasks
    assert 'action="/dashboard/users/enduser/"' in page  # the user search


@pytest.mark.parametrize(
    "model",
    [
        Organization,
        Environment,
        Tenant,
        ApiKey,
        EndUser,
        Attribute,
        Metric,
        MetricEvent,
        QueuedEvent,
    ],
)
def test_changelist_and_change_page_render(staff_client: Any, world: dict, model: type) -> None:
    assert staff_client.get(admin_url(model)).status_code == 200
    obj = world[model]
    response = staff_client.get(admin_url(model, "change", obj.pk))
    assert response.status_code == 200


@pytest.mark.parametrize("model", [Organization, Environment, Tenant, ApiKey, Attribute, Metric])
def test_add_page_renders_for_configuration(staff_client: Any, world: dict, model: type) -> None:
    assert staff_client.get(admin_url(model, "add")).status_code == 200


def test_default_tenant_change_page_renders(staff_client: Any, tenant: Tenant) -> None:
    response = staff_client.get(admin_url(Tenant, "change", tenant.pk))
    assert response.status_code == 200
    assert b'name="customer_id"' not in response.content


@pytest.mark.parametrize("model", [MetricEvent, QueuedEvent, EndUser])
def test_recorded_state_is_read_only(staff_client: Any, world: dict, model: type) -> None:
    obj = world[model]
    count = model.objects.count()
    assert staff_client.get(admin_url(model, "add")).status_code == 403
    assert staff_client.post(admin_url(model, "add"), {}).status_code == 403
    assert staff_client.post(admin_url(model, "change", obj.pk), {}).status_code == 403
    assert staff_client.get(admin_url(model, "delete", obj.pk)).status_code == 403
    assert staff_client.post(admin_url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    page = staff_client.get(admin_url(model, "change", obj.pk))
    assert page.status_code == 200
    assert b'type="submit"' not in page_main(page.content)
    assert model.objects.count() == count


def test_bulk_delete_is_not_offered_for_recorded_state(staff_client: Any, world: dict) -> None:
    event = world[MetricEvent]
    response = staff_client.post(
        admin_url(MetricEvent),
        {"action": "delete_selected", "_selected_action": [event.pk], "post": "yes"},
    )
    assert MetricEvent.objects.filter(pk=event.pk).exists()
    assert response.status_code in (200, 302)
