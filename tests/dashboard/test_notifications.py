"""Email templates are written through the template services, previewed without sending, and
sent as a test to the staff member; the delivery log is only shown."""

import datetime as dt
import html
import re
import time
from typing import Any, cast

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core import mail
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.notifications.choices import TROPHY_TYPES, MessageStatus, NotificationType
from apps.notifications.configuration import email_template_create
from apps.notifications.domain import EmailTemplateSettings
from apps.notifications.models import EmailTemplate, Message
from apps.users.choices import AttributeType
from apps.users.models import EndUser
from tests.dashboard.conftest import admin_url, message_texts, org_staff, page_main, switch_tenant
from tests.factories import AttributeFactory, EndUserFactory, OrganizationWithKey
from tests.notifications.conftest import COSTLY_HTML, TOO_MUCH_WORK

DEFAULT_TYPES = sorted(TROPHY_TYPES)  # and the league types once the tenant has a league


@pytest.fixture(autouse=True)
def _empty_outbox() -> None:
    mail.outbox = []


@pytest.fixture
def template(tenant: Tenant) -> EmailTemplate:
    settings = EmailTemplateSettings(
        type=NotificationType.RECAP,
        name="Weekly digest",
        subject="Your week, {{ user.name }}",
        html="<p>Hello {{ user.name }}, {{ app.name }}</p><script>alert(1)</script>",
        text="Hello {{ user.name }}",
    )
    return email_template_create(tenant, settings)


@pytest.fixture
def alice(tenant: Tenant) -> EndUser:
    user = EndUserFactory(
        tenant=tenant, external_id="alice", name="<b>Ada & Co</b>", email="alice@example.com"
    )
    return cast(EndUser, user)


def template_form(tenant: Tenant, **changes: Any) -> dict[str, Any]:
    data = {
        "tenant": tenant.pk,
        "type": NotificationType.ACHIEVEMENT_COMPLETED,
        "name": "Trophy",
        "status": "inactive",
        "priority": 0,
        "subject": "You did it, {{ user.name }}",
        "html": "<p>{{ achievement.name }}</p>",
        "text": "",
        "user_attributes": "",
    }
    data.update(changes)
    return data


def edit_form(template: EmailTemplate, **changes: Any) -> dict[str, Any]:
    data = {
        "name": template.name,
        "status": template.status,
        "priority": template.priority,
        "subject": template.subject,
        "html": template.html,
        "text": template.text,
        "user_attributes": "",
    }
    data.update(changes)
    return data


def filter_rows(*pairs: tuple[str, str]) -> dict[str, list[str]]:
    """Attribute filter rows as the browser posts them (a select and an input per row)."""
    return {
        "user_attributes-key": [key for key, _ in pairs],
        "user_attributes-value": [value for _, value in pairs],
    }


def preview_url(template: EmailTemplate) -> str:
    return admin_url(EmailTemplate, "preview", template.pk)


def send_test_url(template: EmailTemplate) -> str:
    return admin_url(EmailTemplate, "test_send", template.pk)


def set_staff_email(address: str) -> None:
    get_user_model().objects.filter(username="staff").update(email=address)


