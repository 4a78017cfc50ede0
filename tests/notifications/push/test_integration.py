"""Push end to end over real HTTP: events and jobs on one side, fake APNs, FCM and Expo servers
on 127.0.0.1 on the other (base URLs from the PUSH_*_URL settings)."""

import queue
from collections.abc import Iterator
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command

from apps.core import background
from apps.notifications.choices import MessageStatus
from apps.notifications.jobs import notifications_expo_receipts
from apps.notifications.models import PushAttempt, PushChannel
from apps.users.models import EndUser
from tests.notifications.conftest import at, messages, metric_achievement, run_jobs, send_event
from tests.notifications.push.fakes import Answer, FakeApns, FakeExpo, FakeFcm, fcm_error
from tests.notifications.push.keys import apns_signing_key, fcm_private_key
from tests.notifications.push.test_push_flow import activate_push

IOS_A, IOS_B = "a" * 64, "b" * 64
ANDROID = "fcm-token-1:APA91b" + "x" * 40
EXPO = "ExponentPushToken[abcdefghijklmnop]"


@pytest.fixture
def fakes(settings) -> Iterator[tuple[FakeApns, FakeFcm, FakeExpo]]:
    with FakeApns() as apns, FakeFcm() as fcm, FakeExpo() as expo:
        settings.PUSH_BACKEND = "providers"
        settings.PUSH_APNS_URL = settings.PUSH_APNS_SANDBOX_URL = apns.base_url
        settings.PUSH_FCM_URL = fcm.base_url
        settings.PUSH_EXPO_URL = expo.base_url
        settings.PUSH_FCM_TOKEN_URIS = [fcm.token_uri]
        yield apns, fcm, expo


def channel(client, **item):
    response = client.post("/admin/v1/push-channels", [item])
    assert response.status_code == 201, response.content
    return response.json()["created"][0]


def apns_channel(client):
    return channel(
        client,
        kind="apns",
        teamId="TEAM123456",
        keyId="KEY1234567",
        bundleId="com.example.app",
        signingKey=apns_signing_key(),
        sandbox=True,
    )


@pytest.fixture
def pushing(api_client, metric):
    """Achievement push notifications on; events complete the achievement at 18:00 UTC."""
    metric_achievement(api_client, metric)
    activate_push(api_client, "achievement_completed")
    return api_client


def complete(client, user="u1", tokens=(IOS_A,), hour=18):
    send_event(client, at("2026-03-10", hour), user, value=10, tz="UTC", deviceTokens=list(tokens))


def tokens_of(user="u1"):
    return EndUser.objects.get(external_id=user).device_tokens


def test_apns_delivers_and_prunes_an_uninstalled_token(fakes, pushing):
    apns, _, _ = fakes
    apns_channel(pushing)
    apns.answer_for(IOS_B, 410, {"reason": "Unregistered"})
    complete(pushing, tokens=(IOS_A, IOS_B))
    assert sorted(apns.tokens_sent) == [IOS_A, IOS_B]
    request = apns.requests[0]
    assert request.headers["apns-topic"] == "com.example.app"
    assert request.headers["apns-push-type"] == "alert"
    assert request.json["aps"]["alert"]["title"]
    [message] = messages(channel="push")
    assert message.status == MessageStatus.SENT
    assert tokens_of() == [IOS_A]
    reasons = sorted(PushAttempt.objects.values_list("reason", flat=True))
    assert reasons == ["", "Unregistered"]


def test_a_503_is_retried_for_that_token_only(fakes, pushing):
    apns, _, _ = fakes
    apns_channel(pushing)
    apns.answer_for(IOS_B, 503, {"reason": "ServiceUnavailable"}, {"Retry-After": "120"})
    complete(pushing, tokens=(IOS_A, IOS_B))
    [message] = messages(channel="push")
    assert message.status == MessageStatus.RETRYING
    assert message.payload["pendingTokens"] == [IOS_B]
    # Not before Retry-After (2 minutes), although the first backoff step is 1 minute.
    assert message.send_at == at("2026-03-10", 18, 2)
    apns.answer_for(IOS_B, 200)
    run_jobs(at("2026-03-10", 18, 1))
    assert apns.tokens_sent.count(IOS_B) == 1
    run_jobs(at("2026-03-10", 18, 2))
    message.refresh_from_db()
    assert message.status == MessageStatus.SENT
    assert apns.tokens_sent.count(IOS_A) == 1  # never sent twice
    assert apns.tokens_sent.count(IOS_B) == 2


