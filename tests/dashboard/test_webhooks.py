"""Webhook endpoints are written through the endpoint services and their signing secret is shown
once, on a page of its own; the delivery log is only shown, and sent again on request.

Nothing is delivered here: the views enqueue the dispatch after commit, and pytest-django's
transaction never commits (tests that care capture the callbacks without running them)."""

import datetime as dt
import re
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.core.show_once import SHOW_ONCE_TTL
from apps.webhooks.choices import DeliveryStatus, EndpointStatus, EventType
from apps.webhooks.configuration import webhook_endpoint_create
from apps.webhooks.domain import WebhookEndpointSettings
from apps.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from apps.webhooks.services import endpoint_secrets
from tests.dashboard.conftest import admin_url, message_texts, org_staff, page_main, switch_tenant
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


def endpoint_form(tenant: Tenant, **changes: Any) -> dict[str, Any]:
    data = {
        "tenant": tenant.pk,
        "url": URL,
        "description": "CRM sync",
        "status": "active",
        "events": [],
    }
    data.update(changes)
    return data


def edit_form(endpoint: WebhookEndpoint, **changes: Any) -> dict[str, Any]:
    data = {
        "url": endpoint.url,
        "description": endpoint.description,
        "status": endpoint.status,
        "events": endpoint.events,
    }
    data.update(changes)
    return data


def record_deliveries(
    endpoint: WebhookEndpoint, count: int, *, age: dt.timedelta = dt.timedelta(0), **fields: Any
) -> list[WebhookDelivery]:
    """Events and deliveries written directly, one a minute: the dashboard reads the log."""
    start = timezone.now() - age
    deliveries = []
    for i in range(count):
        created = start - dt.timedelta(minutes=i)
        event = WebhookEvent.objects.create(
            tenant=endpoint.tenant,
            type=fields.get("type", EventType.STREAK_LOST),
            body=fields.get("body", f'{{"type":"streak.lost","length":{i}}}'),
            created=created,
            due_at=created,
        )
        deliveries.append(
            WebhookDelivery.objects.create(
                tenant=endpoint.tenant,
                event=event,
                endpoint=endpoint,
                status=fields.get("status", DeliveryStatus.FAILED),
                next_attempt_at=created,
                attempts=fields.get("attempts", 7),
                last_status_code=fields.get("last_status_code", 500),
                last_error=fields.get("last_error", "HTTP 500"),
                created=created,
            )
        )
    return deliveries


def page_text(client: Any, url: str) -> str:
    response = client.get(url, follow=True)  # a history page is the configuration's
    assert response.status_code == 200, url
    return str(response.content.decode())


