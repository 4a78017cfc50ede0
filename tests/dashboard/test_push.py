"""Push channels and push templates are written through the push services; channel credentials
are write-only; the delivery log shows each message's push attempts."""

import json
import re
from typing import Any, cast

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.notifications.admin.log import ATTEMPTS_SHOWN
from apps.notifications.choices import TROPHY_TYPES, Channel, MessageStatus, NotificationType
from apps.notifications.domain import PushChannelSettings, PushTemplateSettings
from apps.notifications.models import Message, PushAttempt, PushChannel, PushTemplate
from apps.notifications.push.configuration import push_channel_create, push_template_create
from apps.notifications.push.secrets import secrets_decrypt
from apps.notifications.push.services import push_channel_flag
from apps.users.choices import AttributeType
from apps.users.models import EndUser
from tests.dashboard.conftest import admin_url, message_texts, org_staff, switch_tenant
from tests.factories import AttributeFactory, EndUserFactory, OrganizationWithKey
from tests.notifications.push.keys import apns_signing_key, fcm_private_key, service_account

EXPO_TOKEN = "expo-access-token-do-not-show"
FLAG_REASON = "18 of 20 device tokens were refused as not belonging to this app"


def key_body(pem: str) -> str:
    """A line from the middle of a PEM key: what would show if any part of it leaked."""
    return pem.strip().splitlines()[1]


