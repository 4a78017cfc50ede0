"""Push channels and push templates through the admin API (gamify extensions)."""

import io

import pytest

from apps.core.declarations import settings_of
from apps.core.errors import ValidationError
from apps.notifications.choices import MessageStatus
from apps.notifications.domain import PushChannelSettings
from apps.notifications.models import PushAttempt, PushChannel, PushTemplate
from apps.notifications.push.configuration import push_channel_create, push_channel_update
from apps.notifications.push.credentials import SECRETS
from apps.notifications.push.secrets import secrets_decrypt
from tests.admin_issues import admin_issue
from tests.notifications.conftest import at, messages, metric_achievement, run_jobs, send_event
from tests.notifications.push.keys import apns_signing_key, service_account

CHANNELS = "/admin/v1/push-channels"
TEMPLATES = "/admin/v1/push-templates"


def apns(**overrides):
    return {
        "kind": "apns",
        "teamId": "TEAM123456",
        "keyId": "KEY1234567",
        "bundleId": "com.example.app",
        "signingKey": apns_signing_key(),
        "sandbox": True,
        **overrides,
    }


def create(client, item):
    response = client.post(CHANNELS, [item])
    assert response.status_code in (200, 201), response.content
    return response.json()


def test_an_apns_channel_is_created_and_its_key_never_shown(api_client):
    body = create(api_client, apns())
    [channel] = body["created"]
    assert channel["kind"] == "apns"
    assert channel["status"] == "active"
    assert (channel["teamId"], channel["keyId"], channel["bundleId"]) == (
        "TEAM123456",
        "KEY1234567",
        "com.example.app",
    )
    assert channel["sandbox"] is True
    assert channel["hasCredentials"] is True
    assert channel["flagged"] is False
    listed = api_client.get(CHANNELS).content.decode()
    read = api_client.get(f"{CHANNELS}/{channel['id']}").content.decode()
    for text in (str(body), listed, read):
        assert "PRIVATE KEY" not in text
        assert "signingKey" not in text


def test_credentials_are_encrypted_at_rest(api_client):
    create(api_client, {"kind": "expo", "accessToken": "expo-secret-token"})
    stored = PushChannel.objects.get()
    assert "expo-secret-token" not in stored.credentials
    assert secrets_decrypt(stored.credentials) == {"accessToken": "expo-secret-token"}


def test_rotating_the_encryption_key_keeps_channels_readable(api_client, settings):
    from apps.notifications.push.secrets import secrets_reencrypt

    create(api_client, {"kind": "expo", "accessToken": "t0ken"})
    old = settings.SECRET_KEY
    settings.ENCRYPTION_KEY = "a-new-dedicated-key-" + "x" * 40
    settings.ENCRYPTION_KEY_FALLBACKS = [old]
    stored = PushChannel.objects.get()
    assert secrets_decrypt(stored.credentials) == {"accessToken": "t0ken"}
    rotated = secrets_reencrypt(stored.credentials)
    settings.ENCRYPTION_KEY_FALLBACKS = []
    assert secrets_decrypt(rotated) == {"accessToken": "t0ken"}


def test_an_fcm_channel_takes_its_project_from_the_service_account(api_client):
    [channel] = create(api_client, {"kind": "fcm", "serviceAccount": service_account()})["created"]
    assert channel["projectId"] == "gamify-test"
    assert "serviceAccount" not in channel
    assert "private_key" not in str(channel)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (apns(signingKey="not a key"), "signingKey"),
        (apns(signingKey=None), "signingKey"),
        ({"kind": "apns", "teamId": "T"}, "need"),
        ({"kind": "fcm", "serviceAccount": {"project_id": "p"}}, "serviceAccount lacks"),
        (
            {"kind": "fcm", "serviceAccount": {**service_account(), "private_key": "x"}},
            "private_key",
        ),
        ({"kind": "expo", "teamId": "T"}, "take no teamId"),
        (
            {"kind": "fcm", "serviceAccount": service_account("http://169.254.169.254/token")},
            "token_uri must be one of",
        ),
        ({"kind": "carrier-pigeon"}, "kind"),
        *[
            (
                {"kind": "fcm", "serviceAccount": {**service_account(), "project_id": bad}},
                "serviceAccount.project_id must be a Google Cloud project id",
            )
            for bad in ("p\nERROR forged", "p\x1b[31m", "my project", "", "-p", "p" * 101)
        ],
        *[
            (apns(**{field: bad}), f"{field} must be")
            for field in ("teamId", "keyId", "bundleId")
            for bad in ("T 1", "T\u00e9", "T/1", "T%0a")
        ],
        (apns(bundleId=".app"), "bundleId must be"),
    ],
)
def test_a_channel_that_cannot_sign_is_refused(api_client, item, message):
    body = create(api_client, {k: v for k, v in item.items() if v is not None})
    assert body["created"] == []
    assert message in body["issues"][0]["message"]