def count_queries(client: Any, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


# Templates


def test_a_fresh_tenant_lists_its_four_default_templates(staff_client: Any, tenant: Tenant) -> None:
    response = staff_client.get(admin_url(EmailTemplate))

    assert response.status_code == 200
    shown = response.context["cl"].result_list
    assert sorted(t.type for t in shown) == DEFAULT_TYPES
    assert {t.status for t in shown} == {"inactive"}
    # Seeding happens once: a second visit adds nothing.
    staff_client.get(admin_url(EmailTemplate))
    assert EmailTemplate.objects.filter(tenant=tenant).count() == 4


def test_the_template_list_seeds_only_the_tenant_it_shows(
    staff_client: Any, tenant: Tenant
) -> None:
    staff_client.get(admin_url(EmailTemplate))  # seeds the selected tenant
    few = count_queries(staff_client, admin_url(EmailTemplate))
    others = [OrganizationWithKey(name) for name in ("B", "C", "D")]
    staff_client.get(admin_url(EmailTemplate))
    # Other tenants, other organizations' above all, are not written by this page.
    assert EmailTemplate.objects.count() == 4
    assert count_queries(staff_client, admin_url(EmailTemplate)) == few
    switch_tenant(staff_client, others[0].tenant)
    staff_client.get(admin_url(EmailTemplate))
    assert EmailTemplate.objects.filter(tenant=others[0].tenant).count() == 4
    assert EmailTemplate.objects.count() == 8


def test_creating_a_template_goes_through_the_service(staff_client: Any, tenant: Tenant) -> None:
    version = tenant.config_version
    response = staff_client.post(admin_url(EmailTemplate, "add"), template_form(tenant))

    assert response.status_code == 302
    created = EmailTemplate.objects.get(tenant=tenant, name="Trophy")
    assert created.type == NotificationType.ACHIEVEMENT_COMPLETED
    assert created.subject == "You did it, {{ user.name }}"
    assert created.text == ""
    tenant.refresh_from_db()
    assert tenant.config_version > version


def test_a_template_added_without_content_starts_from_the_built_in_one(
    staff_client: Any, tenant: Tenant
) -> None:
    data = template_form(tenant, type=NotificationType.RECAP, subject="", html="")
    assert staff_client.post(admin_url(EmailTemplate, "add"), data).status_code == 302
    created = EmailTemplate.objects.get(tenant=tenant, name="Trophy")
    default = EmailTemplate.objects.exclude(pk=created.pk).get(type=NotificationType.RECAP)
    assert (created.subject, created.html, created.text) == (
        default.subject,
        default.html,
        default.text,
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("html", "<p>{% if %}</p>"), ("subject", "{{ user.__class__ }}"), ("text", "{% for x in %}")],
)
def test_a_template_that_does_not_render_is_an_error_next_to_its_input(
    staff_client: Any, tenant: Tenant, field: str, value: str
) -> None:
    response = staff_client.post(
        admin_url(EmailTemplate, "add"), template_form(tenant, **{field: value})
    )

    assert response.status_code == 200
    form = response.context["form"]
    # Next to its input, a refusal of the services does not repeat the input's name.
    assert str(form.errors[field][0]).startswith("Line 1: ")
    assert form.data[field] == value
    assert not EmailTemplate.objects.filter(name="Trophy").exists()


def test_a_template_too_costly_to_render_is_refused_quickly_next_to_its_input(
    staff_client: Any, tenant: Tenant
) -> None:
    started = time.perf_counter()
    response = staff_client.post(
        admin_url(EmailTemplate, "add"), template_form(tenant, html=COSTLY_HTML)
    )

    assert time.perf_counter() - started < 5
    form = response.context["form"]
    assert str(form.errors["html"][0]).startswith(TOO_MUCH_WORK[:1].upper() + TOO_MUCH_WORK[1:])
    assert not EmailTemplate.objects.filter(name="Trophy").exists()


def test_user_attribute_filters_are_stored_as_attribute_ids(
    staff_client: Any, tenant: Tenant
) -> None:
    plan: Any = AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)
    data = template_form(tenant, **filter_rows(("plan", " pro ")))

    assert staff_client.post(admin_url(EmailTemplate, "add"), data).status_code == 302
    created = EmailTemplate.objects.get(name="Trophy")
    assert created.user_attributes == [
        {"attributeId": str(plan.public_id), "attributeValue": "pro"}
    ]
    page = staff_client.get(admin_url(EmailTemplate, "change", created.pk))
    assert page.context["form"].initial["user_attributes"] == [("plan", "pro")]
    assert '<option value="plan" selected>plan</option>' in page.content.decode()

    refused = staff_client.post(
        admin_url(EmailTemplate, "add"), template_form(tenant, **filter_rows(("tier", "gold")))
    )
    assert (
        "unknown user attribute keys: tier" in refused.context["form"].errors["user_attributes"][0]
    )


def test_activating_a_template(staff_client: Any, template: EmailTemplate) -> None:
    url = admin_url(EmailTemplate, "change", template.pk)
    page = staff_client.get(url)
    assert page.status_code == 200
    assert preview_url(template).encode() in page.content
    assert b"preferencesUrl" in page.content  # the variables are listed

    response = staff_client.post(url, edit_form(template, status="active", priority=3))

    assert response.status_code == 302
    template.refresh_from_db()
    assert (template.status, template.priority, template.type) == ("active", 3, "recap")