def apns_form(tenant: Tenant, **changes: Any) -> dict[str, Any]:
    data = {
        "tenant": tenant.pk,
        "kind": "apns",
        "status": "active",
        "team_id": "TEAM123456",
        "key_id": "KEY1234567",
        "bundle_id": "com.example.app",
        "signing_key": apns_signing_key(),
        "sandbox": "on",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def apns_channel(tenant: Tenant) -> PushChannel:
    settings = PushChannelSettings(
        kind="apns",
        team_id="TEAM123456",
        key_id="KEY1234567",
        bundle_id="com.example.app",
        signing_key=apns_signing_key(),
        sandbox=False,
    )
    return push_channel_create(tenant, settings)


def flag(channel: PushChannel) -> PushChannel:
    push_channel_flag(channel, FLAG_REASON, timezone.now())
    channel.refresh_from_db()
    return channel


def form_errors(response: Any) -> dict[str, list[str]]:
    assert response.status_code == 200, response.status_code
    form = response.context["form"]
    return {name: [str(e) for e in errors] for name, errors in form.errors.items()}


def count_queries(client: Any, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


# Channels: creating each kind


def test_an_apns_channel_is_created_through_the_form(staff_client: Any, tenant: Tenant) -> None:
    version = tenant.config_version

    response = staff_client.post(admin_url(PushChannel, "add"), apns_form(tenant))

    assert response.status_code == 302
    channel = PushChannel.objects.get()
    assert (channel.tenant_id, channel.kind, channel.status) == (tenant.pk, "apns", "active")
    assert channel.settings == {
        "teamId": "TEAM123456",
        "keyId": "KEY1234567",
        "bundleId": "com.example.app",
        "sandbox": True,
    }
    assert secrets_decrypt(channel.credentials) == {"signingKey": apns_signing_key()}
    assert key_body(apns_signing_key()) not in channel.credentials
    tenant.refresh_from_db()
    assert tenant.config_version > version


def test_an_apns_key_may_be_uploaded_as_its_p8_file(staff_client: Any, tenant: Tenant) -> None:
    upload = SimpleUploadedFile("AuthKey_KEY1234567.p8", apns_signing_key().encode())
    data = apns_form(tenant, signing_key="", sandbox=None, signing_key_file=upload)

    assert staff_client.post(admin_url(PushChannel, "add"), data).status_code == 302

    channel = PushChannel.objects.get()
    assert channel.settings["sandbox"] is False
    assert secrets_decrypt(channel.credentials) == {"signingKey": apns_signing_key()}


@pytest.mark.parametrize("as_file", [False, True])
def test_an_fcm_channel_takes_its_service_account_pasted_or_uploaded(
    staff_client: Any, tenant: Tenant, as_file: bool
) -> None:
    content = json.dumps(service_account(), indent=2)
    data: dict[str, Any] = {"tenant": tenant.pk, "kind": "fcm", "status": "active"}
    if as_file:
        data["service_account_file"] = SimpleUploadedFile("gamify-test.json", content.encode())
    else:
        data["service_account"] = content

    assert staff_client.post(admin_url(PushChannel, "add"), data).status_code == 302

    channel = PushChannel.objects.get()
    assert channel.settings == {"projectId": "gamify-test"}
    assert secrets_decrypt(channel.credentials) == {"serviceAccount": service_account()}


def test_an_expo_channel_needs_no_token_but_may_have_one(
    staff_client: Any, tenant: Tenant, other_tenant: Tenant
) -> None:
    bare = {"tenant": tenant.pk, "kind": "expo", "status": "inactive"}
    assert staff_client.post(admin_url(PushChannel, "add"), bare).status_code == 302
    with_token = {**bare, "tenant": other_tenant.pk, "access_token": EXPO_TOKEN}
    switch_tenant(staff_client, other_tenant)
    assert staff_client.post(admin_url(PushChannel, "add"), with_token).status_code == 302

    first, second = PushChannel.objects.order_by("pk")
    assert (first.status, first.credentials) == ("inactive", "")
    assert secrets_decrypt(second.credentials) == {"accessToken": EXPO_TOKEN}


# Channels: refusals


def test_an_invalid_key_shows_the_services_error_and_creates_nothing(
    staff_client: Any, tenant: Tenant
) -> None:
    response = staff_client.post(
        admin_url(PushChannel, "add"), apns_form(tenant, signing_key=fcm_private_key())
    )

    assert form_errors(response)["signing_key"] == [
        "“Signing key” (the .p8 file) is not the right kind of key"
    ]
    assert not PushChannel.objects.exists()
    # What was typed is not given back either.
    assert key_body(fcm_private_key()) not in response.content.decode()


def test_an_uploaded_file_that_is_not_a_key_is_refused_under_the_file(
    staff_client: Any, tenant: Tenant
) -> None:
    upload = SimpleUploadedFile("AuthKey.p8", b"not a key")
    data = apns_form(tenant, signing_key="", signing_key_file=upload)

    errors = form_errors(staff_client.post(admin_url(PushChannel, "add"), data))

    assert errors["signing_key_file"] == ["“Signing key” (the .p8 file) is not a PEM private key"]
    assert not PushChannel.objects.exists()


@pytest.mark.parametrize(
    ("account", "error"),
    [
        ("{not json", "is not a JSON object: give the whole key file of the account"),
        ('["a list"]', "is not a JSON object: give the whole key file of the account"),
        # Nested deeper than Python's parser recurses: refused, not a 500.
        ("[" * 60_000, "is not a JSON object: give the whole key file of the account"),
        (
            json.dumps(service_account("https://attacker.example/token")),
            # Under the service account's input, which it names.
            "token_uri must be one of: https://oauth2.googleapis.com/token",
        ),
        (json.dumps({"project_id": "p"}), "“Service account” lacks client_email, private_key"),
    ],
)
def test_a_bad_service_account_is_refused_under_its_field(
    staff_client: Any, tenant: Tenant, account: str, error: str
) -> None:
    data = {"tenant": tenant.pk, "kind": "fcm", "status": "active", "service_account": account}

    errors = form_errors(staff_client.post(admin_url(PushChannel, "add"), data))

    assert errors["service_account"][0].startswith(error)
    assert not PushChannel.objects.exists()


def test_fields_of_another_kind_and_missing_fields_are_refused(
    staff_client: Any, tenant: Tenant
) -> None:
    data = apns_form(tenant, kind="expo", team_id="", signing_key="", access_token="")
    errors = form_errors(staff_client.post(admin_url(PushChannel, "add"), data))
    assert errors == {
        "key_id": ["only for Apple Push Notification service channels, not Expo"],
        "bundle_id": ["only for Apple Push Notification service channels, not Expo"],
        "sandbox": ["only for Apple Push Notification service channels, not Expo"],
    }

    missing = apns_form(tenant, key_id="", signing_key="")
    errors = form_errors(staff_client.post(admin_url(PushChannel, "add"), missing))
    assert errors == {
        "key_id": ["required for Apple Push Notification service channels"],
        "signing_key": ["required for Apple Push Notification service channels"],
    }
    assert not PushChannel.objects.exists()


def test_a_key_pasted_and_uploaded_is_refused(staff_client: Any, tenant: Tenant) -> None:
    upload = SimpleUploadedFile("AuthKey.p8", apns_signing_key().encode())
    data = apns_form(tenant, signing_key_file=upload)

    errors = form_errors(staff_client.post(admin_url(PushChannel, "add"), data))

    assert errors == {"signing_key_file": ["paste the key or upload its file, not both"]}


# Channels: secrets are write-only


def test_secrets_never_appear_in_any_page(staff_client: Any, tenant: Tenant) -> None:
    add = staff_client.post(admin_url(PushChannel, "add"), apns_form(tenant))
    assert add.status_code == 302
    # Kept out of error reports too.
    assert add.wsgi_request.sensitive_post_parameters == (
        "signing_key",
        "service_account",
        "access_token",
    )
    fcm = {"tenant": tenant.pk, "kind": "fcm", "service_account": json.dumps(service_account())}
    staff_client.post(admin_url(PushChannel, "add"), {**fcm, "status": "active"})
    expo = {"tenant": tenant.pk, "kind": "expo", "status": "active", "access_token": EXPO_TOKEN}
    staff_client.post(admin_url(PushChannel, "add"), expo)
    channels = list(PushChannel.objects.order_by("pk"))
    assert [c.kind for c in channels] == ["apns", "fcm", "expo"]

    pages = [staff_client.get(add["Location"]), staff_client.get(admin_url(PushChannel))]
    for channel in channels:
        url = admin_url(PushChannel, "change", channel.pk)
        pages.append(staff_client.get(url))
        # After a save, and after a save refused with an error.
        pages.append(staff_client.post(url, {"status": "active"}, follow=True))
        pages.append(staff_client.get(admin_url(PushChannel, "history", channel.pk), follow=True))
    apns_page = pages[2].content.decode()
    # The settings are shown.
    assert "TEAM123456" in apns_page
    assert "com.example.app" in apns_page
    assert "gamify-test" in pages[5].content.decode()  # the FCM project id
    for page in pages:
        assert page.status_code == 200
        content = page.content.decode()
        for secret in (key_body(apns_signing_key()), key_body(fcm_private_key()), EXPO_TOKEN):
            assert secret not in content
        assert "PRIVATE KEY" not in content


def test_an_empty_secret_on_edit_keeps_the_old_one(staff_client: Any, tenant: Tenant) -> None:
    channel = apns_channel(tenant)
    url = admin_url(PushChannel, "change", channel.pk)
    page = staff_client.get(url).content.decode()
    assert "Empty: keep the current one." in page

    edit = {
        "status": "inactive",
        "team_id": "TEAM123456",
        "key_id": "KEY1234567",
        "bundle_id": "com.example.other",
        "signing_key": "",
        "sandbox": "on",
    }
    assert staff_client.post(url, edit).status_code == 302

    channel.refresh_from_db()
    assert channel.status == "inactive"
    assert channel.settings["bundleId"] == "com.example.other"
    assert channel.settings["sandbox"] is True
    assert secrets_decrypt(channel.credentials) == {"signingKey": apns_signing_key()}

    # A new key replaces the old one; an invalid one changes nothing.
    assert staff_client.post(url, {**edit, "signing_key": "junk"}).status_code == 200
    channel.refresh_from_db()
    assert secrets_decrypt(channel.credentials) == {"signingKey": apns_signing_key()}


def test_a_new_secret_replaces_the_old_one(staff_client: Any, tenant: Tenant) -> None:
    channel = push_channel_create(
        tenant, PushChannelSettings(kind="expo", access_token="old-token")
    )
    url = admin_url(PushChannel, "change", channel.pk)

    assert staff_client.post(url, {"status": "active", "access_token": ""}).status_code == 302
    channel.refresh_from_db()
    assert secrets_decrypt(channel.credentials) == {"accessToken": "old-token"}

    assert staff_client.post(url, {"status": "active", "access_token": "new"}).status_code == 302
    channel.refresh_from_db()
    assert secrets_decrypt(channel.credentials) == {"accessToken": "new"}


def test_the_change_page_shows_only_the_channels_own_provider(
    staff_client: Any, tenant: Tenant
) -> None:
    channel = push_channel_create(
        tenant, PushChannelSettings(kind="fcm", service_account=service_account())
    )

    form = staff_client.get(admin_url(PushChannel, "change", channel.pk)).context["form"]

    assert sorted(form.fields) == ["service_account", "service_account_file", "status"]


# Channels: the flag


def test_the_list_shows_a_flagged_channel_with_its_reason(
    staff_client: Any, tenant: Tenant
) -> None:
    flag(apns_channel(tenant))
    push_channel_create(tenant, PushChannelSettings(kind="expo"))

    content = staff_client.get(admin_url(PushChannel)).content.decode()

    assert content.count('class="push-flag"') == 1
    assert f'title="{FLAG_REASON}"' in content
    assert "com.example.app" in content
    flagged = staff_client.get(admin_url(PushChannel) + "?flagged=yes")
    assert [c.kind for c in flagged.context["cl"].result_list] == ["apns"]


def test_the_clear_flag_action(staff_client: Any, tenant: Tenant) -> None:
    flagged = flag(apns_channel(tenant))
    other = push_channel_create(tenant, PushChannelSettings(kind="expo"))

    response = staff_client.post(
        admin_url(PushChannel),
        {"action": "clear_flag", "_selected_action": [flagged.pk, other.pk]},
        follow=True,
    )

    assert message_texts(response) == [
        "Cleared the flag of 1 push channel: dead tokens are pruned again."
    ]
    flagged.refresh_from_db()
    assert (flagged.flagged_at, flagged.flag_reason) == (None, "")
    assert secrets_decrypt(flagged.credentials) == {"signingKey": apns_signing_key()}


def test_the_change_page_shows_the_flag_and_clears_it(staff_client: Any, tenant: Tenant) -> None:
    channel = flag(apns_channel(tenant))
    url = admin_url(PushChannel, "change", channel.pk)

    page = staff_client.get(url).content.decode()

    assert 'class="push-flag-note"' in page
    assert FLAG_REASON in page
    edit = {
        "status": "active",
        "team_id": "TEAM123456",
        "key_id": "KEY1234567",
        "bundle_id": "com.example.app",
    }
    assert staff_client.post(url, edit).status_code == 302
    channel.refresh_from_db()
    assert channel.flagged_at is not None  # saving alone keeps the flag

    assert staff_client.post(url, {**edit, "clear_flag": "on"}).status_code == 302
    channel.refresh_from_db()
    assert channel.flagged_at is None
    assert "clear_flag" not in staff_client.get(url).context["form"].fields


def test_deleting_a_channel_goes_through_the_service(staff_client: Any, tenant: Tenant) -> None:
    channel = apns_channel(tenant)
    version = Tenant.objects.get(pk=tenant.pk).config_version
    url = admin_url(PushChannel, "delete", channel.pk)

    assert staff_client.post(url, {"post": "yes"}).status_code == 302

    assert not PushChannel.objects.exists()
    assert Tenant.objects.get(pk=tenant.pk).config_version > version


# Templates


def push_template_form(tenant: Tenant, **changes: Any) -> dict[str, Any]:
    data = {
        "tenant": tenant.pk,
        "type": NotificationType.ACHIEVEMENT_COMPLETED,
        "name": "Trophy push",
        "status": "inactive",
        "priority": 0,
        "title": "{{ achievement.name }}!",
        "body": "Well done, {{ user.name }}",
        "url": "myapp://achievements/{{ achievement.key }}",
        "data": "screen: achievement\nkey: {{ achievement.key }}",
        "user_attributes": "",
    }
    data.update(changes)
    return data


@pytest.fixture
def push_template(tenant: Tenant) -> PushTemplate:
    settings = PushTemplateSettings(
        type=NotificationType.RECAP,
        name="Weekly push",
        title="Your week, {{ user.name }}",
        body="{{ app.name }}: see your week",
        url="myapp://recap",
        data={"screen": "recap", "items": "{{ user.id }}"},
    )
    return push_template_create(tenant, settings)


def push_edit_form(template: PushTemplate, **changes: Any) -> dict[str, Any]:
    data = {
        "name": template.name,
        "status": template.status,
        "priority": template.priority,
        "title": template.title,
        "body": template.body,
        "url": template.url,
        "data": "\n".join(f"{k}: {v}" for k, v in template.data.items()),
        "user_attributes": "",
    }
    data.update(changes)
    return data


def test_a_fresh_tenant_lists_its_four_default_push_templates(
    staff_client: Any, tenant: Tenant
) -> None:
    response = staff_client.get(admin_url(PushTemplate))

    assert response.status_code == 200
    shown = response.context["cl"].result_list
    assert sorted(t.type for t in shown) == sorted(TROPHY_TYPES)  # no league yet
    assert {t.status for t in shown} == {"inactive"}
    staff_client.get(admin_url(PushTemplate))
    assert PushTemplate.objects.filter(tenant=tenant).count() == 4


def test_creating_a_push_template_goes_through_the_service(
    staff_client: Any, tenant: Tenant
) -> None:
    plan: Any = AttributeFactory(tenant=tenant, key="plan", type=AttributeType.USER)
    data = push_template_form(
        tenant,
        status="active",
        priority=5,
        **{"user_attributes-key": ["plan"], "user_attributes-value": ["pro"]},
    )

    assert staff_client.post(admin_url(PushTemplate, "add"), data).status_code == 302

    created = PushTemplate.objects.get(name="Trophy push")
    assert (created.type, created.status, created.priority) == (
        "achievement_completed",
        "active",
        5,
    )
    assert created.title == "{{ achievement.name }}!"
    assert created.body == "Well done, {{ user.name }}"
    assert created.url == "myapp://achievements/{{ achievement.key }}"
    assert created.data == {"screen": "achievement", "key": "{{ achievement.key }}"}
    assert created.user_attributes == [
        {"attributeId": str(plan.public_id), "attributeValue": "pro"}
    ]
    # The tenant's defaults came first: its first template does not stand in for them.
    assert PushTemplate.objects.filter(tenant=tenant).count() == 5


def test_a_push_template_added_without_content_starts_from_the_built_in_one(
    staff_client: Any, tenant: Tenant
) -> None:
    data = push_template_form(tenant, type="recap", title="", body="", url="", data="")
    assert staff_client.post(admin_url(PushTemplate, "add"), data).status_code == 302
    created = PushTemplate.objects.get(name="Trophy push")
    default = PushTemplate.objects.exclude(pk=created.pk).get(type="recap")
    assert (created.title, created.body, created.url, created.data) == (
        default.title,
        default.body,
        "",
        {},
    )


def test_data_may_be_a_json_object_and_is_shown_as_json_when_lines_cannot_say_it(
    staff_client: Any, tenant: Tenant
) -> None:
    data = json.dumps({"a:b": "x", "multi": "line one\nline two"})
    response = staff_client.post(
        admin_url(PushTemplate, "add"), push_template_form(tenant, data=data)
    )

    assert response.status_code == 302
    created = PushTemplate.objects.get(name="Trophy push")
    assert created.data == {"a:b": "x", "multi": "line one\nline two"}
    form = staff_client.get(admin_url(PushTemplate, "change", created.pk)).context["form"]
    assert json.loads(form.initial["data"]) == created.data


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        # Next to its input, a refusal of the services does not repeat the input's name.
        ("title", "{% if %}", "Line 1: "),
        ("body", "{{ user.__class__ }}", "Line 1: "),
        ("url", "{% for x in %}", "Line 1: "),
        ("data", "screen: {{ nope( }}", "screen: line 1: "),
        ("data", "no colon here", "“no colon here”: write each entry as key: value"),
        ("data", "a: 1\na: 2", "“a” appears twice"),
        ("data", '{"a": 1}', "must be a JSON object of strings"),
    ],
)
def test_a_push_template_error_is_shown_under_its_field(
    staff_client: Any, tenant: Tenant, field: str, value: str, error: str
) -> None:
    response = staff_client.post(
        admin_url(PushTemplate, "add"), push_template_form(tenant, **{field: value})
    )

    errors = form_errors(response)
    assert list(errors) == [field]
    assert errors[field][0].startswith(error)
    assert not PushTemplate.objects.filter(name="Trophy push").exists()


