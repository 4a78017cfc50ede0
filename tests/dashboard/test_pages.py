"""Every dashboard page renders for staff, and the pipeline's records are read-only."""

from typing import Any

import pytest
from django.contrib import admin
from django.utils import timezone

from apps.accounts.models import ApiKey, Environment, Organization, Tenant
from apps.metrics.models import Metric, MetricEvent
from apps.pipeline.models import QueuedEvent
from apps.users.choices import AttributeType
from apps.users.models import Attribute, EndUser
from tests.dashboard.conftest import admin_url, record_events
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
        assert admin_url(model).encode() in response.content


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
    assert b'type="submit"' not in page.content.split(b'id="content-main"')[1]
    assert model.objects.count() == count


def test_bulk_delete_is_not_offered_for_recorded_state(staff_client: Any, world: dict) -> None:
    event = world[MetricEvent]
    response = staff_client.post(
        admin_url(MetricEvent),
        {"action": "delete_selected", "_selected_action": [event.pk], "post": "yes"},
    )
    assert MetricEvent.objects.filter(pk=event.pk).exists()
    assert response.status_code in (200, 302)