def test_an_edit_that_breaks_the_template_changes_nothing(
    staff_client: Any, template: EmailTemplate
) -> None:
    url = admin_url(EmailTemplate, "change", template.pk)
    response = staff_client.post(url, edit_form(template, html="{% if %}", status="active"))

    assert response.status_code == 200
    assert "Line 1" in str(response.context["form"].errors["html"])
    template.refresh_from_db()
    assert (template.status, template.html.startswith("<p>Hello")) == ("inactive", True)


def test_deleting_a_template_goes_through_the_service(
    staff_client: Any, template: EmailTemplate
) -> None:
    version = Tenant.objects.get(pk=template.tenant_id).config_version
    url = admin_url(EmailTemplate, "delete", template.pk)

    assert staff_client.get(url).status_code == 200
    assert staff_client.post(url, {"post": "yes"}).status_code == 302
    assert not EmailTemplate.objects.filter(pk=template.pk).exists()
    assert Tenant.objects.get(pk=template.tenant_id).config_version > version


# Preview and test send


def test_the_preview_shows_the_users_data_escaped_in_a_sandbox(
    staff_client: Any, template: EmailTemplate, alice: EndUser
) -> None:
    response = staff_client.get(preview_url(template), {"user": "alice"})

    assert response.status_code == 200
    rendered = response.context["rendered"]
    assert rendered.subject == "Your week, <b>Ada & Co</b>"
    assert "Hello &lt;b&gt;Ada &amp; Co&lt;/b&gt;" in rendered.html
    assert rendered.text.startswith("Hello <b>Ada & Co</b>")
    content = response.content.decode()
    assert "Your week, &lt;b&gt;Ada &amp; Co&lt;/b&gt;" in content
    assert f'srcdoc="{html.escape(rendered.html)}"' in content
    assert 'sandbox=""' in content
    assert "<script>alert(1)" not in content
    assert "<pre>Hello &lt;b&gt;Ada &amp; Co&lt;/b&gt;</pre>" in content
    assert not mail.outbox


def test_the_preview_without_a_user_uses_sample_data_in_the_tenants_brand(
    staff_client: Any, template: EmailTemplate, tenant: Tenant
) -> None:
    tenant.branding = {"appName": "Wordsmith", "brandColor": "#0F766E"}
    tenant.save()

    response = staff_client.get(preview_url(template))

    assert response.status_code == 200
    assert response.context["rendered"].subject == "Your week, Jamie"
    assert "Wordsmith" in response.context["rendered"].html
    assert "Acme Fitness" not in response.context["rendered"].html  # never the sample's brand
    assert b"Send a test" in response.content  # with sample data too


def test_the_sample_preview_shows_gamifys_own_images(staff_client: Any, tenant: Tenant) -> None:
    template = email_template_create(
        tenant,
        EmailTemplateSettings(
            type=NotificationType.ACHIEVEMENT_COMPLETED,
            name="Badge",
            subject="{{ achievement.name }}",
            html='<img src="{{ achievement.badgeUrl }}">',
        ),
    )

    response = staff_client.get(preview_url(template))

    # Under the dashboard's own address, and served there.
    badge = "http://testserver/static/notifications/sample/badge.png"
    assert f'src="{badge}"' in response.context["rendered"].html
    assert staff_client.get(badge.removeprefix("http://testserver")).status_code == 200


def test_a_user_of_another_tenant_is_not_previewed(
    staff_client: Any, template: EmailTemplate, other_tenant: Tenant
) -> None:
    EndUserFactory(tenant=other_tenant, external_id="carol", name="Carol")
    response = staff_client.get(preview_url(template), {"user": "carol"})

    assert response.status_code == 200
    assert message_texts(response) == ["No end-user “carol” in this template's tenant."]
    assert response.context["rendered"].subject == "Your week, Jamie"


def test_a_broken_template_is_a_message_on_the_preview_not_a_500(
    staff_client: Any, template: EmailTemplate, alice: EndUser
) -> None:
    # Written around the service, which refuses it: a template may still break later.
    EmailTemplate.objects.filter(pk=template.pk).update(html="{{ variation() }}")

    for query in ({}, {"user": "alice"}):
        response = staff_client.get(preview_url(template), query)
        assert response.status_code == 200
        assert response.context["rendered"] is None
        [text] = message_texts(response)
        assert text.startswith("The template does not render: html: ")