def test_editing_a_push_template(staff_client: Any, push_template: PushTemplate) -> None:
    url = admin_url(PushTemplate, "change", push_template.pk)
    page = staff_client.get(url)
    assert page.status_code == 200
    assert admin_url(PushTemplate, "preview", push_template.pk).encode() in page.content
    assert "type" not in page.context["form"].fields  # read-only once created
    assert page.context["form"].initial["data"] == "items: {{ user.id }}\nscreen: recap"

    edit = push_edit_form(push_template, status="active", title="Hi {{ user.name }}", data="")
    assert staff_client.post(url, edit).status_code == 302

    push_template.refresh_from_db()
    assert (push_template.status, push_template.title, push_template.type) == (
        "active",
        "Hi {{ user.name }}",
        "recap",
    )
    assert push_template.data == {}


def test_an_edit_that_breaks_the_push_template_changes_nothing(
    staff_client: Any, push_template: PushTemplate
) -> None:
    url = admin_url(PushTemplate, "change", push_template.pk)
    edit = push_edit_form(push_template, body="{% if %}", status="active")

    errors = form_errors(staff_client.post(url, edit))

    assert errors["body"][0].startswith("Line 1")
    push_template.refresh_from_db()
    assert (push_template.status, push_template.body) == (
        "inactive",
        "{{ app.name }}: see your week",
    )