def count_queries(client: Any, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


# Creating an endpoint, and its secret shown once


def test_creating_an_endpoint_shows_its_secret_once(staff_client: Any, tenant: Tenant) -> None:
    data = endpoint_form(tenant, events=[EventType.STREAK_LOST, EventType.ACHIEVEMENT_COMPLETED])
    version = tenant.config_version

    response = staff_client.post(admin_url(WebhookEndpoint, "add"), data)

    created = WebhookEndpoint.objects.get()
    assert (created.tenant, created.url, created.description) == (tenant, URL, "CRM sync")
    assert created.events == ["achievement.completed", "streak.lost"]
    tenant.refresh_from_db()
    assert tenant.config_version > version
    assert response.status_code == 302
    assert response["Location"] == admin_url(WebhookEndpoint, "secret", created.pk)

    page = staff_client.get(response["Location"])
    [secret] = endpoint_secrets(created, timezone.now())
    assert secret.startswith("whsec_")
    assert page.context["new"]["secret"] == secret
    content = page.content.decode()
    assert f'<code id="webhook-secret">{secret}</code>' in content
    assert "it will not be shown again" in content
    assert "navigator.clipboard" in content
    assert "no-store" in page["Cache-Control"]

    again = staff_client.get(response["Location"])
    assert secret not in again.content.decode()
    assert "already been shown" in again.content.decode()


def test_the_secret_reaches_no_cookie_and_no_other_page(staff_client: Any, tenant: Tenant) -> None:
    response = staff_client.post(admin_url(WebhookEndpoint, "add"), endpoint_form(tenant))
    created = WebhookEndpoint.objects.get()
    [secret] = endpoint_secrets(created, timezone.now())
    # The redirect leaves the "added" message in the messages cookie, without the secret.
    assert "messages" in response.cookies
    assert all(secret not in morsel.value for morsel in staff_client.cookies.values())

    shown = staff_client.get(response["Location"])
    assert secret in shown.content.decode()
    assert message_texts(shown)[0].startswith("The webhook endpoint")
    assert all(secret not in morsel.value for morsel in staff_client.cookies.values())
    for url in (
        admin_url(WebhookEndpoint),
        admin_url(WebhookEndpoint, "change", created.pk),
        admin_url(WebhookEndpoint, "history", created.pk),
    ):
        assert secret not in page_text(staff_client, url), url


def test_a_new_secret_is_shown_only_on_its_own_endpoints_page(
    staff_client: Any, tenant: Tenant, endpoint: WebhookEndpoint
) -> None:
    staff_client.post(admin_url(WebhookEndpoint, "add"), endpoint_form(tenant, url=URL + "2"))
    created = WebhookEndpoint.objects.exclude(pk=endpoint.pk).get()

    other = staff_client.get(admin_url(WebhookEndpoint, "secret", endpoint.pk))
    assert other.context["new"] is None
    # Looking at another endpoint's page does not use up this one's.
    assert staff_client.get(admin_url(WebhookEndpoint, "secret", created.pk)).context["new"]


def test_a_secret_whose_page_was_never_opened_expires(staff_client: Any, tenant: Tenant) -> None:
    response = staff_client.post(admin_url(WebhookEndpoint, "add"), endpoint_form(tenant))
    assert "webhooks.new_secret" in staff_client.session

    with time_machine.travel(timezone.now() + SHOW_ONCE_TTL + dt.timedelta(seconds=1)):
        page = staff_client.get(response["Location"])

    assert page.context["new"] is None
    assert "webhooks.new_secret" not in staff_client.session


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("https://10.0.0.1/x", "10.0.0.1 is not a public address (private)"),
        ("ftp://x", "the URL must use https or http"),
    ],
)
def test_a_refused_url_shows_the_services_error_and_creates_nothing(
    staff_client: Any, tenant: Tenant, settings: Any, url: str, error: str
) -> None:
    settings.WEBHOOK_ALLOWED_NETWORKS = []

    response = staff_client.post(admin_url(WebhookEndpoint, "add"), endpoint_form(tenant, url=url))

    assert response.status_code == 200
    form = response.context["form"]
    assert form.errors["url"] == [error]
    assert form.data["url"] == url
    assert not WebhookEndpoint.objects.exists()
    assert "webhooks.new_secret" not in staff_client.session


def test_the_form_lists_the_event_types_grouped(staff_client: Any) -> None:
    content = page_text(staff_client, admin_url(WebhookEndpoint, "add"))

    assert content.count('type="checkbox" name="events"') == len(EventType)
    for group in ("Achievements", "Streaks", "Points", "Leaderboards", "Emails due"):
        assert group in content
    assert "None checked: every event type" in content


def test_an_edit_passes_only_what_changed(
    staff_client: Any, endpoint: WebhookEndpoint, settings: Any
) -> None:
    failing = timezone.now() - dt.timedelta(hours=3)
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failing_since=failing)
    # The stored URL would be refused now; a description edit does not check it again.
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    url = admin_url(WebhookEndpoint, "change", endpoint.pk)

    response = staff_client.post(
        url, edit_form(endpoint, description="Billing", events=["streak.lost"])
    )

    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert (endpoint.description, endpoint.events) == ("Billing", ["streak.lost"])
    assert endpoint.failing_since == failing
    refused = staff_client.post(url, edit_form(endpoint, url="https://10.0.0.1/x"))
    assert refused.context["form"].errors["url"] == ["10.0.0.1 is not a public address (private)"]