def test_a_wrong_sandbox_flag_flags_the_channel_instead_of_wiping_tokens(fakes, pushing):
    apns, _, _ = fakes
    apns_channel(pushing)
    users = [f"u{n}" for n in range(6)]
    tokens = {user: f"{n:x}" * 64 for n, user in enumerate(users, start=1)}
    for token in tokens.values():
        apns.answer_for(token[:64], 400, {"reason": "BadDeviceToken"})
    for user in users:
        send_event(
            pushing, at("2026-03-10", 9), user, value=10, tz="UTC", deviceTokens=[tokens[user][:64]]
        )
    run_jobs(at("2026-03-10", 17))  # all six go out in one chunk
    stored = PushChannel.objects.get()
    assert stored.flagged_at is not None
    assert "6 of 6" in stored.flag_reason
    assert all(tokens_of(user) == [tokens[user][:64]] for user in users)


def test_a_single_bad_token_is_pruned(fakes, pushing):
    apns, _, _ = fakes
    apns_channel(pushing)
    apns.answer_for(IOS_B, 400, {"reason": "BadDeviceToken"})
    complete(pushing, tokens=(IOS_A, IOS_B))
    assert tokens_of() == [IOS_A]
    assert PushChannel.objects.get().flagged_at is None


def test_fcm_delivers_prunes_unregistered_and_keeps_tokens_on_invalid_argument(fakes, pushing):
    _, fcm, _ = fakes
    channel(pushing, kind="fcm", serviceAccount=fcm.service_account(fcm_private_key()))
    gone, odd = ANDROID + "gone", ANDROID + "odd"
    fcm.answer_for(gone, *_answer(fcm_error(404, "NOT_FOUND", "UNREGISTERED")))
    fcm.answer_for(odd, *_answer(fcm_error(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT")))
    complete(pushing, tokens=(ANDROID, gone, odd))
    assert sorted(fcm.tokens_sent) == sorted([ANDROID, gone, odd])
    assert fcm.requests[0].path == "/token"
    assert sorted(tokens_of()) == sorted([ANDROID, odd])
    [message] = messages(channel="push")
    assert message.status == MessageStatus.SENT


def test_expo_delivers_and_a_receipt_prunes_later(fakes, pushing):
    _, _, expo = fakes
    channel(pushing, kind="expo", accessToken="expo-token")
    expo.receipt_for(EXPO, {"status": "error", "details": {"error": "DeviceNotRegistered"}})
    complete(pushing, tokens=(EXPO,))
    assert expo.tokens_sent == [EXPO]
    assert expo.requests[0].headers["authorization"] == "Bearer expo-token"
    assert notifications_expo_receipts(at("2026-03-10", 18, 10)) == 0  # not 15 minutes yet
    assert tokens_of() == [EXPO]
    assert notifications_expo_receipts(at("2026-03-10", 18, 16)) == 1
    assert tokens_of() == []
    assert PushAttempt.objects.filter(reason="receipt: DeviceNotRegistered").count() == 1


def test_with_apns_and_fcm_tokens_are_routed_by_their_form(fakes, pushing):
    apns, fcm, _ = fakes
    apns_channel(pushing)
    channel(pushing, kind="fcm", serviceAccount=fcm.service_account(fcm_private_key()))
    complete(pushing, tokens=(IOS_A, ANDROID))
    assert apns.tokens_sent == [IOS_A]
    assert fcm.tokens_sent == [ANDROID]


def test_an_identify_adding_a_token_is_not_undone_by_pruning(fakes, pushing):
    apns, _, _ = fakes
    apns_channel(pushing)
    apns.answer_for(IOS_B, 410, {"reason": "Unregistered"})
    send_event(pushing, at("2026-03-10", 9), value=10, tz="UTC", deviceTokens=[IOS_A, IOS_B])
    pushing.patch("/v1/users/u1", {"deviceTokens": [IOS_A, IOS_B, "c" * 64]})
    run_jobs(at("2026-03-10", 17))
    assert tokens_of() == [IOS_A, "c" * 64]


def _answer(answer: Answer) -> tuple[int, object, dict[str, str]]:
    return answer.status, answer.body, answer.headers


def test_a_channel_whose_credentials_cannot_be_read_fails_its_tokens_only(fakes, pushing, settings):
    apns, _, expo = fakes
    apns_channel(pushing)
    channel(pushing, kind="expo")
    settings.ENCRYPTION_KEY = "a-key-the-channels-were-not-encrypted-with-" + "z" * 20
    complete(pushing, tokens=(IOS_A, EXPO))
    [message] = messages(channel="push")
    assert message.status == MessageStatus.SENT  # through Expo, whose channel has no secrets
    assert expo.tokens_sent == [EXPO]
    assert apns.tokens_sent == []
    assert "channel unusable" in message.error


CHICAGO = "America/Chicago"
EXPO_2 = "ExponentPushToken[qrstuvwxyzabcdef]"


def _streak_reminder_set_up(api_client):
    """Issue 23, item 1: an Expo channel, a daily streak, an active streak_reminder push
    template; two users in America/Chicago active on the 10th, only u2 on the 11th."""
    channel(api_client, kind="expo", accessToken="expo-token")
    response = api_client.patch(
        "/admin/v1/streaks/settings",
        {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
    )
    assert response.status_code == 200, response.content
    activate_push(
        api_client,
        "streak_reminder",
        title="{{ user.name }}, keep your streak",
        body="{{ streak.length }} so far",
    )
    for user, token in (("u1", EXPO), ("u2", EXPO_2)):
        send_event(
            api_client,
            at("2026-03-10", 10, tz=CHICAGO),
            user,
            tz=CHICAGO,
            name=user.upper(),
            email=None,
            deviceTokens=[token],
        )
    send_event(api_client, at("2026-03-11", 9, tz=CHICAGO), "u2", email=None)


def test_a_streak_reminder_reaches_the_expo_token_of_the_user_who_missed_today_once(
    fakes, api_client, metric
):
    _, _, expo = fakes
    _streak_reminder_set_up(api_client)

    run_jobs(at("2026-03-11", 19, 45, tz=CHICAGO))
    assert expo.tokens_sent == []
    assert messages() == []
    # 20:00 in Chicago is 01:00 UTC the next day: the reminder is due on the user's date.
    run_jobs(at("2026-03-11", 20, 1, tz=CHICAGO))
    assert expo.tokens_sent == [EXPO]
    [sent] = [m for r in expo.requests if r.path == expo.SEND for m in r.json]
    assert (sent["title"], sent["body"]) == ("U1, keep your streak", "1 so far")
    for when in (at("2026-03-11", 20, 6, tz=CHICAGO), at("2026-03-11", 23, 30, tz=CHICAGO)):
        run_jobs(when)
    assert expo.tokens_sent == [EXPO]
    [message] = messages(type="streak_reminder")
    assert (message.user.external_id, message.status) == ("u1", MessageStatus.SENT)


@pytest.mark.django_db(transaction=True)
def test_cron_without_a_broker_has_sent_the_streak_reminder_push_when_it_exits(
    fakes, api_client, metric, settings, monkeypatch
):
    """The same reminder through `manage.py run_periodic_jobs` (cron, no broker), with commits
    as in production. The command handed the send to its own background thread, which died
    with it: the message stayed "sending" and the token received nothing."""
    _, _, expo = fakes
    settings.BACKGROUND_TASKS = "thread"
    # Work handed to the background thread never runs, as when the command has exited.
    monkeypatch.setattr(background, "_work", queue.Queue(background.QUEUE_SIZE))
    monkeypatch.setattr(background, "_ensure_started", lambda: None)
    _streak_reminder_set_up(api_client)

    def cron(when):
        with time_machine.travel(when, tick=False):
            call_command("run_periodic_jobs", stdout=StringIO())

    cron(at("2026-03-11", 19, 45, tz=CHICAGO))
    assert expo.tokens_sent == []
    cron(at("2026-03-11", 20, 1, tz=CHICAGO))
    assert expo.tokens_sent == [EXPO]
    [message] = messages(type="streak_reminder")
    assert (message.user.external_id, message.status) == ("u1", MessageStatus.SENT)