# Preview


@pytest.fixture
def alice(tenant: Tenant) -> EndUser:
    return cast(EndUser, EndUserFactory(tenant=tenant, external_id="alice", name="<b>Ada</b>"))


def preview_url(template: PushTemplate) -> str:
    return admin_url(PushTemplate, "preview", template.pk)


def test_the_preview_renders_for_a_user_escaped(
    staff_client: Any, push_template: PushTemplate, alice: EndUser
) -> None:
    response = staff_client.get(preview_url(push_template), {"user": "alice"})

    assert response.status_code == 200
    rendered = response.context["rendered"]
    assert rendered.title == "Your week, <b>Ada</b>"
    assert rendered.url == "myapp://recap"
    assert rendered.data == {"screen": "recap", "items": "alice"}
    content = response.content.decode()
    assert "Your week, &lt;b&gt;Ada&lt;/b&gt;" in content
    assert "<b>Ada</b>" not in content
    assert '<code class="url">myapp://recap</code>' in content
    assert '<td class="value">alice</td>' in content  # a key named "items" is still data


def test_the_preview_without_a_user_uses_sample_data_in_the_tenants_brand(
    staff_client: Any, push_template: PushTemplate
) -> None:
    tenant = push_template.tenant
    tenant.branding = {"appName": "Wordsmith"}
    tenant.save()

    response = staff_client.get(preview_url(push_template))

    assert response.status_code == 200
    assert response.context["rendered"].title == "Your week, Jamie"
    assert response.context["rendered"].body == "Wordsmith: see your week"
    assert "With sample data" in response.content.decode()