def test_emptying_the_description_input_clears_the_description(
    staff_client: Any, endpoint: WebhookEndpoint
) -> None:
    # "" is the description's own value, not an input left out.
    url = admin_url(WebhookEndpoint, "change", endpoint.pk)

    response = staff_client.post(url, edit_form(endpoint, description=""))

    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.description == ""


def test_deleting_an_endpoint_goes_through_the_service(
    staff_client: Any, endpoint: WebhookEndpoint
) -> None:
    record_deliveries(endpoint, 3)
    version = Tenant.objects.get(pk=endpoint.tenant_id).config_version
    url = admin_url(WebhookEndpoint, "delete", endpoint.pk)

    assert "Webhook deliveries (deleted with it): 3" in page_text(staff_client, url)
    assert staff_client.post(url, {"post": "yes"}).status_code == 302
    assert not WebhookEndpoint.objects.exists()
    assert not WebhookDelivery.objects.exists()
    assert Tenant.objects.get(pk=endpoint.tenant_id).config_version > version


# Actions


def test_rotating_shows_the_new_secret_once(staff_client: Any, endpoint: WebhookEndpoint) -> None:
    [old] = endpoint_secrets(endpoint, timezone.now())
    url = admin_url(WebhookEndpoint, "rotate_secret", endpoint.pk)
    confirm = page_text(staff_client, url)
    assert "keeps signing deliveries for 24 hours" in confirm
    assert 'name="csrfmiddlewaretoken"' in confirm
    endpoint.refresh_from_db()
    assert not endpoint.previous_secret  # asking is not rotating

    response = staff_client.post(url)

    assert response.status_code == 302
    assert response["Location"] == admin_url(WebhookEndpoint, "secret", endpoint.pk)
    endpoint.refresh_from_db()
    new, previous = endpoint_secrets(endpoint, timezone.now())
    assert (previous, new != old) == (old, True)
    page = staff_client.get(response["Location"]).content.decode()
    assert new in page
    assert old not in page
    assert "The old secret keeps signing deliveries for 24 hours" in page
    assert new not in page_text(staff_client, response["Location"])
    assert new not in page_text(staff_client, admin_url(WebhookEndpoint, "change", endpoint.pk))


def test_a_test_event_is_queued_for_the_endpoint(
    staff_client: Any, endpoint: WebhookEndpoint, django_capture_on_commit_callbacks: Any
) -> None:
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(events=["streak.lost"])
    url = admin_url(WebhookEndpoint, "send_test", endpoint.pk)
    assert "achievement.completed" in page_text(staff_client, url)
    assert not WebhookEvent.objects.exists()

    with django_capture_on_commit_callbacks() as callbacks:
        response = staff_client.post(url, follow=True)

    [event] = WebhookEvent.objects.all()
    assert event.type == "achievement.completed"  # whatever the endpoint subscribes to
    [delivery] = WebhookDelivery.objects.all()
    assert (delivery.endpoint, delivery.status) == (endpoint, DeliveryStatus.PENDING)
    assert len(callbacks) == 1  # the dispatch, enqueued after commit (not run here)
    assert message_texts(response)[0].startswith(
        f"Queued a test achievement.completed event (id {event.public_id})"
    )
    assert admin_url(WebhookDelivery, "change", delivery.pk) in response.content.decode()


