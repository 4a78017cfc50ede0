"""The email-template collection of the admin API (a gamify extension) and previews."""

import time

import pytest

from apps.core.errors import ValidationError
from apps.notifications.choices import NotificationType
from apps.notifications.configuration import email_template_create, email_template_update
from apps.notifications.domain import EmailTemplateSettings
from apps.notifications.models import EmailTemplate
from tests.notifications.conftest import COSTLY_HTML, TOO_MUCH_WORK

ADMIN = "/admin/v1/email-templates"


def test_each_tenant_starts_with_four_inactive_default_templates(api_client):
    templates = api_client.get(ADMIN, {"limit": 100}).json()
    assert sorted(t["type"] for t in templates) == [
        "achievement_completed",
        "reactivation",
        "recap",
        "streak_reminder",
    ]
    assert {t["status"] for t in templates} == {"inactive"}
    assert all("{{" in t["html"] and t["subject"] for t in templates)


def test_a_deleted_default_does_not_come_back(api_client):
    first = api_client.get(ADMIN, {"limit": 100}).json()[0]
    response = api_client.delete(f"{ADMIN}?ids={first['id']}")
    assert response.json()["deleted"] == [{"id": first["id"]}]
    assert len(api_client.get(ADMIN, {"limit": 100}).json()) == 3


def test_create_update_read_and_delete(api_client):
    response = api_client.post(
        ADMIN,
        [
            {
                "type": "recap",
                "name": "Weekly digest",
                "subject": "Your week, {{ user.name }}",
                "html": "<p>{{ recap.periodStart }}</p>",
                "priority": 5,
            }
        ],
    )
    assert response.status_code == 201, response.content
    created = response.json()["created"][0]
    assert created["status"] == "inactive"
    assert created["text"] is None
    assert created["priority"] == 5
    updated = api_client.patch(ADMIN, [{"id": created["id"], "status": "active", "text": "Hi"}])
    assert updated.json()["updated"][0]["status"] == "active"
    assert updated.json()["updated"][0]["text"] == "Hi"
    read = api_client.get(f"{ADMIN}/{created['id']}").json()
    assert read["name"] == "Weekly digest"
    assert api_client.delete(f"{ADMIN}?ids={created['id']}").json()["issues"] == []
    assert api_client.get(f"{ADMIN}/{created['id']}").status_code == 404


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("html", "<p>{% if %}</p>", "html"),
        ("subject", "{{ user.__class__.__mro__ }}", "subject"),
        ("text", "{% for x in %}", "text"),
    ],
)
def test_a_template_that_does_not_render_is_an_issue_at_save_time(
    api_client, field, value, expected
):
    item = {"type": "recap", "name": "Broken", field: value}
    response = api_client.post(ADMIN, [item])
    assert response.status_code == 200
    [issue] = response.json()["issues"]
    assert issue["index"] == 0
    assert issue["message"].startswith(expected)


def test_a_template_too_costly_to_render_is_refused_quickly_at_save_time(api_client):
    started = time.perf_counter()
    created = api_client.post(ADMIN, [{"type": "recap", "name": "Costly", "html": COSTLY_HTML}])
    template = api_client.get(ADMIN, {"limit": 100}).json()[0]
    updated = api_client.patch(ADMIN, [{"id": template["id"], "text": COSTLY_HTML}])

    assert time.perf_counter() - started < 5
    assert created.json()["issues"][0]["message"].startswith(f"html: {TOO_MUCH_WORK}")
    assert updated.json()["issues"][0]["message"].startswith(f"text: {TOO_MUCH_WORK}")
    assert not EmailTemplate.objects.filter(name="Costly").exists()
    assert api_client.get(f"{ADMIN}/{template['id']}").json()["text"] == template["text"]


def test_unknown_fields_types_and_foreign_attributes_are_refused(api_client, other_tenant_client):
    assert api_client.post(ADMIN, [{"type": "nope", "name": "x"}]).json()["issues"]
    assert api_client.post(ADMIN, [{"type": "recap", "name": "x", "colour": 1}]).json()["issues"]
    attribute = other_tenant_client.post(
        "/admin/v1/attributes", [{"name": "Plan", "key": "plan", "type": "user"}]
    ).json()["created"][0]
    response = api_client.post(
        ADMIN,
        [
            {
                "type": "recap",
                "name": "x",
                "userAttributes": [{"attributeId": attribute["id"], "attributeValue": "pro"}],
            }
        ],
    )
    assert "not found" in response.json()["issues"][0]["message"]


def test_another_tenants_template_is_not_found(api_client, other_tenant_client):
    mine = api_client.get(ADMIN).json()[0]
    assert other_tenant_client.get(f"{ADMIN}/{mine['id']}").status_code == 404
    response = other_tenant_client.patch(ADMIN, [{"id": mine["id"], "name": "stolen"}])
    assert response.json()["updated"] == []
    assert api_client.get(f"{ADMIN}/{mine['id']}").json()["name"] == mine["name"]