def test_the_preview_of_a_user_of_another_tenant_shows_sample_data(
    staff_client: Any, push_template: PushTemplate, other_tenant: Tenant
) -> None:
    EndUserFactory(tenant=other_tenant, external_id="carol", name="Carol")

    response = staff_client.get(preview_url(push_template), {"user": "carol"})

    assert message_texts(response) == ["No end-user “carol” in this template's tenant."]
    assert response.context["rendered"].title == "Your week, Jamie"


def test_a_broken_push_template_is_a_message_on_the_preview(
    staff_client: Any, push_template: PushTemplate, alice: EndUser
) -> None:
    PushTemplate.objects.filter(pk=push_template.pk).update(data={"x": "{{ variation() }}"})

    for query in ({}, {"user": "alice"}):
        response = staff_client.get(preview_url(push_template), query)
        assert response.status_code == 200
        assert response.context["rendered"] is None
        [text] = message_texts(response)
        assert text.startswith("The template does not render: data.x: ")


# Delivery log


def push_message(tenant: Tenant, user: EndUser, key: str = "k0", **fields: Any) -> Message:
    return Message.objects.create(
        tenant=tenant,
        user=user,
        type=NotificationType.RECAP,
        channel=fields.pop("channel", Channel.PUSH),
        dedupe_key=key,
        send_at=timezone.now(),
        status=fields.pop("status", MessageStatus.SENT),
        subject="Your week",
        **fields,
    )


