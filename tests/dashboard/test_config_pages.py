"""The plumbing of configuration pages (apps/accounts/admin/config_pages.py), through the webhook
endpoint pages, its first user: a valid POST calls the service once, a refusal is shown on the
input it names with the input kept, and objects are found within the selected tenant only."""

import re
from typing import Any

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth.models import Permission
from django.test import Client

from apps.accounts.models import Tenant
from apps.core.errors import ValidationError
from apps.webhooks import configuration
from apps.webhooks.configuration import webhook_endpoint_create
from apps.webhooks.domain import WebhookEndpointSettings
from apps.webhooks.models import WebhookEndpoint
from tests.dashboard.conftest import admin_url, message_texts, org_staff, switch_tenant
from tests.factories import OrganizationWithKey

URL = "http://127.0.0.1:9/hook"


@pytest.fixture(autouse=True)
def _local_urls(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_HTTP = True
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]


@pytest.fixture
def endpoint(tenant: Tenant) -> WebhookEndpoint:
    created, _secret = webhook_endpoint_create(
        tenant, WebhookEndpointSettings(url=URL, description="CRM sync")
    )
    return created


class Spy:
    """Counts the calls of a service and passes them on (or raises `refusal`)."""

    def __init__(self, monkeypatch: Any, name: str, refusal: Exception | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.real = getattr(configuration, name)
        self.refusal = refusal
        monkeypatch.setattr(configuration, name, self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        if self.refusal is not None:
            raise self.refusal
        return self.real(*args, **kwargs)


def form(**changes: Any) -> dict[str, Any]:
    return {"url": URL, "description": "CRM sync", "status": "active", "events": [], **changes}


def test_a_refusal_naming_one_field_is_worded_with_its_label_next_to_its_input(
    staff_client: Any, tenant: Tenant, monkeypatch: Any
) -> None:
    refusal = ValidationError("{description} is taken", fields="description", code="unique")
    Spy(monkeypatch, "webhook_endpoint_create", refusal)

    response = staff_client.post(admin_url(WebhookEndpoint, "add"), form())

    assert response.context["form"].errors["description"] == ["“Description” is taken"]


def test_a_refusal_naming_two_fields_is_worded_with_their_labels_above_the_form(
    staff_client: Any, tenant: Tenant, monkeypatch: Any
) -> None:
    refusal = ValidationError(
        "{description} must differ from {url}", fields=("description", "url"), code="conflict"
    )
    Spy(monkeypatch, "webhook_endpoint_create", refusal)

    response = staff_client.post(admin_url(WebhookEndpoint, "add"), form())

    shown = response.context["form"]
    assert shown.non_field_errors() == ["“Description” must differ from “URL”"]
    assert "description" not in shown.errors


def test_an_add_calls_the_service_once_and_logs_it(
    staff_client: Any, tenant: Tenant, monkeypatch: Any
) -> None:
    spy = Spy(monkeypatch, "webhook_endpoint_create")

    response = staff_client.post(admin_url(WebhookEndpoint, "add"), form(events=["streak.lost"]))

    assert response.status_code == 302
    [(args, kwargs)] = spy.calls
    assert args == (
        tenant,
        WebhookEndpointSettings(
            url=URL, description="CRM sync", status="active", events=["streak.lost"]
        ),
    )
    assert kwargs == {}
    created = WebhookEndpoint.objects.get()
    assert LogEntry.objects.get().action_flag == ADDITION
    assert LogEntry.objects.get().object_id == str(created.pk)


def test_a_change_calls_the_service_once_with_what_changed(
    staff_client: Any, endpoint: WebhookEndpoint, monkeypatch: Any
) -> None:
    spy = Spy(monkeypatch, "webhook_endpoint_update")
    url = admin_url(WebhookEndpoint, "change", endpoint.pk)

    response = staff_client.post(url, form(description="Billing", _continue="1"))

    assert response.status_code == 302
    assert response["Location"] == url
    [(args, kwargs)] = spy.calls
    assert (args, kwargs) == (
        (endpoint.tenant, endpoint, WebhookEndpointSettings(description="Billing")),
        {},
    )
    assert WebhookEndpoint.objects.get().description == "Billing"
    entry = LogEntry.objects.get()
    assert (entry.action_flag, entry.get_change_message()) == (CHANGE, "Changed Description.")
    assert message_texts(staff_client.get(url))[0].endswith("You may edit it again below.")

    # Nothing changed: no call, no history entry.
    assert staff_client.post(url, form(description="Billing")).status_code == 302
    assert len(spy.calls) == 1
    assert LogEntry.objects.count() == 1


@pytest.mark.parametrize(
    ("refusal", "field"),
    [
        (
            ValidationError("Too many endpoints for this description", fields="description"),
            "description",
        ),
        (ValidationError("The tenant has too many endpoints"), None),
    ],
)
def test_a_refused_save_keeps_the_input_and_shows_the_message_where_it_belongs(
    staff_client: Any, tenant: Tenant, monkeypatch: Any, refusal: Exception, field: str | None
) -> None:
    spy = Spy(monkeypatch, "webhook_endpoint_create", refusal)
    data = form(description="Kept", events=["streak.lost"])

    response = staff_client.post(admin_url(WebhookEndpoint, "add"), data)

    assert response.status_code == 200
    assert len(spy.calls) == 1
    shown = response.context["form"]
    errors = shown.errors[field] if field else shown.non_field_errors()
    assert list(errors) == [str(refusal)]
    content = response.content.decode()
    assert 'value="Kept"' in content
    assert re.search(r'value="streak.lost"[^>]* checked', content)
    assert "Please correct the error below." in content
    assert not WebhookEndpoint.objects.exists()
    assert not LogEntry.objects.exists()


def test_a_delete_calls_the_service_once(
    staff_client: Any, endpoint: WebhookEndpoint, monkeypatch: Any
) -> None:
    spy = Spy(monkeypatch, "webhook_endpoint_delete")

    response = staff_client.post(admin_url(WebhookEndpoint, "delete", endpoint.pk), {"post": "yes"})

    assert response["Location"] == admin_url(WebhookEndpoint)
    assert len(spy.calls) == 1
    assert not WebhookEndpoint.objects.exists()
    assert LogEntry.objects.get().action_flag == DELETION


def test_a_refused_delete_keeps_the_object_and_says_why(
    staff_client: Any, endpoint: WebhookEndpoint, monkeypatch: Any
) -> None:
    Spy(monkeypatch, "webhook_endpoint_delete", ValidationError("Still in use"))
    url = admin_url(WebhookEndpoint, "delete", endpoint.pk)

    response = staff_client.post(url, {"post": "yes"}, follow=True)

    assert message_texts(response) == ["Still in use"]
    assert WebhookEndpoint.objects.exists()
    assert not LogEntry.objects.exists()


def test_the_lists_bulk_delete_confirms_then_goes_through_the_service(
    staff_client: Any, tenant: Tenant, endpoint: WebhookEndpoint, monkeypatch: Any
) -> None:
    other, _ = webhook_endpoint_create(tenant, WebhookEndpointSettings(url=URL + "2"))
    spy = Spy(monkeypatch, "webhook_endpoint_delete")
    data = {"action": "delete_selected", "_selected_action": [endpoint.pk, other.pk]}

    confirm = staff_client.post(admin_url(WebhookEndpoint), data)
    assert confirm.status_code == 200
    assert "Webhook endpoints: 2" in confirm.content.decode()
    assert not spy.calls

    response = staff_client.post(admin_url(WebhookEndpoint), {**data, "post": "yes"}, follow=True)

    assert len(spy.calls) == 2
    assert not WebhookEndpoint.objects.exists()
    assert message_texts(response) == ["Successfully deleted 2 webhook endpoints."]


def test_another_tenants_endpoint_is_not_found(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant, endpoint: WebhookEndpoint
) -> None:
    switch_tenant(staff_client, other_tenant)
    views = ("change", "delete", "secret", "rotate_secret", "send_test", "redeliver_failed")

    for view in views:
        url = admin_url(WebhookEndpoint, view, endpoint.pk)
        assert staff_client.get(url).status_code == 404, view
        assert staff_client.post(url, {**form(url=URL + "x"), "post": "yes"}).status_code == 404
    assert staff_client.get(admin_url(WebhookEndpoint, "change", "not-an-id")).status_code == 404

    endpoint.refresh_from_db()
    assert (endpoint.url, endpoint.previous_secret) == (URL, "")
    switch_tenant(staff_client, tenant)
    assert staff_client.get(admin_url(WebhookEndpoint, "change", endpoint.pk)).status_code == 200


def test_an_add_writes_into_the_selected_tenant(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant
) -> None:
    switch_tenant(staff_client, other_tenant)
    # A tenant in the input is no input of the form: it is ignored.
    staff_client.post(admin_url(WebhookEndpoint, "add"), form(tenant=tenant.pk))
    assert WebhookEndpoint.objects.get().tenant == other_tenant


def test_viewers_see_the_form_disabled_and_cannot_post(
    org: OrganizationWithKey, endpoint: WebhookEndpoint
) -> None:
    viewer = org_staff(org, username="viewer")
    viewer.user_permissions.add(Permission.objects.get(codename="view_webhookendpoint"))
    client = Client()
    client.force_login(viewer)
    url = admin_url(WebhookEndpoint, "change", endpoint.pk)

    response = client.get(url)

    assert response.status_code == 200
    assert all(field.disabled for field in response.context["form"].fields.values())
    assert b'name="_save"' not in response.content
    assert b"View webhook endpoint" in response.content
    assert client.post(url, form(description="Billing")).status_code == 403
    assert client.get(admin_url(WebhookEndpoint, "delete", endpoint.pk)).status_code == 403
    assert WebhookEndpoint.objects.get().description == "CRM sync"


def test_control_characters_are_refused_as_the_api_refuses_them(
    staff_client: Any, tenant: Tenant, monkeypatch: Any
) -> None:
    spy = Spy(monkeypatch, "webhook_endpoint_create")

    response = staff_client.post(admin_url(WebhookEndpoint, "add"), form(description="a\x07b"))

    assert response.status_code == 200
    assert response.context["form"].errors["description"] == [
        "This field must not contain control characters."
    ]
    assert not spy.calls


def test_without_a_tenant_nothing_is_added(staff_client: Any, monkeypatch: Any) -> None:
    spy = Spy(monkeypatch, "webhook_endpoint_create")

    response = staff_client.post(admin_url(WebhookEndpoint, "add"), form())

    assert response.context["form"].non_field_errors() == ["Select a tenant in the header first."]
    assert not spy.calls