def test_redeliver_failed_since_sets_those_deliveries_pending(
    staff_client: Any, tenant: Tenant, endpoint: WebhookEndpoint
) -> None:
    recent = record_deliveries(endpoint, 2, age=dt.timedelta(hours=1))
    old = record_deliveries(endpoint, 1, age=dt.timedelta(days=2))
    succeeded = record_deliveries(endpoint, 1, status=DeliveryStatus.SUCCEEDED)
    other, _ = webhook_endpoint_create(tenant, WebhookEndpointSettings(url=URL + "2"))
    elsewhere = record_deliveries(other, 1)
    url = admin_url(WebhookEndpoint, "redeliver_failed", endpoint.pk)
    assert "The log holds 3 failed deliveries of this endpoint." in page_text(staff_client, url)

    since = timezone.now() - dt.timedelta(days=1)
    response = staff_client.post(url, {"since": since.strftime("%Y-%m-%dT%H:%M")}, follow=True)

    def status(deliveries: list[WebhookDelivery]) -> set[str]:
        rows = WebhookDelivery.objects.filter(pk__in=[d.pk for d in deliveries])
        return set(rows.values_list("status", flat=True))

    assert status(recent) == {DeliveryStatus.PENDING}
    assert status(old) == status(elsewhere) == {DeliveryStatus.FAILED}
    assert status(succeeded) == {DeliveryStatus.SUCCEEDED}
    assert message_texts(response)[0].startswith("2 failed deliveries since ")


def test_redeliver_failed_with_nothing_to_send_says_so(
    staff_client: Any, endpoint: WebhookEndpoint
) -> None:
    record_deliveries(endpoint, 1, age=dt.timedelta(days=3))
    url = admin_url(WebhookEndpoint, "redeliver_failed", endpoint.pk)
    since = timezone.now() - dt.timedelta(days=1)

    response = staff_client.post(url, {"since": since.strftime("%Y-%m-%dT%H:%M")}, follow=True)

    [text] = message_texts(response)
    assert text.startswith("No failed deliveries since ")
    assert WebhookDelivery.objects.get().status == DeliveryStatus.FAILED


def test_redeliver_failed_needs_a_time(staff_client: Any, endpoint: WebhookEndpoint) -> None:
    record_deliveries(endpoint, 1)
    url = admin_url(WebhookEndpoint, "redeliver_failed", endpoint.pk)

    response = staff_client.post(url, {"since": "yesterday"})

    assert response.status_code == 200
    assert response.context["form"].errors["since"]
    assert WebhookDelivery.objects.get().status == DeliveryStatus.FAILED


def test_a_disabled_endpoint_shows_why_and_can_be_re_enabled(
    staff_client: Any, endpoint: WebhookEndpoint
) -> None:
    reason = "Every delivery failed for 5 days (last: HTTP 503)"
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        status=EndpointStatus.DISABLED, disabled_reason=reason, failing_since=timezone.now()
    )
    listed = page_text(staff_client, admin_url(WebhookEndpoint))
    assert '<span class="dash-pill dash-pill-bad">disabled</span>' in listed
    assert f'<div class="webhook-reason">{reason}</div>' in listed
    change = page_text(staff_client, admin_url(WebhookEndpoint, "change", endpoint.pk))
    url = admin_url(WebhookEndpoint, "enable", endpoint.pk)
    assert f'href="{url}"' in change
    assert reason in change

    response = staff_client.post(url, follow=True)

    endpoint.refresh_from_db()
    assert endpoint.status == EndpointStatus.ACTIVE
    assert (endpoint.disabled_reason, endpoint.failing_since) == ("", None)
    assert message_texts(response)[0].startswith("Re-enabled")
    assert f'href="{url}"' not in response.content.decode()


def test_actions_need_the_csrf_token(tenant: Tenant, endpoint: WebhookEndpoint) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.create_superuser(username="csrf", password="x"))

    for view in ("rotate_secret", "send_test", "redeliver_failed", "enable"):
        assert client.post(admin_url(WebhookEndpoint, view, endpoint.pk)).status_code == 403
    endpoint.refresh_from_db()
    assert not endpoint.previous_secret
    assert not WebhookEvent.objects.exists()