def record_attempts(message: Message, channel: PushChannel | None, count: int) -> None:
    PushAttempt.objects.bulk_create(
        PushAttempt(
            message=message,
            channel=channel,
            provider="apns",
            token_hash=f"{i:016x}",
            ok=i % 2 == 0,
            status_code=200 if i % 2 == 0 else 410,
            reason="" if i % 2 == 0 else "Unregistered",
        )
        for i in range(count)
    )


def test_a_push_messages_page_lists_its_attempts(
    staff_client: Any, tenant: Tenant, alice: EndUser, push_template: PushTemplate
) -> None:
    message = push_message(tenant, alice, push_template=push_template)
    record_attempts(message, apns_channel(tenant), 2)

    page = staff_client.get(admin_url(Message, "change", message.pk))

    assert page.status_code == 200
    content = page.content.decode()
    assert "Push attempts" in content
    assert "<th>time</th><th>provider</th><th>token hash</th><th>ok</th>" in content
    assert "<td>APNs</td><td>0000000000000001</td><td>no</td><td>410</td><td>Unregistered</td>" in (
        content
    )
    assert "<td>APNs</td><td>0000000000000000</td><td>yes</td><td>200</td><td>-</td>" in content
    assert admin_url(PushTemplate, "change", push_template.pk) in content