def test_preview_renders_for_a_user_and_sends_nothing(api_client, metric, mailoutbox):
    api_client.post(
        "/v1/metrics/words/event",
        {"user": {"id": "u1", "name": "Ada <b>", "email": "ada@example.com"}, "value": 7},
    )
    template = next(t for t in api_client.get(ADMIN, {"limit": 100}).json() if t["type"] == "recap")
    response = api_client.post(f"{ADMIN}/{template['id']}/preview", {"userId": "u1"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"subject", "html", "text"}
    assert "Ada &lt;b&gt;" in body["html"]
    assert "Ada <b>" in body["text"]
    assert mailoutbox == []
    missing = api_client.post(f"{ADMIN}/{template['id']}/preview", {"userId": "nobody"})
    assert missing.status_code == 404


def test_preview_of_a_template_too_costly_to_render_is_a_quick_422(api_client, metric):
    api_client.post("/v1/metrics/words/event", {"user": {"id": "u1"}, "value": 7})
    template = api_client.get(ADMIN, {"limit": 100}).json()[0]
    # Written around the service, which refuses it: a template saved before the work budget.
    EmailTemplate.objects.filter(public_id=template["id"]).update(html=COSTLY_HTML)

    started = time.perf_counter()
    response = api_client.post(f"{ADMIN}/{template['id']}/preview", {"userId": "u1"})

    assert time.perf_counter() - started < 5
    assert response.status_code == 422
    assert response.json()["error"].startswith(f"html: {TOO_MUCH_WORK}")


def test_application_keys_cannot_manage_templates(org, anon_client):
    anon_client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    assert anon_client.get(ADMIN).status_code == 403


# --- the services' own rules --------------------------------------------------------------


@pytest.mark.django_db
def test_a_templates_type_is_set_for_good(tenant):
    template = email_template_create(
        tenant, EmailTemplateSettings(type=NotificationType.RECAP, name="Digest")
    )
    with pytest.raises(ValidationError) as refused:
        email_template_update(
            tenant, template, EmailTemplateSettings(type=NotificationType.REACTIVATION)
        )
    assert (refused.value.fields, refused.value.code) == (("type",), "frozen")
    # Given again unchanged, it is no change.
    email_template_update(tenant, template, EmailTemplateSettings(type=NotificationType.RECAP))


@pytest.mark.django_db
def test_a_new_template_needs_its_type_and_name(tenant):
    with pytest.raises(ValidationError) as refused:
        email_template_create(tenant, EmailTemplateSettings(subject="Hi"))
    assert refused.value.message == "type and name are required"


# Blocks: the block form of a template, beside the fields every template has.

ACHIEVEMENT_BLOCKS = [
    {"type": "heading", "text": "You did it, {{ user.name }}!"},
    {"type": "achievement"},
    {"type": "button", "label": "See your badges", "url": "{{ app.url }}/badges"},
]


def test_a_template_written_with_blocks(api_client):
    response = api_client.post(
        ADMIN,
        [
            {
                "type": "achievement_completed",
                "name": "Blocks",
                "subject": "New badge: {{ achievement.name }}",
                "blocks": ACHIEVEMENT_BLOCKS,
            }
        ],
    )
    assert response.status_code == 201, response.content
    created = response.json()["created"][0]
    assert created["mode"] == "blocks"  # given blocks, blocks
    assert created["blocks"] == ACHIEVEMENT_BLOCKS
    # The current fields hold the templates generated from the blocks.
    assert "{{ achievement.name }}" in created["html"]
    assert created["text"].startswith("{{ app.name }}")

    read = api_client.get(f"{ADMIN}/{created['id']}").json()
    assert read["blocks"] == ACHIEVEMENT_BLOCKS
    assert read["mode"] == "blocks"


def test_existing_templates_are_advanced_without_blocks(api_client):
    templates = api_client.get(ADMIN, {"limit": 100}).json()
    assert {(t["mode"], t["blocks"]) for t in templates} == {("advanced", None)}


def test_the_preview_of_a_blocks_template(api_client):
    created = api_client.post(
        ADMIN,
        [
            {
                "type": "recap",
                "name": "B",
                "subject": "Hi",
                "blocks": [{"type": "text", "text": "Hi {{ user.name }}"}],
            }
        ],
    ).json()["created"][0]
    api_client.post("/v1/users", {"id": "ada", "name": "Ada"})

    preview = api_client.post(f"{ADMIN}/{created['id']}/preview", {"userId": "ada"})

    assert preview.status_code == 200, preview.content
    assert "Hi Ada" in preview.json()["html"]
    assert "Hi Ada" in preview.json()["text"]


def test_mode_blocks_without_blocks_starts_from_the_types_blocks(api_client):
    response = api_client.post(ADMIN, [{"type": "streak_reminder", "name": "S", "mode": "blocks"}])
    created = response.json()["created"][0]
    assert created["mode"] == "blocks"
    assert [b["type"] for b in created["blocks"]] == ["heading", "streak", "button"]
    assert created["subject"]  # the built-in subject of the type


def test_switching_modes_keeps_what_was_generated(api_client):
    created = api_client.post(
        ADMIN, [{"type": "recap", "name": "B", "blocks": [{"type": "divider"}]}]
    ).json()["created"][0]

    advanced = api_client.patch(ADMIN, [{"id": created["id"], "mode": "advanced"}]).json()
    [updated] = advanced["updated"]
    assert updated["mode"] == "advanced"
    assert updated["blocks"] is None
    assert updated["html"] == created["html"]  # now raw Jinja2 to edit
    edited = api_client.patch(ADMIN, [{"id": created["id"], "html": "<p>Mine</p>"}]).json()
    assert edited["updated"][0]["html"] == "<p>Mine</p>"

    back = api_client.patch(
        ADMIN, [{"id": created["id"], "blocks": [{"type": "heading", "text": "Again"}]}]
    ).json()["updated"][0]
    assert back["mode"] == "blocks"
    assert "Again" in back["html"]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            {"blocks": [{"type": "divider"}], "html": "<p>x</p>"},
            "html is generated from the blocks in blocks mode",
        ),
        (
            {"blocks": [{"type": "divider"}], "mode": "advanced"},
            "blocks are only taken in blocks mode",
        ),
        (
            {"blocks": [{"type": "button", "label": "Go", "url": "javascript:x"}]},
            "blocks: block 1 (button): url must start with https://",
        ),
        ({"blocks": [{"type": "nope"}]}, "blocks: block 1: type must be one of"),
        ({"blocks": "text"}, "blocks"),
        ({"mode": "fancy"}, "mode"),
    ],
)
def test_blocks_that_are_refused_are_issues(api_client, item, message):
    response = api_client.post(ADMIN, [{"type": "recap", "name": "B", **item}])

    assert response.status_code in (200, 422), response.content
    body = response.json()
    text = body["issues"][0]["message"] if "issues" in body else body["error"]
    assert message in text
    assert not EmailTemplate.objects.filter(name="B").exists()