# Lists and deliveries


def test_the_endpoint_list_shows_status_events_and_tenant(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant, endpoint: WebhookEndpoint
) -> None:
    webhook_endpoint_create(
        other_tenant,
        WebhookEndpointSettings(url=URL + "/b", events=["streak.lost", "points.changed"]),
    )
    webhook_endpoint_create(
        other_tenant, WebhookEndpointSettings(url=URL + "/c", events=[t.value for t in EventType])
    )

    def shown(query: str) -> list[str]:
        response = staff_client.get(admin_url(WebhookEndpoint) + query)
        assert response.status_code == 200
        return [e.url for e in response.context["cl"].result_list]

    # The selected tenant's endpoints only; the header names the tenant.
    assert shown("") == [URL]
    assert shown("?status__exact=disabled") == []
    switch_tenant(staff_client, other_tenant)
    assert len(shown("")) == 2
    content = page_text(staff_client, admin_url(WebhookEndpoint))
    assert "points.changed, streak.lost" in content
    assert f">{len(EventType)} types</span>" in content
    assert "Acme" in content
    assert "customer-b" in content
    switch_tenant(staff_client, tenant)
    content = page_text(staff_client, admin_url(WebhookEndpoint))
    assert re.search(r'<td class="field-events_column[^"]*"[^>]*>all</td>', content)


def test_the_endpoint_page_lists_its_latest_deliveries(
    staff_client: Any, endpoint: WebhookEndpoint
) -> None:
    deliveries = record_deliveries(endpoint, 55)

    response = staff_client.get(admin_url(WebhookEndpoint, "change", endpoint.pk))

    shown = [row["delivery"] for row in response.context["deliveries"]]
    assert shown == deliveries[:50]  # newest first
    content = response.content.decode()
    assert admin_url(WebhookDelivery, "change", deliveries[0].pk) in content
    assert admin_url(WebhookDelivery, "change", deliveries[50].pk) not in content
    assert f"{admin_url(WebhookDelivery)}?endpoint__id__exact={endpoint.pk}" in content
    assert '<span class="dash-pill dash-pill-bad">failed</span>' in content


def test_the_delivery_page_shows_every_attempt_and_the_escaped_body(
    staff_client: Any, endpoint: WebhookEndpoint
) -> None:
    body = '{"type":"streak.lost","user":{"name":"<b>Ada & Co</b>"}}'
    [delivery] = record_deliveries(endpoint, 1, body=body)
    now = timezone.now()
    WebhookAttempt.objects.create(
        delivery=delivery, created=now, status_code=500, duration_ms=42,
        response_excerpt="<script>alert(1)</script>",
    )  # fmt: skip
    WebhookAttempt.objects.create(
        delivery=delivery, created=now, duration_ms=30000, error="timed out after 30 s"
    )

    content = page_text(staff_client, admin_url(WebhookDelivery, "change", delivery.pk))

    assert '<pre class="webhook-pre">&lt;script&gt;alert(1)&lt;/script&gt;</pre>' in content
    assert "<script>alert(1)" not in content
    assert '<td class="webhook-nowrap">42 ms</td>' in content
    assert "<td>timed out after 30 s</td>" in content
    pretty = (
        "{\n  &quot;type&quot;: &quot;streak.lost&quot;,\n  &quot;user&quot;: {\n"
        "    &quot;name&quot;: &quot;&lt;b&gt;Ada &amp; Co&lt;/b&gt;&quot;\n  }\n}"
    )
    assert f'<pre class="webhook-pre">{pretty}</pre>' in content
    assert str(delivery.public_id) in content
    assert b'type="submit"' not in page_main(content.encode())