def test_a_messages_page_shows_its_latest_attempts_only(
    staff_client: Any, tenant: Tenant, alice: EndUser
) -> None:
    message = push_message(tenant, alice)
    record_attempts(message, None, ATTEMPTS_SHOWN + 1)

    content = staff_client.get(admin_url(Message, "change", message.pk)).content.decode()

    assert content.count("<td>APNs</td>") == ATTEMPTS_SHOWN
    assert f"The latest {ATTEMPTS_SHOWN} attempts." in content


def test_an_email_messages_page_has_no_attempts_table(
    staff_client: Any, tenant: Tenant, alice: EndUser
) -> None:
    message = push_message(tenant, alice, channel=Channel.EMAIL)

    page = staff_client.get(admin_url(Message, "change", message.pk))

    assert page.status_code == 200
    assert "Push attempts" not in page.content.decode()


def test_the_end_user_page_shows_the_channel_and_attempt_counts(
    staff_client: Any, tenant: Tenant, alice: EndUser
) -> None:
    message = push_message(tenant, alice)
    record_attempts(message, None, 3)
    Message.objects.create(
        tenant=tenant,
        user=alice,
        type=NotificationType.RECAP,
        dedupe_key="email",
        send_at=timezone.now(),
        status=MessageStatus.SKIPPED,
        subject="Subject 0",
        error="user unsubscribed",
    )

    content = staff_client.get(admin_url(EndUser, "change", alice.pk)).content.decode()
    card = content.split('id="user-notifications"')[1].split("</section>")[0]
    card = re.sub(r">\s+<", "><", card)

    assert "<td>Your week</td><td>-</td><td>3 (2 ok)</td>" in card  # push: its attempts
    assert "<td>Subject 0</td><td>user unsubscribed</td><td>-</td>" in card  # email: none


