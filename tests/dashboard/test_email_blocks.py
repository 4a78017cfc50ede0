"""The email block editor: a new template written with blocks, an advanced one rewritten with
them, the live preview of unsaved blocks in the tenant's brand, and test sends of them to any
address; all through the template services, within the staff member's tenants."""

import json
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core import mail
from django.test import Client

from apps.accounts.models import Tenant
from apps.notifications.choices import NotificationType, TemplateMode
from apps.notifications.configuration import email_template_create
from apps.notifications.domain import EmailTemplateSettings
from apps.notifications.models import EmailTemplate, Message
from tests.dashboard.conftest import admin_url, message_texts, org_staff
from tests.factories import EndUserFactory, OrganizationWithKey

BLOCKS = [
    {"type": "heading", "text": "Well done, {{ user.name }}"},
    {"type": "achievement"},
    {"type": "button", "label": "See it", "url": "{{ app.url }}"},
]


@pytest.fixture(autouse=True)
def _empty_outbox() -> None:
    mail.outbox = []


@pytest.fixture
def branded(tenant: Tenant) -> Tenant:
    tenant.branding = {
        "appName": "Wordsmith",
        "brandColor": "#0F766E",
        "logo": {"url": "https://cdn.wordsmith.test/logo.png"},
    }
    tenant.save()
    return tenant


@pytest.fixture
def advanced(tenant: Tenant) -> EmailTemplate:
    return email_template_create(
        tenant,
        EmailTemplateSettings(
            type=NotificationType.ACHIEVEMENT_COMPLETED,
            name="Old style",
            subject="Badge",
            html="<p>{{ achievement.name }}</p>",
        ),
    )


def post_json(client: Client, view: str, body: dict[str, Any]) -> Any:
    return client.post(
        admin_url(EmailTemplate, view), json.dumps(body), content_type="application/json"
    )


def editor_data(response: Any) -> dict[str, Any]:
    return response.context["editor"]


def test_the_list_offers_an_email_with_blocks(staff_client: Client, tenant: Tenant) -> None:
    page = staff_client.get(admin_url(EmailTemplate))

    assert admin_url(EmailTemplate, "blocks_new").encode() in page.content


def test_a_new_email_starts_from_its_types_blocks(staff_client: Client, tenant: Tenant) -> None:
    page = staff_client.get(admin_url(EmailTemplate, "blocks_new"), {"type": "streak_reminder"})

    assert page.status_code == 200
    data = editor_data(page)
    assert [b["type"] for b in data["draft"]["blocks"]] == ["heading", "streak", "button"]
    paths = [v["path"] for v in data["variables"]]
    assert "streak.length" in paths
    assert "achievement.name" not in paths
    assert b"block-editor.js" in page.content


def test_writing_a_new_email_with_blocks(staff_client: Client, tenant: Tenant) -> None:
    response = staff_client.post(
        admin_url(EmailTemplate, "blocks_new"),
        {
            "type": "achievement_completed",
            "name": "Badge email",
            "subject": "New badge: {{ achievement.name }}",
            "blocks": json.dumps(BLOCKS),
        },
        follow=True,
    )

    template = EmailTemplate.objects.get(name="Badge email")
    assert template.tenant == tenant
    assert template.mode == TemplateMode.BLOCKS
    assert template.blocks == BLOCKS
    assert "{{ achievement.name }}" in template.html
    assert message_texts(response) == ["The email template “Badge email” was added."]
    assert response.redirect_chain[-1][0] == admin_url(EmailTemplate, "blocks", template.pk)
    # The tenant's built-in templates were given first, as the add page does.
    assert EmailTemplate.objects.filter(tenant=tenant).count() == 5


def test_blocks_the_services_refuse_are_shown_and_kept(
    staff_client: Client, tenant: Tenant
) -> None:
    bad = [{"type": "button", "label": "Go", "url": "javascript:alert(1)"}]

    page = staff_client.post(
        admin_url(EmailTemplate, "blocks_new"),
        {"type": "recap", "name": "Bad", "subject": "s", "blocks": json.dumps(bad)},
    )

    assert page.status_code == 200
    assert "block 1 (button): url must start with https://" in page.context["error"]
    assert editor_data(page)["draft"]["blocks"] == bad  # nothing typed is lost
    assert not EmailTemplate.objects.filter(name="Bad").exists()


def test_rewriting_an_advanced_template_with_blocks(
    staff_client: Client, advanced: EmailTemplate
) -> None:
    page = staff_client.get(admin_url(EmailTemplate, "blocks", advanced.pk))
    assert page.context["advanced"] is True
    assert b"advanced mode (raw Jinja2)" in page.content

    staff_client.post(
        admin_url(EmailTemplate, "blocks", advanced.pk),
        {"name": "New style", "subject": "Badge!", "blocks": json.dumps(BLOCKS)},
    )

    advanced.refresh_from_db()
    assert (advanced.mode, advanced.name, advanced.subject) == ("blocks", "New style", "Badge!")
    assert advanced.blocks == BLOCKS


def test_switching_back_to_advanced_keeps_the_generated_html(
    staff_client: Client, tenant: Tenant
) -> None:
    template = email_template_create(
        tenant, EmailTemplateSettings(type="recap", name="B", blocks=BLOCKS[:1])
    )
    change = staff_client.get(admin_url(EmailTemplate, "change", template.pk))
    assert change.context["form"].fields["html"].disabled  # generated: not edited here

    response = staff_client.post(
        admin_url(EmailTemplate, "blocks", template.pk), {"action": "advanced"}, follow=True
    )

    html = template.html
    template.refresh_from_db()
    assert template.mode == TemplateMode.ADVANCED
    assert template.blocks is None
    assert template.html == html
    assert response.redirect_chain[-1][0] == admin_url(EmailTemplate, "change", template.pk)