def test_send_a_test_to_me(staff_client: Any, template: EmailTemplate, alice: EndUser) -> None:
    set_staff_email("staff@example.com")
    page = staff_client.get(preview_url(template), {"user": "alice"})
    assert b'value="staff@example.com"' in page.content  # the address field's default

    response = staff_client.post(
        send_test_url(template), {"user": "alice", "to": "staff@example.com"}, follow=True
    )

    assert response.status_code == 200
    assert message_texts(response) == ["Sent a test email to staff@example.com."]
    [sent] = mail.outbox
    assert sent.to[0].endswith("staff@example.com")
    assert sent.subject == "[Test] Your week, <b>Ada & Co</b>"
    assert "alice@example.com" not in str(sent.message())
    assert not Message.objects.exists()  # outside the delivery log


def test_a_staff_member_without_email_sends_a_test_to_the_address_they_give(
    staff_client: Any, template: EmailTemplate
) -> None:
    page = staff_client.get(preview_url(template))
    assert b'name="to"' in page.content

    response = staff_client.post(send_test_url(template), {"to": "qa@example.org"}, follow=True)

    assert message_texts(response) == ["Sent a test email to qa@example.org."]
    [sent] = mail.outbox
    assert sent.to[0].endswith("qa@example.org")
    assert sent.subject == "[Test] Your week, Jamie"  # sample data: no end-user chosen


@pytest.mark.parametrize(
    ("to", "said"),
    [
        ("", "Give the address to send the test to."),
        ("not-an-address", "“not-an-address” is not an email address."),
        ("a@b.c\nBcc: x@y.z", "“a@b.c\nBcc: x@y.z” is not an email address."),
    ],
)
def test_a_test_to_no_valid_address_is_refused(
    staff_client: Any, template: EmailTemplate, to: str, said: str
) -> None:
    response = staff_client.post(send_test_url(template), {"to": to}, follow=True)

    assert message_texts(response) == [said]
    assert not mail.outbox


def test_a_test_of_a_broken_template_is_a_message(
    staff_client: Any, template: EmailTemplate, alice: EndUser
) -> None:
    EmailTemplate.objects.filter(pk=template.pk).update(subject="{{ nope() }}")

    response = staff_client.post(
        send_test_url(template), {"user": "alice", "to": "staff@example.com"}, follow=True
    )

    # Then the preview it returns to shows why.
    sent, shown = message_texts(response)
    assert sent.startswith("The test email was not sent: subject: ")
    assert shown.startswith("The template does not render: subject: ")
    assert not mail.outbox


def test_the_test_send_is_post_only(staff_client: Any, template: EmailTemplate) -> None:
    set_staff_email("staff@example.com")
    assert staff_client.get(send_test_url(template), {"user": "alice"}).status_code == 405
    assert not mail.outbox


# Delivery log


def record_messages(tenant: Tenant, user: Any, count: int, **fields: Any) -> list[Message]:
    """Messages written directly: the dashboard reads the log, it never writes it."""
    now = timezone.now()
    return Message.objects.bulk_create(
        Message(
            tenant=tenant,
            user=user,
            type=fields.get("type", NotificationType.RECAP),
            dedupe_key=f"{fields.get('type', 'recap')}:{fields.get('status', 'sent')}:{i}",
            send_at=now - dt.timedelta(minutes=i),
            status=fields.get("status", MessageStatus.SENT),
            recipient=user.email or "",
            subject=f"Subject {i}",
            error=fields.get("error", ""),
        )
        for i in range(count)
    )