def test_updating_keeps_the_secrets_not_given_and_clears_the_flag(api_client):
    [channel] = create(api_client, apns())["created"]
    PushChannel.objects.update(flag_reason="bad tokens")
    PushChannel.objects.update(flagged_at="2026-03-10T00:00:00Z")
    response = api_client.patch(
        CHANNELS, [{"id": channel["id"], "sandbox": False, "flagged": False}]
    )
    [updated] = response.json()["updated"]
    assert updated["sandbox"] is False
    assert updated["flagged"] is False
    stored = PushChannel.objects.get()
    assert secrets_decrypt(stored.credentials)["signingKey"] == apns_signing_key()


def test_another_tenants_channel_is_not_found(api_client, other_tenant_client):
    [channel] = create(api_client, {"kind": "expo"})["created"]
    assert other_tenant_client.get(f"{CHANNELS}/{channel['id']}").status_code == 404
    assert other_tenant_client.delete(f"{CHANNELS}?ids={channel['id']}").json()["deleted"] == []


def test_push_templates_start_as_four_inactive_defaults(api_client):
    templates = api_client.get(TEMPLATES, {"limit": 100}).json()
    assert sorted(t["type"] for t in templates) == [
        "achievement_completed",
        "reactivation",
        "recap",
        "streak_reminder",
    ]
    assert {t["status"] for t in templates} == {"inactive"}
    assert all(t["title"] and t["body"] for t in templates)


def test_a_push_template_that_does_not_render_is_an_issue(api_client):
    response = api_client.post(
        TEMPLATES, [{"type": "recap", "name": "x", "data": {"screen": "{% if %}"}}]
    )
    assert response.json()["issues"][0]["message"].startswith("data.screen:")
    response = api_client.post(
        TEMPLATES, [{"type": "recap", "name": "x", "title": "{{ x.__class__ }}"}]
    )
    assert response.json()["issues"][0]["message"].startswith("title:")


def test_push_template_preview_renders_for_a_user(api_client, metric):
    api_client.post("/v1/metrics/words/event", {"user": {"id": "u1", "name": "Ada"}, "value": 3})
    [created] = api_client.post(
        TEMPLATES,
        [
            {
                "type": "recap",
                "name": "Mine",
                "title": "Hi {{ user.name }}",
                "body": "{{ metrics.words.total }} words",
                "url": "app://recap/{{ user.id }}",
                "data": {"screen": "recap"},
            }
        ],
    ).json()["created"]
    response = api_client.post(f"{TEMPLATES}/{created['id']}/preview", {"userId": "u1"})
    assert response.status_code == 200, response.content
    assert response.json() == {
        "title": "Hi Ada",
        "body": "3 words",
        "url": "app://recap/u1",
        "data": {"screen": "recap"},
    }


def test_the_rotate_command_reencrypts_under_the_new_key(api_client, settings):
    from django.core.management import call_command

    create(api_client, {"kind": "expo", "accessToken": "t0ken"})
    settings.ENCRYPTION_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.ENCRYPTION_KEY = "the-new-key-" + "y" * 40
    out = io.StringIO()
    call_command("push_credentials_rotate", stdout=out)
    assert "re-encrypted 1 channel(s)" in out.getvalue()
    settings.ENCRYPTION_KEY_FALLBACKS = []
    assert secrets_decrypt(PushChannel.objects.get().credentials) == {"accessToken": "t0ken"}


UNKNOWN = "00000000-0000-4000-8000-000000000000"
EXPO = "ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]"


def push_template(client, **fields):
    response = client.post(TEMPLATES, [{"type": "recap", "name": "Mine", **fields}])
    assert response.status_code == 201, response.content
    return response.json()["created"][0]


def test_a_push_template_is_read_by_id(api_client):
    default = api_client.get(TEMPLATES, {"limit": 100}).json()[0]
    response = api_client.get(f"{TEMPLATES}/{default['id']}")
    assert response.status_code == 200
    assert response.json() == default
    created = push_template(
        api_client,
        title="Hi {{ user.name }}",
        body="Your week",
        url="app://recap",
        data={"screen": "recap"},
        priority=3,
    )
    read = api_client.get(f"{TEMPLATES}/{created['id']}").json()
    assert read == created
    assert (read["type"], read["name"], read["status"], read["priority"]) == (
        "recap",
        "Mine",
        "inactive",
        3,
    )
    assert (read["title"], read["url"], read["data"]) == (
        "Hi {{ user.name }}",
        "app://recap",
        {"screen": "recap"},
    )


def test_a_push_template_not_there_is_a_404(api_client, other_tenant_client):
    theirs = push_template(other_tenant_client)
    for object_id in (UNKNOWN, "not-a-uuid", theirs["id"]):
        response = api_client.get(f"{TEMPLATES}/{object_id}")
        assert response.status_code == 404
        assert response.json() == {"error": "Push template not found by ID"}