def test_an_advanced_template_switched_to_blocks_needs_blocks(api_client):
    advanced = api_client.get(ADMIN, {"limit": 1}).json()[0]

    response = api_client.patch(ADMIN, [{"id": advanced["id"], "mode": "blocks"}])

    [issue] = response.json()["issues"]
    assert "blocks are required to switch a template to blocks mode" in issue["message"]


def test_a_blocks_templates_html_is_not_written_directly(api_client):
    created = api_client.post(
        ADMIN, [{"type": "recap", "name": "B", "blocks": [{"type": "divider"}]}]
    ).json()["created"][0]

    response = api_client.patch(ADMIN, [{"id": created["id"], "text": "Mine"}])

    [issue] = response.json()["issues"]
    assert "text is generated from the blocks" in issue["message"]
    assert api_client.get(f"{ADMIN}/{created['id']}").json()["text"] == created["text"]


def test_the_openapi_document_describes_the_block_form(api_client):
    document = api_client.get("/admin/v1/openapi").json()
    schemas = document["components"]["schemas"]
    template = schemas["EmailTemplate"]["properties"]
    assert {"mode", "blocks"} <= set(template)
    create = next(s for name, s in schemas.items() if name.startswith("EmailTemplateCreate"))
    assert {"mode", "blocks"} <= set(create["properties"])
    assert "conditional" in create["properties"]["blocks"]["description"]


def test_the_leaderboard_rank_block_shows_the_users_place(api_client, metric):
    board = {
        "name": "Top writers",
        "key": "top-writers",
        "rankBy": "metric",
        "metricId": str(metric.public_id),
        "status": "active",
    }
    assert api_client.post("/admin/v1/leaderboards", [board]).status_code == 201
    for user, value in (("ada", 5), ("bob", 9), ("cy", 1)):
        body = {"user": {"id": user, "name": user.title()}, "value": value}
        assert api_client.post("/v1/metrics/words/event", body).status_code == 201
    blocks = [{"type": "leaderboard", "leaderboard": "top-writers"}]
    created = api_client.post(
        ADMIN, [{"type": "recap", "name": "Rank", "subject": "s", "blocks": blocks}]
    ).json()["created"][0]

    preview = api_client.post(f"{ADMIN}/{created['id']}/preview", {"userId": "ada"}).json()

    assert "#2 on Top writers" in preview["text"]
    assert "Top writers" in preview["html"]