def test_the_live_preview_renders_unsaved_blocks_in_the_tenants_brand(
    staff_client: Client, branded: Tenant
) -> None:
    response = post_json(
        staff_client,
        "preview_draft",
        {"type": "achievement_completed", "subject": "Hi {{ user.name }}", "blocks": BLOCKS},
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["subject"] == "Hi Jamie"
    assert "Wordsmith" in body["html"]
    assert "Acme Fitness" not in body["html"]
    assert 'src="https://cdn.wordsmith.test/logo.png"' in body["html"]
    assert "#0F766E" in body["html"]
    # The sample badge: gamify's own static file, under the dashboard's address.
    assert 'src="http://testserver/static/notifications/sample/badge.png"' in body["html"]
    assert "Well done, Jamie" in body["text"]
    assert not EmailTemplate.objects.filter(tenant=branded, mode="blocks").exists()


def test_the_live_preview_for_an_end_user(
    staff_client: Client, advanced: EmailTemplate, tenant: Tenant
) -> None:
    EndUserFactory(tenant=tenant, external_id="ada", name="Ada <3")

    response = post_json(
        staff_client,
        "preview_draft",
        {"template": advanced.pk, "subject": "x", "blocks": BLOCKS[:1], "user": "ada"},
    )

    assert "Well done, Ada &lt;3" in response.json()["html"]


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"type": "recap", "subject": "s", "blocks": [{"type": "nope"}]}, 422, "type must be"),
        ({"type": "recap", "subject": "", "blocks": []}, 422, "Give the email a subject."),
        ({"type": "nope", "subject": "s", "blocks": []}, 422, "Choose the type of the email."),
        ({"type": "recap", "subject": "{{ x(", "blocks": []}, 422, "does not render: subject"),
        (
            {"type": "recap", "subject": "s", "blocks": [], "user": "ghost"},
            422,
            "No end-user “ghost” in this tenant.",
        ),
    ],
)
def test_the_live_preview_says_what_is_wrong(
    staff_client: Client, tenant: Tenant, body: dict[str, Any], status: int, error: str
) -> None:
    response = post_json(staff_client, "preview_draft", body)

    assert response.status_code == status
    assert error in response.json()["error"]


def test_the_live_preview_refuses_what_is_not_json(staff_client: Client, tenant: Tenant) -> None:
    response = staff_client.post(
        admin_url(EmailTemplate, "preview_draft"), "[", content_type="application/json"
    )
    assert response.status_code == 400
    assert staff_client.get(admin_url(EmailTemplate, "preview_draft")).status_code == 405


def test_sending_a_test_of_unsaved_blocks_to_any_address(
    staff_client: Client, branded: Tenant
) -> None:
    response = post_json(
        staff_client,
        "send_draft",
        {
            "type": "achievement_completed",
            "subject": "New badge",
            "blocks": BLOCKS,
            "to": "reviewer@example.org",
        },
    )

    assert response.json() == {"message": "Sent a test email to reviewer@example.org."}
    [sent] = mail.outbox
    assert sent.to == ["reviewer@example.org"]
    assert sent.subject == "[Test] New badge"
    assert sent.from_email.startswith("Wordsmith <")
    html = sent.alternatives[0][0]
    assert "Well done, Jamie" in html
    # Images a mail client can reach: under PUBLIC_URL.
    assert 'src="http://testserver/static/notifications/sample/badge.png"' in html
    assert "List-Unsubscribe" not in sent.extra_headers
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    ("to", "error"),
    [("", "Give the address to send the test to."), ("nobody", "“nobody” is not an email")],
)
def test_a_test_to_no_valid_address_is_refused(
    staff_client: Client, tenant: Tenant, to: str, error: str
) -> None:
    response = post_json(
        staff_client, "send_draft", {"type": "recap", "subject": "s", "blocks": [], "to": to}
    )

    assert response.status_code == 422
    assert error in response.json()["error"]
    assert not mail.outbox


def test_viewers_may_preview_but_neither_save_nor_send(
    org: OrganizationWithKey, advanced: EmailTemplate
) -> None:
    viewer = org_staff(org, username="viewer")
    viewer.user_permissions.add(Permission.objects.get(codename="view_emailtemplate"))
    client = Client()
    client.force_login(viewer)

    page = client.get(admin_url(EmailTemplate, "blocks", advanced.pk))
    assert page.status_code == 200
    assert page.context["can_change"] is False
    assert b"Send test" not in page.content
    body = {"template": advanced.pk, "subject": "s", "blocks": BLOCKS}
    assert post_json(client, "preview_draft", body).status_code == 200
    assert post_json(client, "send_draft", {**body, "to": "a@b.test"}).status_code == 403
    saved = client.post(
        admin_url(EmailTemplate, "blocks", advanced.pk),
        {"name": "x", "subject": "s", "blocks": "[]"},
    )
    assert saved.status_code == 403
    assert not mail.outbox


def test_another_organizations_template_is_not_found(
    org: OrganizationWithKey, advanced: EmailTemplate
) -> None:
    other = OrganizationWithKey("Other")
    stranger = org_staff(other, username="stranger")
    for codename in ("view_emailtemplate", "change_emailtemplate"):
        stranger.user_permissions.add(Permission.objects.get(codename=codename))
    client = Client()
    client.force_login(stranger)

    assert client.get(admin_url(EmailTemplate, "blocks", advanced.pk)).status_code == 404
    body = {"template": advanced.pk, "subject": "s", "blocks": [], "to": "a@b.test"}
    assert post_json(client, "preview_draft", body).status_code == 404
    assert post_json(client, "send_draft", body).status_code == 404
    assert not mail.outbox