def test_a_deleted_push_template_is_gone_and_a_deleted_default_does_not_come_back(api_client):
    created = push_template(api_client)
    default = api_client.get(TEMPLATES, {"limit": 100}).json()[0]
    response = api_client.delete(f"{TEMPLATES}?ids={created['id']}&ids={default['id']}")
    assert response.status_code == 200
    assert response.json() == {
        "deleted": [{"id": created["id"]}, {"id": default["id"]}],
        "issues": [],
    }
    assert api_client.get(f"{TEMPLATES}/{created['id']}").status_code == 404
    left = api_client.get(TEMPLATES, {"limit": 100}).json()
    assert len(left) == 3
    assert default["type"] not in {t["type"] for t in left}
    assert PushTemplate.objects.count() == 3


def test_deleting_push_templates_not_there_is_an_issue(api_client, other_tenant_client):
    theirs = push_template(other_tenant_client)
    response = api_client.delete(f"{TEMPLATES}?ids=not-a-uuid,{UNKNOWN},{theirs['id']}")
    assert response.status_code == 200
    assert response.json() == {
        "deleted": [],
        "issues": [
            admin_issue("id must be a valid UUID", id="not-a-uuid"),
            admin_issue("Push template not found by ID", id=UNKNOWN),
            admin_issue("Push template not found by ID", id=theirs["id"]),
        ],
    }
    assert other_tenant_client.get(f"{TEMPLATES}/{theirs['id']}").status_code == 200


def test_deleting_push_templates_without_ids_is_a_422(api_client):
    response = api_client.delete(TEMPLATES)
    assert response.status_code == 422
    assert response.json() == {"error": "ids is required: give at least one id"}


def test_deleting_the_active_push_template_stops_the_pushes_it_sent(api_client, metric, settings):
    settings.PUSH_BACKEND = "console"
    create(api_client, {"kind": "expo"})
    metric_achievement(api_client, metric)
    templates = api_client.get(TEMPLATES, {"limit": 100}).json()
    template = next(t for t in templates if t["type"] == "achievement_completed")
    response = api_client.patch(TEMPLATES, [{"id": template["id"], "status": "active"}])
    assert response.json()["issues"] == []
    # Scheduled for the evening window (17:00), with this template.
    send_event(api_client, at("2026-03-10", 9), "u1", value=10, tz="UTC", deviceTokens=[EXPO])
    [scheduled] = messages(channel="push")
    deleted = api_client.delete(f"{TEMPLATES}?ids={template['id']}")
    assert deleted.json()["deleted"] == [{"id": template["id"]}]
    send_event(api_client, at("2026-03-10", 10), "u2", value=10, tz="UTC", deviceTokens=[EXPO])
    assert messages(channel="push") == [scheduled]  # nothing new scheduled for u2
    run_jobs(at("2026-03-10", 17))
    run_jobs(at("2026-03-10", 17, 5))
    scheduled.refresh_from_db()
    assert scheduled.status == MessageStatus.SKIPPED
    assert scheduled.error == "no active push template matches the user"
    assert PushAttempt.objects.count() == 0


def test_application_keys_cannot_read_or_delete_push_templates(org, anon_client, api_client):
    template = api_client.get(TEMPLATES, {"limit": 100}).json()[0]
    anon_client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    responses = [
        anon_client.get(f"{TEMPLATES}/{template['id']}"),
        anon_client.delete(f"{TEMPLATES}?ids={template['id']}"),
    ]
    assert [r.status_code for r in responses] == [403, 403]
    assert all(list(r.json()) == ["error"] for r in responses)
    assert api_client.get(f"{TEMPLATES}/{template['id']}").status_code == 200


# --- the services' own rules --------------------------------------------------------------


@pytest.mark.django_db
def test_a_new_channel_is_not_flagged_and_its_kind_is_set_for_good(tenant):
    with pytest.raises(ValidationError) as flagged:
        push_channel_create(tenant, PushChannelSettings(kind="expo", flagged=False))
    assert (flagged.value.fields, flagged.value.code) == (("flagged",), "not_allowed")
    channel = push_channel_create(tenant, PushChannelSettings(kind="expo"))
    with pytest.raises(ValidationError) as kind:
        push_channel_update(tenant, channel, PushChannelSettings(kind="fcm"))
    assert (kind.value.fields, kind.value.code) == (("kind",), "frozen")


def test_the_declared_secrets_are_the_providers_secrets():
    # What the pages never show back and the API never answers with is what is stored
    # encrypted.
    declared = {name for name, s in settings_of(PushChannelSettings).items() if s.secret}
    assert declared == {name for names in SECRETS.values() for name in names}