# Query counts


def populate(names: list[str], each: int) -> None:
    """Per organization: channels of each kind, push messages with attempts, a flag."""
    for name in names:
        tenant = OrganizationWithKey(name).tenant
        user = cast(EndUser, EndUserFactory(tenant=tenant))
        for i in range(each):
            channel = flag(apns_channel(tenant)) if i % 2 else apns_channel(tenant)
            message = push_message(tenant, user, key=f"k{i}")
            record_attempts(message, channel, 2)


def test_list_queries_do_not_grow_with_rows(staff_client: Any) -> None:
    pages = (admin_url(PushChannel), admin_url(PushTemplate), admin_url(Message))
    populate(["A"], 1)
    for url in pages:
        staff_client.get(url)  # seeds the templates of the tenant shown
    few = [count_queries(staff_client, url) for url in pages]

    populate(["B", "C", "D", "E"], 5)
    assert PushChannel.objects.count() == Message.objects.count() == 21
    for url in pages:
        staff_client.get(url)
    # The list seeds the tenant it shows only, not the new organizations' tenants.
    assert PushTemplate.objects.count() == 4

    assert [count_queries(staff_client, url) for url in pages] == few


def test_the_end_user_section_queries_do_not_grow_with_push_messages(
    staff_client: Any, tenant: Tenant, alice: EndUser
) -> None:
    channel = apns_channel(tenant)
    record_attempts(push_message(tenant, alice, key="first"), channel, 2)
    url = admin_url(EndUser, "change", alice.pk)
    staff_client.get(url)  # fills the per-process caches (content types, tenant config)
    one = count_queries(staff_client, url)

    for i in range(19):
        record_attempts(push_message(tenant, alice, key=f"more{i}"), channel, 2)

    assert count_queries(staff_client, url) == one


# Permissions


@pytest.fixture
def plain_staff(org: OrganizationWithKey) -> Any:
    return org_staff(org, username="plain")


def test_staff_without_permissions_cannot_reach_the_push_pages(
    plain_staff: Any, tenant: Tenant, push_template: PushTemplate
) -> None:
    channel = flag(apns_channel(tenant))
    client = Client()
    client.force_login(plain_staff)

    for url in (
        admin_url(PushChannel),
        admin_url(PushChannel, "add"),
        admin_url(PushChannel, "change", channel.pk),
        admin_url(PushTemplate),
        admin_url(PushTemplate, "change", push_template.pk),
        preview_url(push_template),
    ):
        assert client.get(url).status_code == 403, url
    action = {"action": "clear_flag", "_selected_action": [channel.pk]}
    assert client.post(admin_url(PushChannel), action).status_code == 403
    channel.refresh_from_db()
    assert channel.flagged_at is not None


def test_viewers_see_channels_but_cannot_clear_flags_or_edit(
    plain_staff: Any, tenant: Tenant
) -> None:
    channel = flag(apns_channel(tenant))
    plain_staff.user_permissions.add(Permission.objects.get(codename="view_pushchannel"))
    client = Client()
    client.force_login(plain_staff)

    listed = client.get(admin_url(PushChannel))
    assert listed.status_code == 200
    assert "clear_flag" not in listed.content.decode()
    page = client.get(admin_url(PushChannel, "change", channel.pk))
    assert page.status_code == 200
    assert key_body(apns_signing_key()) not in page.content.decode()
    assert client.post(admin_url(PushChannel, "change", channel.pk), {}).status_code == 403
    response = client.post(
        admin_url(PushChannel), {"action": "clear_flag", "_selected_action": [channel.pk]}
    )
    assert response.status_code in (200, 302)
    channel.refresh_from_db()
    assert channel.flagged_at is not None