def test_the_redeliver_button_sends_a_delivery_again(
    staff_client: Any, endpoint: WebhookEndpoint
) -> None:
    [delivery] = record_deliveries(endpoint, 1, age=dt.timedelta(hours=2))
    url = admin_url(WebhookDelivery, "redeliver", delivery.pk)
    assert f'href="{url}"' in page_text(
        staff_client, admin_url(WebhookDelivery, "change", delivery.pk)
    )
    confirm = page_text(staff_client, url)
    assert 'value="Redeliver"' in confirm
    assert WebhookDelivery.objects.get().status == DeliveryStatus.FAILED

    response = staff_client.post(url, follow=True)

    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.next_attempt_at > timezone.now() - dt.timedelta(minutes=1)
    assert message_texts(response)[0].startswith("The delivery is pending again")


def test_a_delivery_being_sent_is_left_alone(staff_client: Any, endpoint: WebhookEndpoint) -> None:
    [delivery] = record_deliveries(endpoint, 1, status=DeliveryStatus.DELIVERING)

    response = staff_client.post(admin_url(WebhookDelivery, "redeliver", delivery.pk), follow=True)

    assert message_texts(response) == ["This delivery is being sent right now: nothing to do."]
    assert WebhookDelivery.objects.get().status == DeliveryStatus.DELIVERING


def test_the_delivery_log_filters(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant, endpoint: WebhookEndpoint
) -> None:
    other, _ = webhook_endpoint_create(other_tenant, WebhookEndpointSettings(url=URL + "/b"))
    mine = record_deliveries(endpoint, 3)
    record_deliveries(endpoint, 1, status=DeliveryStatus.SUCCEEDED, type=EventType.POINTS_CHANGED)
    record_deliveries(other, 2, status=DeliveryStatus.PENDING)

    def shown(query: str) -> int:
        response = staff_client.get(admin_url(WebhookDelivery) + query)
        assert response.status_code == 200
        return len(response.context["cl"].result_list)

    assert shown("") == 4
    assert shown("?status__exact=failed") == 3
    assert shown("?event__type=points.changed") == 1
    assert shown(f"?endpoint__id__exact={other.pk}") == 0
    assert shown(f"?q={mine[1].public_id}") == 1
    assert shown(f"?q={mine[1].event.public_id}") == 1
    assert shown("?q=not-an-id") == 0
    first = staff_client.get(admin_url(WebhookDelivery)).context["cl"].result_list[0]
    assert first.created == max(d.created for d in WebhookDelivery.objects.filter(tenant=tenant))
    switch_tenant(staff_client, other_tenant)
    assert shown("") == 2
    assert shown(f"?endpoint__id__exact={other.pk}") == 2


def test_the_delivery_log_is_read_only(staff_client: Any, endpoint: WebhookEndpoint) -> None:
    [delivery] = record_deliveries(endpoint, 1)

    change, delete = (
        admin_url(WebhookDelivery, view, delivery.pk) for view in ("change", "delete")
    )
    assert staff_client.get(admin_url(WebhookDelivery, "add")).status_code == 403
    assert staff_client.post(change, {}).status_code == 403
    assert staff_client.get(delete).status_code == 403
    assert staff_client.post(delete, {"post": "yes"}).status_code == 403
    assert WebhookDelivery.objects.count() == 1


def test_the_dashboard_index_lists_the_webhook_pages(staff_client: Any) -> None:
    content = page_text(staff_client, "/dashboard/")
    assert admin_url(WebhookEndpoint) in content
    assert admin_url(WebhookDelivery) in content


# Queries


def test_list_queries_do_not_grow_with_rows(staff_client: Any) -> None:
    def populate(names: list[str], each: int) -> None:
        for name in names:
            org = OrganizationWithKey(name)
            for i in range(each):
                created, _ = webhook_endpoint_create(
                    org.tenant, WebhookEndpointSettings(url=f"{URL}/{i}")
                )
                record_deliveries(created, 1)

    populate(["A"], 1)
    pages = [admin_url(WebhookEndpoint), admin_url(WebhookDelivery)]
    one = [count_queries(staff_client, url) for url in pages]
    populate(["B", "C", "D", "E"], 5)
    assert WebhookEndpoint.objects.count() == WebhookDelivery.objects.count() == 21
    assert [count_queries(staff_client, url) for url in pages] == one


