"""Push follows the email rules: the same types and timing, preferences per channel, no control
group, one message per thing. Sent here through the console backend (no provider)."""

import pytest

from apps.notifications.choices import MessageStatus
from apps.notifications.models import PushAttempt
from apps.users.models import EndUser
from tests.notifications.conftest import (
    activate,
    at,
    messages,
    metric_achievement,
    outbox_to,
    run_jobs,
    send_event,
)

PARIS = "Europe/Paris"
IOS = "a" * 64
EXPO = "ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]"


def activate_push(client, type, **fields):
    templates = client.get("/admin/v1/push-templates", {"limit": 100}).json()
    template = next(t for t in templates if t["type"] == type)
    response = client.patch(
        "/admin/v1/push-templates", [{"id": template["id"], "status": "active", **fields}]
    )
    assert response.json()["issues"] == [], response.content


@pytest.fixture
def console(settings, api_client):
    settings.PUSH_BACKEND = "console"
    response = api_client.post("/admin/v1/push-channels", [{"kind": "expo"}])
    assert response.status_code == 201, response.content
    return api_client


@pytest.fixture
def achievement_push(console, metric):
    metric_achievement(console, metric)
    activate_push(console, "achievement_completed")
    return console


def test_an_achievement_push_waits_for_the_evening_window(achievement_push):
    send_event(
        achievement_push, at("2026-03-10", 9, tz=PARIS), value=10, tz=PARIS, deviceTokens=[EXPO]
    )
    [message] = messages(channel="push")
    assert message.send_at == at("2026-03-10", 17, tz=PARIS)
    run_jobs(at("2026-03-10", 17, tz=PARIS))
    run_jobs(at("2026-03-10", 17, 5, tz=PARIS))
    message.refresh_from_db()
    assert message.status == MessageStatus.SENT
    assert message.subject  # the rendered title, for the log
    [attempt] = PushAttempt.objects.all()
    assert attempt.ok
    assert EXPO not in attempt.token_hash


def test_email_and_push_are_separate_messages_with_their_own_preferences(achievement_push):
    activate(achievement_push, "achievement_completed")
    send_event(achievement_push, at("2026-03-10", 8), value=1, tz="UTC", deviceTokens=[EXPO])
    achievement_push.patch(
        "/v1/users/u1/preferences", {"notifications": {"achievement_completed": ["email"]}}
    )
    send_event(achievement_push, at("2026-03-10", 18), value=10, tz="UTC")
    assert [m.channel for m in messages()] == ["email"]
    assert len(outbox_to("u1@example.com")) == 1


@pytest.mark.parametrize(
    "fields",
    [{"deviceTokens": []}, {"deviceTokens": None}],
)
def test_users_without_device_tokens_get_no_push(achievement_push, fields):
    send_event(achievement_push, at("2026-03-10", 18), value=10, tz="UTC", **fields)
    assert messages(channel="push") == []


def test_the_control_group_gets_no_push(achievement_push, tenant):
    tenant.control_ratio = 100
    tenant.save()
    send_event(achievement_push, at("2026-03-10", 18), value=10, tz="UTC", deviceTokens=[EXPO])
    assert messages() == []


def test_without_an_active_channel_nothing_is_scheduled(achievement_push):
    channel = achievement_push.get("/admin/v1/push-channels").json()[0]
    achievement_push.patch("/admin/v1/push-channels", [{"id": channel["id"], "status": "inactive"}])
    send_event(achievement_push, at("2026-03-10", 18), value=10, tz="UTC", deviceTokens=[EXPO])
    assert messages() == []


def test_reminders_reactivation_and_recaps_go_out_once_by_push(console, metric):
    console.patch(
        "/admin/v1/streaks/settings",
        {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
    )
    for type in ("streak_reminder", "reactivation", "recap"):
        activate_push(console, type)
    send_event(console, at("2026-03-04", 10), tz="UTC", deviceTokens=[EXPO])  # a Wednesday
    for when in (at("2026-03-05", 20, 1), at("2026-03-05", 20, 6)):
        run_jobs(when)  # reminder: not extended on Thursday
    for when in (at("2026-03-07", 17, 1, tz="UTC"), at("2026-03-07", 17, 30, tz="UTC")):
        run_jobs(when)  # reactivation: 3 days
    for when in (at("2026-03-09", 9, 1), at("2026-03-09", 9, 31)):
        run_jobs(when)  # weekly recap on Monday
    sent = messages(channel="push")
    assert sorted(m.type for m in sent) == ["reactivation", "recap", "streak_reminder"]
    assert {m.status for m in sent} == {MessageStatus.SENT}
    assert PushAttempt.objects.count() == 3


def test_a_token_no_channel_takes_fails_the_message(achievement_push):
    send_event(achievement_push, at("2026-03-10", 18), value=10, tz="UTC", deviceTokens=[IOS])
    [message] = messages(channel="push")
    assert message.status == MessageStatus.FAILED
    assert "no active channel takes the token" in message.error
    assert EndUser.objects.get().device_tokens == [IOS]  # not a dead token: kept