def test_the_delivery_log_lists_and_filters_messages(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant, alice: EndUser
) -> None:
    bob = EndUserFactory(tenant=other_tenant, external_id="bob", email="bob@example.com")
    record_messages(tenant, alice, 3)
    record_messages(tenant, alice, 1, status=MessageStatus.FAILED, error="SMTP 550 " + "x" * 200)
    record_messages(other_tenant, bob, 2, type=NotificationType.STREAK_REMINDER)

    def shown(query: str) -> int:
        response = staff_client.get(admin_url(Message) + query)
        assert response.status_code == 200
        return len(response.context["cl"].result_list)

    # Each tenant's log shows its own messages only.
    assert shown("") == 4
    assert shown("?status__exact=failed") == 1
    assert shown("?channel__exact=email") == 4
    assert shown(f"?user={alice.pk}") == 4
    assert shown("?q=alice") == 4
    assert shown("?q=bob@example.com") == 0
    switch_tenant(staff_client, other_tenant)
    assert shown("") == 2
    assert shown("?type__exact=streak_reminder") == 2
    assert shown("?q=bob@example.com") == 2
    switch_tenant(staff_client, tenant)
    page = staff_client.get(admin_url(Message)).content.decode()
    assert admin_url(EndUser, "change", alice.pk) in page
    # The list shows the start of an error; the full text is its tooltip.
    short = ("SMTP 550 " + "x" * 200)[:79] + "…"
    assert f">{short}</span>" in page


def test_the_delivery_log_queries_do_not_grow_with_rows(
    staff_client: Any, django_assert_max_num_queries: Any
) -> None:
    def populate(names: list[str], each: int) -> None:
        for name in names:
            org = OrganizationWithKey(name)
            user = EndUserFactory(tenant=org.tenant, email=f"{name}@example.com")
            record_messages(org.tenant, user, each)

    populate(["A"], 1)
    one = count_queries(staff_client, admin_url(Message))
    populate(["B", "C", "D", "E"], 5)
    assert Message.objects.count() == 21
    assert count_queries(staff_client, admin_url(Message)) == one
    with django_assert_max_num_queries(8):
        staff_client.get(admin_url(Message))


def test_the_delivery_log_is_read_only(
    staff_client: Any, tenant: Tenant, alice: EndUser, template: EmailTemplate
) -> None:
    [message] = record_messages(tenant, alice, 1)
    Message.objects.filter(pk=message.pk).update(template=template)

    page = staff_client.get(admin_url(Message, "change", message.pk))

    assert page.status_code == 200
    assert b"Weekly digest" in page.content
    assert b'type="submit"' not in page_main(page.content)
    assert staff_client.post(admin_url(Message, "change", message.pk), {}).status_code == 403
    assert staff_client.get(admin_url(Message, "add")).status_code == 403
    assert staff_client.get(admin_url(Message, "delete", message.pk)).status_code == 403


def test_the_end_user_page_shows_their_latest_messages(
    staff_client: Any, tenant: Tenant, alice: EndUser
) -> None:
    record_messages(tenant, alice, 1, status=MessageStatus.SKIPPED, error="user unsubscribed")

    response = staff_client.get(admin_url(EndUser, "change", alice.pk))

    card = response.content.decode().split('id="user-notifications"')[1].split("</section>")[0]
    card = re.sub(r">\s+<", "><", card)
    assert "<td>Recap</td>" in card
    assert "Skipped" in card
    assert "<td>Subject 0</td><td>user unsubscribed</td>" in card
    assert f"{admin_url(Message)}?user={alice.pk}" in card


# Permissions


@pytest.fixture
def plain_staff(org: OrganizationWithKey) -> Any:
    return org_staff(org, username="plain", email="plain@example.com")


def test_staff_without_permissions_cannot_reach_the_pages(
    plain_staff: Any, template: EmailTemplate, alice: EndUser
) -> None:
    client = Client()
    client.force_login(plain_staff)
    [message] = record_messages(template.tenant, alice, 1)

    for url in (
        admin_url(EmailTemplate),
        admin_url(EmailTemplate, "change", template.pk),
        preview_url(template),
        admin_url(Message),
        admin_url(Message, "change", message.pk),
    ):
        assert client.get(url).status_code == 403, url
    assert client.post(send_test_url(template), {"user": "alice"}).status_code == 403
    assert not mail.outbox


def test_viewers_may_preview_but_not_send_tests(
    plain_staff: Any, template: EmailTemplate, alice: EndUser
) -> None:
    plain_staff.user_permissions.add(Permission.objects.get(codename="view_emailtemplate"))
    client = Client()
    client.force_login(plain_staff)

    page = client.get(preview_url(template), {"user": "alice"})

    assert page.status_code == 200
    assert b"Send a test" not in page.content
    assert client.post(send_test_url(template), {"to": "x@example.com"}).status_code == 403
    assert not mail.outbox