def test_the_endpoint_page_queries_do_not_grow_with_deliveries(
    staff_client: Any, endpoint: WebhookEndpoint
) -> None:
    url = admin_url(WebhookEndpoint, "change", endpoint.pk)
    record_deliveries(endpoint, 1)
    staff_client.get(url)  # fills the per-process caches (content types, tenant config)
    one = count_queries(staff_client, url)
    record_deliveries(endpoint, 20, age=dt.timedelta(hours=1))
    assert count_queries(staff_client, url) == one


# Permissions


@pytest.fixture
def plain_staff(org: OrganizationWithKey) -> Any:
    return org_staff(org, username="plain")


def test_staff_without_permissions_cannot_reach_the_pages(
    plain_staff: Any, endpoint: WebhookEndpoint
) -> None:
    [delivery] = record_deliveries(endpoint, 1)
    client = Client()
    client.force_login(plain_staff)

    for url in (
        admin_url(WebhookEndpoint),
        admin_url(WebhookEndpoint, "add"),
        admin_url(WebhookEndpoint, "change", endpoint.pk),
        admin_url(WebhookEndpoint, "secret", endpoint.pk),
        admin_url(WebhookDelivery),
        admin_url(WebhookDelivery, "change", delivery.pk),
    ):
        assert client.get(url).status_code == 403, url
    for view in ("rotate_secret", "send_test", "redeliver_failed", "enable"):
        url = admin_url(WebhookEndpoint, view, endpoint.pk)
        assert client.get(url).status_code == 403, url
        assert client.post(url).status_code == 403, url
    assert client.post(admin_url(WebhookDelivery, "redeliver", delivery.pk)).status_code == 403
    endpoint.refresh_from_db()
    assert not endpoint.previous_secret
    assert WebhookDelivery.objects.get().status == DeliveryStatus.FAILED
    assert WebhookEvent.objects.count() == 1


def test_viewers_see_the_pages_but_no_actions(plain_staff: Any, endpoint: WebhookEndpoint) -> None:
    plain_staff.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_webhookendpoint", "view_webhookdelivery"])
    )
    [delivery] = record_deliveries(endpoint, 1)
    client = Client()
    client.force_login(plain_staff)

    change = page_text(client, admin_url(WebhookEndpoint, "change", endpoint.pk))
    assert admin_url(WebhookEndpoint, "rotate_secret", endpoint.pk) not in change
    assert admin_url(WebhookEndpoint, "send_test", endpoint.pk) not in change
    detail = page_text(client, admin_url(WebhookDelivery, "change", delivery.pk))
    assert admin_url(WebhookDelivery, "redeliver", delivery.pk) not in detail
    assert client.post(admin_url(WebhookEndpoint, "send_test", endpoint.pk)).status_code == 403
    assert client.post(admin_url(WebhookDelivery, "redeliver", delivery.pk)).status_code == 403


def test_redelivering_to_a_disabled_endpoint_says_to_enable_it_first(
    staff_client: Any, endpoint: WebhookEndpoint
) -> None:
    [delivery] = record_deliveries(endpoint, 1, age=dt.timedelta(hours=2))
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(status=EndpointStatus.DISABLED)
    since = (timezone.now() - dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")

    for response in (
        staff_client.post(
            admin_url(WebhookEndpoint, "redeliver_failed", endpoint.pk),
            {"since": since},
            follow=True,
        ),
        staff_client.post(admin_url(WebhookDelivery, "redeliver", delivery.pk), follow=True),
    ):
        assert message_texts(response) == [
            "The endpoint is disabled: enable it before redelivering"
        ]
    assert WebhookDelivery.objects.get().status == DeliveryStatus.FAILED
