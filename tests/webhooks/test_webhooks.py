"""Webhooks end to end: endpoints through the admin API, events from the pipeline, deliveries
to a local receiver (allowed through WEBHOOK_ALLOWED_NETWORKS), retries, throttles."""

import base64
import datetime as dt
import hashlib
import hmac
import zoneinfo
from collections.abc import Iterator

import pytest
import time_machine
from django.test import TestCase
from standardwebhooks.webhooks import Webhook
from trophy.types import (
    WebhooksAchievementCompletedPayload,
    WebhooksPointsChangedPayload,
    WebhooksStreakExtendedPayload,
    WebhooksStreakStartedPayload,
)

from apps.webhooks.choices import DeliveryStatus, EndpointStatus
from apps.webhooks.jobs import webhooks_dispatch, webhooks_recover
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from tests.admin_issues import admin_issue
from tests.webhooks.receiver import Receiver

UTC = dt.UTC
HOOKS = "/admin/v1/webhooks"


def at(day: str, hour: int = 12, minute: int = 0) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, minute=minute, tzinfo=UTC)


def committed():
    return TestCase.captureOnCommitCallbacks(execute=True)


@pytest.fixture
def receiver(settings) -> Iterator[Receiver]:
    settings.WEBHOOK_ALLOW_HTTP = True
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    with Receiver() as receiver:
        yield receiver


def endpoint(client, url, **fields):
    response = client.post(HOOKS, [{"url": url, **fields}])
    assert response.status_code == 201, response.content
    assert response.json()["issues"] == []
    return response.json()["created"][0]


def event(client, when, user="u1", value=1, key="words", headers=None):
    with time_machine.travel(when, tick=False), committed():
        response = client.post(
            f"/v1/metrics/{key}/event",
            {"user": {"id": user, "tz": "UTC"}, "value": value},
            **(headers or {}),
        )
    assert response.status_code == 201, response.content
    return response.json()


def verify(secret, request):
    """The independent Standard Webhooks verifier, at the delivery's own time (it refuses
    timestamps more than 5 minutes away from its clock)."""
    sent = dt.datetime.fromtimestamp(int(request.headers["webhook-timestamp"]), UTC)
    with time_machine.travel(sent, tick=False):
        Webhook(secret).verify(request.body, request.headers)  # raises when it does not verify


def run(when):
    with time_machine.travel(when, tick=False), committed():
        webhooks_recover(when)
        webhooks_dispatch(when)


@pytest.fixture
def streaks(api_client, metric):
    api_client.patch(
        "/admin/v1/streaks/settings",
        {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
    )
    return api_client


def test_the_secret_is_shown_once_and_signatures_verify(streaks, receiver, tenant):
    created = endpoint(streaks, receiver.url)
    secret = created["secret"]
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert "secret" not in streaks.get(f"{HOOKS}/{created['id']}").json()
    assert secret not in WebhookEndpoint.objects.get().secret  # encrypted at rest
    event(streaks, at("2026-03-10"))
    [request] = receiver.wait_for(1)
    expected = base64.b64encode(hmac.new(secret.encode(), request.body, hashlib.sha256).digest())
    assert request.headers["x-trophy-signature"] == expected.decode()
    verify(secret, request)
    payload = WebhooksStreakStartedPayload.model_validate_json(request.body)
    assert payload.streak.length == 1
    assert payload.user.id == "u1"


def test_streak_extended_and_achievement_completed_payloads(streaks, receiver, metric):
    endpoint(streaks, receiver.url)
    streaks.post(
        "/admin/v1/achievements",
        [
            {
                "name": "Two words",
                "trigger": "metric",
                "metricId": str(metric.public_id),
                "metricValue": 2,
                "status": "active",
            }
        ],
    )
    event(streaks, at("2026-03-10"))
    event(streaks, at("2026-03-11"))
    requests = receiver.wait_for(3)
    types = [r.json["type"] for r in requests]
    assert types == ["streak.started", "streak.extended", "achievement.completed"]
    extended = WebhooksStreakExtendedPayload.model_validate_json(requests[1].body)
    assert extended.streak.length == 2
    completed = WebhooksAchievementCompletedPayload.model_validate_json(requests[2].body)
    assert completed.achievement.name == "Two words"


def test_event_filters_and_two_endpoints(streaks, receiver):
    with Receiver() as second:
        endpoint(streaks, receiver.url, events=["streak.extended"])
        endpoint(streaks, second.url)
        event(streaks, at("2026-03-10"))
        second.wait_for(1)
        assert receiver.requests == []
        event(streaks, at("2026-03-11"))
        assert [r.json["type"] for r in receiver.wait_for(1)] == ["streak.extended"]
        assert [r.json["type"] for r in second.wait_for(2)] == ["streak.started", "streak.extended"]


def test_another_tenants_events_never_reach_an_endpoint(streaks, receiver, other_tenant_client):
    endpoint(streaks, receiver.url)
    other_tenant_client.post("/admin/v1/metrics", [{"name": "Words", "key": "words"}])
    other_tenant_client.patch(
        "/admin/v1/streaks/settings", {"metrics": [{"key": "words", "threshold": 1}]}
    )
    event(other_tenant_client, at("2026-03-10"))
    assert WebhookEvent.objects.count() == 0
    assert receiver.requests == []


def test_500_500_200_is_three_attempts_with_one_webhook_id(streaks, receiver):
    endpoint(streaks, receiver.url)
    receiver.respond(500).respond(500, headers={"Retry-After": "240"})
    event(streaks, at("2026-03-10"))
    [delivery] = WebhookDelivery.objects.all()
    assert delivery.next_attempt_at == at("2026-03-10", 12, 1)
    run(at("2026-03-10", 12, 1))
    delivery.refresh_from_db()
    # The second retry would be 5 minutes later; Retry-After asked for 4 minutes, so 5 it is.
    assert delivery.next_attempt_at == at("2026-03-10", 12, 6)
    run(at("2026-03-10", 12, 3))  # not due yet
    run(at("2026-03-10", 12, 6))
    requests = receiver.wait_for(3)
    assert len({r.headers["webhook-id"] for r in requests}) == 1
    assert len({r.body for r in requests}) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.SUCCEEDED, 3)
    log = streaks.get(f"{HOOKS}/{WebhookEndpoint.objects.get().public_id}/deliveries").json()
    assert [a["statusCode"] for a in log[0]["log"]] == [500, 500, 200]


def test_410_disables_the_endpoint(streaks, receiver):
    created = endpoint(streaks, receiver.url)
    receiver.respond(410)
    event(streaks, at("2026-03-10"))
    body = streaks.get(f"{HOOKS}/{created['id']}").json()
    assert body["status"] == "disabled"
    assert "410" in body["disabledReason"]
    assert WebhookDelivery.objects.get().status == DeliveryStatus.FAILED


def test_an_endpoint_failing_for_five_days_is_disabled(streaks, receiver):
    endpoint(streaks, receiver.url)
    receiver.default = receiver.default.__class__(status=503)
    event(streaks, at("2026-03-10"))
    event(streaks, at("2026-03-15", 12, 30))
    assert WebhookEndpoint.objects.get().status == EndpointStatus.DISABLED
    assert "5 days" in WebhookEndpoint.objects.get().disabled_reason


def test_a_timeout_is_retried(streaks, receiver, settings):
    settings.WEBHOOK_TIMEOUT = 1
    endpoint(streaks, receiver.url)
    receiver.respond(200, delay=2)
    event(streaks, at("2026-03-10"))
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.PENDING
    assert "Timeout" in delivery.last_error or "timed out" in delivery.last_error.lower()


def test_a_rolled_back_event_sends_nothing(streaks, receiver):
    endpoint(streaks, receiver.url)
    response = streaks.post(
        "/v1/metrics/words/event", {"user": {"id": "u1", "tz": "Not/AZone"}, "value": 1}
    )
    assert response.status_code == 422
    assert WebhookEvent.objects.count() == 0


def test_a_crash_between_sending_and_recording_sends_again_with_the_same_id(streaks, receiver):
    endpoint(streaks, receiver.url)
    with time_machine.travel(at("2026-03-10"), tick=False):
        streaks.post("/v1/metrics/words/event", {"user": {"id": "u1"}, "value": 1})
    # A worker claimed it, sent it, and died before recording the outcome.
    WebhookDelivery.objects.update(
        status=DeliveryStatus.DELIVERING, claimed_at=at("2026-03-10"), attempts=1
    )
    run(at("2026-03-10", 12, 5))
    assert receiver.requests == []  # the claim is not old enough
    run(at("2026-03-10", 12, 11))
    [request] = receiver.wait_for(1)
    assert request.headers["webhook-id"] == str(WebhookDelivery.objects.get().public_id)


def test_points_changed_is_throttled_to_one_per_15_minutes(api_client, metric, receiver):
    system = api_client.post("/admin/v1/points", [{"name": "XP", "key": "xp"}]).json()
    system_id = system["created"][0]["id"]
    api_client.post(
        f"/admin/v1/points/{system_id}/triggers",
        [
            {
                "type": "metric",
                "points": 10,
                "metricId": str(metric.public_id),
                "metricThreshold": 1,
                "status": "active",
            }
        ],
    )
    endpoint(api_client, receiver.url, events=["points.changed"])
    event(api_client, at("2026-03-10", 12, 0))  # sent at once
    event(api_client, at("2026-03-10", 12, 5))  # folded ...
    event(api_client, at("2026-03-10", 12, 9))  # ... into one at 12:15 with the latest total
    assert len(receiver.wait_for(1)) == 1
    run(at("2026-03-10", 12, 14))
    assert len(receiver.requests) == 1
    run(at("2026-03-10", 12, 15))
    requests = receiver.wait_for(2)
    totals = [
        WebhooksPointsChangedPayload.model_validate_json(r.body).points.total for r in requests
    ]
    assert totals == [10, 30]
    event(api_client, at("2026-03-10", 12, 20))  # inside the window the 12:15 send opened
    run(at("2026-03-10", 12, 29))
    assert len(receiver.requests) == 2
    run(at("2026-03-10", 12, 30))
    assert len(receiver.wait_for(3)) == 3


def test_rotation_signs_with_both_secrets_for_a_day(streaks, receiver):
    created = endpoint(streaks, receiver.url)
    with time_machine.travel(at("2026-03-10", 11), tick=False):
        rotated = streaks.post(f"{HOOKS}/{created['id']}/rotate-secret").json()["secret"]
    event(streaks, at("2026-03-10"))
    [request] = receiver.wait_for(1)
    assert len(request.headers["webhook-signature"].split()) == 2
    verify(created["secret"], request)
    verify(rotated, request)
    event(streaks, at("2026-03-11", 12))
    later = receiver.wait_for(2)[1]
    assert len(later.headers["webhook-signature"].split()) == 1


def test_test_event_and_redelivery(streaks, receiver):
    created = endpoint(streaks, receiver.url, events=["streak.lost"])
    with committed():
        response = streaks.post(f"{HOOKS}/{created['id']}/test")
    assert response.status_code == 202
    [request] = receiver.wait_for(1)
    WebhooksAchievementCompletedPayload.model_validate_json(request.body)
    delivery_id = request.headers["webhook-id"]
    with committed():
        streaks.post(f"{HOOKS}/{created['id']}/deliveries/{delivery_id}/redeliver")
        webhooks_dispatch(dt.datetime.now(UTC))
    again = receiver.wait_for(2)[1]
    assert again.headers["webhook-id"] == delivery_id


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",  # plain http without WEBHOOK_ALLOW_HTTP
        "https://10.0.0.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::ffff:127.0.0.1]/hook",
        "ftp://example.com/hook",
    ],
)
def test_urls_that_are_not_public_https_are_refused(api_client, url):
    response = api_client.post(HOOKS, [{"url": url}])
    assert response.json()["created"] == []
    assert response.json()["issues"][0]["message"].startswith("url:")


def test_webhooks_cost_the_event_path_a_bounded_number_of_statements(streaks, receiver):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count(user, day):
        # The request alone: deliveries go out after commit, outside the event path.
        with time_machine.travel(at(day), tick=False), CaptureQueriesContext(connection) as ctx:
            response = streaks.post("/v1/metrics/words/event", {"user": {"id": user}, "value": 1})
        assert response.status_code == 201
        return len(ctx.captured_queries)

    event(streaks, at("2026-03-09"), "warm")
    event(streaks, at("2026-03-09"), "u1")
    event(streaks, at("2026-03-09"), "u2")
    without = count("u1", "2026-03-10")
    endpoint(streaks, receiver.url, events=["streak.lost"])  # subscribed to nothing sent here
    event(streaks, at("2026-03-09"), "warm")
    assert count("u2", "2026-03-10") == without  # no delivery: no statement
    for _ in range(2):
        endpoint(streaks, receiver.url)
    event(streaks, at("2026-03-10"), "warm")
    two = count("u1", "2026-03-11")
    endpoint(streaks, receiver.url)
    event(streaks, at("2026-03-11"), "warm")
    assert count("u2", "2026-03-11") == two  # the same with three endpoints


def test_leaderboard_rank_changed_carries_the_board_and_the_ranks(api_client, metric, receiver):
    from trophy.types import WebhooksLeaderboardRankChangedPayload

    response = api_client.post(
        "/admin/v1/leaderboards",
        [
            {
                "name": "Words",
                "key": "words-board",
                "rankBy": "metric",
                "metricId": str(metric.public_id),
                "status": "active",
                "start": "2026-01-01",
            }
        ],
    )
    assert response.status_code == 201, response.content
    endpoint(api_client, receiver.url, events=["leaderboard.rank_changed"])
    event(api_client, at("2026-03-10", 12), "ada", value=5)
    event(api_client, at("2026-03-10", 12, 1), "bob", value=3)
    event(api_client, at("2026-03-10", 12, 2), "bob", value=10)  # bob overtakes ada ...
    assert len(receiver.wait_for(2)) == 2
    run(at("2026-03-10", 12, 16))  # ... told at the end of bob's 15-minute window
    requests = receiver.wait_for(3)
    payloads = [WebhooksLeaderboardRankChangedPayload.model_validate_json(r.body) for r in requests]
    assert [(p.user.id, p.leaderboard.rank, p.leaderboard.previous_rank) for p in payloads] == [
        ("ada", 1, None),
        ("bob", 2, None),
        ("bob", 1, 2),
    ]
    assert payloads[2].leaderboard.key == "words-board"
    assert payloads[2].leaderboard.value == 13


def _types(receiver, count):
    return [r.json["type"] for r in receiver.wait_for(count)]


def test_freezes_and_losses_found_by_events_and_by_the_nightly_jobs(api_client, metric, receiver):
    from trophy.types import (
        WebhooksStreakFreezeConsumedPayload,
        WebhooksStreakFreezeEarnedPayload,
        WebhooksStreakLostPayload,
    )

    from apps.pipeline.jobs import streaks_freezes_earn_job, streaks_settle_job

    api_client.patch(
        "/admin/v1/streaks/settings",
        {
            "metrics": [{"key": "words", "threshold": 1}],
            "freezes": {"startCount": 1, "maxCount": 2, "autoEarnInterval": 7, "autoEarnAmount": 1},
        },
    )
    endpoint(
        api_client,
        receiver.url,
        events=["streak.freeze_consumed", "streak.freeze_earned", "streak.lost"],
    )
    event(api_client, at("2026-03-01"))
    # The 2nd passes without activity: the settle job spends the freeze at local midnight.
    with time_machine.travel(at("2026-03-03", 0, 5), tick=False), committed():
        streaks_settle_job(at("2026-03-03", 0, 5))
    consumed = WebhooksStreakFreezeConsumedPayload.model_validate_json(receiver.wait_for(1)[0].body)
    assert (consumed.consumed, consumed.freezes) == (1, 0)
    # Nothing on the 3rd either, and no freeze left: the job finds the streak lost.
    with time_machine.travel(at("2026-03-04", 0, 5), tick=False), committed():
        streaks_settle_job(at("2026-03-04", 0, 5))
    lost = WebhooksStreakLostPayload.model_validate_json(receiver.wait_for(2)[1].body)
    assert lost.length == 1
    with time_machine.travel(at("2026-03-08", 1), tick=False), committed():
        streaks_freezes_earn_job(at("2026-03-08", 1))
    earned = WebhooksStreakFreezeEarnedPayload.model_validate_json(receiver.wait_for(3)[2].body)
    assert (earned.earned, earned.freezes) == (1, 1)


def test_points_level_changed_tells_the_levels_before_and_after(api_client, metric, receiver):
    from trophy.types import WebhooksPointsLevelChangedPayload

    system = api_client.post(
        "/admin/v1/points",
        [
            {
                "name": "XP",
                "key": "xp",
                "levels": [
                    {"name": "Bronze", "key": "bronze", "points": 10},
                    {"name": "Silver", "key": "silver", "points": 50},
                ],
            }
        ],
    ).json()["created"][0]
    api_client.post(
        f"/admin/v1/points/{system['id']}/triggers",
        [
            {
                "type": "metric",
                "points": 10,
                "metricId": str(metric.public_id),
                "metricThreshold": 1,
                "status": "active",
            }
        ],
    )
    endpoint(api_client, receiver.url, events=["points.level_changed"])
    event(api_client, at("2026-03-10", 12, 0))  # 10 points: Bronze
    event(api_client, at("2026-03-10", 12, 1), value=2)  # 30: still Bronze, nothing sent
    event(api_client, at("2026-03-10", 12, 2), value=3)  # 60: Silver
    requests = receiver.wait_for(2)
    payloads = [WebhooksPointsLevelChangedPayload.model_validate_json(r.body) for r in requests]
    assert [(p.previous_level and p.previous_level.key, p.new_level.key) for p in payloads] == [
        (None, "bronze"),
        ("bronze", "silver"),
    ]
    assert payloads[1].points.total == 60


def _board(api_client, when, **fields):
    with time_machine.travel(when, tick=False):
        response = api_client.post(
            "/admin/v1/leaderboards",
            [
                {
                    "name": "Words",
                    "key": "sprint",
                    "rankBy": "metric",
                    "metricId": fields.pop("metric_id"),
                    "status": "active",
                    **fields,
                }
            ],
        )
    assert response.status_code == 201, response.content
    return response.json()["created"][0]


def _started_job(when):
    from apps.webhooks.jobs import webhooks_leaderboards

    with time_machine.travel(when, tick=False), committed():
        return webhooks_leaderboards(when)


def test_leaderboard_started_changed_and_finished(api_client, metric, receiver):
    from trophy.types import (
        WebhooksLeaderboardChangedPayload,
        WebhooksLeaderboardFinishedPayload,
        WebhooksLeaderboardStartedPayload,
    )

    from apps.pipeline.jobs import leaderboards_lifecycle_job

    endpoint(
        api_client,
        receiver.url,
        events=["leaderboard.started", "leaderboard.changed", "leaderboard.finished"],
    )
    board = _board(
        api_client,
        at("2026-03-05"),
        metric_id=str(metric.public_id),
        start="2026-03-10",
        end="2026-03-12",
    )
    assert board["status"] == "scheduled"
    assert _started_job(at("2026-03-09", 9, 59)) == 0
    # 10:00 UTC the day before the start, with the initial (empty) rankings; told once.
    assert _started_job(at("2026-03-09", 10, 0)) == 1
    assert _started_job(at("2026-03-09", 10, 10)) == 0
    started = WebhooksLeaderboardStartedPayload.model_validate_json(receiver.wait_for(1)[0].body)
    assert (started.leaderboard.key, started.leaderboard.status) == ("sprint", "active")
    assert started.leaderboard.rankings == []
    # Going live at the start tells nothing more.
    with time_machine.travel(at("2026-03-10", 0, 5), tick=False), committed():
        leaderboards_lifecycle_job(at("2026-03-10", 0, 5))
    assert _started_job(at("2026-03-10", 0, 10)) == 0
    event(api_client, at("2026-03-10", 12), "ada", value=5)
    event(api_client, at("2026-03-10", 12, 1), "bob", value=7)  # same board: folded
    changed = WebhooksLeaderboardChangedPayload.model_validate_json(receiver.wait_for(2)[1].body)
    assert [r.user_id for r in changed.leaderboard.rankings] == ["ada"]
    run(at("2026-03-10", 12, 15))
    latest = WebhooksLeaderboardChangedPayload.model_validate_json(receiver.wait_for(3)[2].body)
    assert [r.user_id for r in latest.leaderboard.rankings] == ["bob", "ada"]
    with time_machine.travel(at("2026-03-13", 12, 5), tick=False), committed():
        leaderboards_lifecycle_job(at("2026-03-13", 12, 5))
    # Final 12 hours after the end's UTC midnight; told at 13:00 UTC that day (Trophy's timing).
    run(at("2026-03-13", 12, 59))
    assert len(receiver.requests) == 3
    run(at("2026-03-13", 13, 0))
    finished = WebhooksLeaderboardFinishedPayload.model_validate_json(receiver.wait_for(4)[3].body)
    assert finished.leaderboard.status == "finished"
    assert [(r.user_id, r.rank, r.value) for r in finished.leaderboard.rankings] == [
        ("bob", 1, 7),
        ("ada", 2, 5),
    ]
    assert len(receiver.requests) == 4  # one leaderboard.started in all


@pytest.mark.parametrize(
    ("start", "made_live"),
    [
        ("2026-03-10", at("2026-03-09", 15)),  # tomorrow, after 10:00 UTC today
        ("2026-03-09", at("2026-03-09", 8)),  # today
        ("2026-03-01", at("2026-03-09", 8)),  # already started
    ],
)
def test_a_board_made_live_after_its_notice_time_is_told_at_the_next_run_once(
    api_client, metric, receiver, start, made_live
):
    from trophy.types import WebhooksLeaderboardStartedPayload

    endpoint(api_client, receiver.url, events=["leaderboard.started"])
    board = _board(api_client, made_live, metric_id=str(metric.public_id), start=start)
    assert _started_job(made_live + dt.timedelta(minutes=10)) == 1
    started = WebhooksLeaderboardStartedPayload.model_validate_json(receiver.wait_for(1)[0].body)
    assert (started.leaderboard.id, started.leaderboard.rankings) == (board["id"], [])
    # Taken off and made live again, or another run of the job: never told twice.
    with time_machine.travel(made_live + dt.timedelta(hours=1), tick=False):
        for status in ("inactive", "active"):
            response = api_client.patch(
                "/admin/v1/leaderboards", [{"id": board["id"], "status": status}]
            )
            assert response.json()["issues"] == [], response.content
    assert _started_job(made_live + dt.timedelta(hours=2)) == 0
    assert len(receiver.requests) == 1


def test_an_inactive_or_far_future_board_is_not_told(api_client, metric, receiver):
    endpoint(api_client, receiver.url, events=["leaderboard.started"])
    _board(api_client, at("2026-03-01"), metric_id=str(metric.public_id), start="2026-03-20")
    assert _started_job(at("2026-03-18", 12)) == 0  # two days before
    with time_machine.travel(at("2026-03-18", 13), tick=False):
        board = api_client.get("/admin/v1/leaderboards").json()[0]
        api_client.patch("/admin/v1/leaderboards", [{"id": board["id"], "status": "inactive"}])
    assert _started_job(at("2026-03-19", 10)) == 0  # its day, but not live


def test_boost_started_and_finished_follow_trophys_timing(api_client, receiver):
    from trophy.types import WebhooksPointsBoostFinishedPayload, WebhooksPointsBoostStartedPayload

    from apps.webhooks.jobs import webhooks_boosts

    system = api_client.post("/admin/v1/points", [{"name": "XP", "key": "xp"}]).json()
    system_id = system["created"][0]["id"]
    response = api_client.post(
        f"/admin/v1/points/{system_id}/boosts",
        [{"name": "Double XP", "start": "2026-03-10", "end": "2026-03-12", "multiplier": 2}],
    )
    assert response.status_code == 201, response.content
    endpoint(api_client, receiver.url, events=["points.boost_started", "points.boost_finished"])

    def jobs(when):
        with time_machine.travel(when, tick=False), committed():
            return webhooks_boosts(when)

    assert jobs(at("2026-03-09", 9, 59)) == 0
    assert jobs(at("2026-03-09", 10, 0)) == 1  # 10:00 UTC the day before the start
    assert jobs(at("2026-03-09", 10, 10)) == 0  # told once
    started = WebhooksPointsBoostStartedPayload.model_validate_json(receiver.wait_for(1)[0].body)
    assert (started.boost.name, started.boost.status, started.boost.points_system_key) == (
        "Double XP",
        "active",
        "xp",
    )
    assert jobs(at("2026-03-13", 12, 59)) == 0
    assert jobs(at("2026-03-13", 13, 0)) == 1  # 13:00 UTC the day after the end
    finished = WebhooksPointsBoostFinishedPayload.model_validate_json(receiver.wait_for(2)[1].body)
    assert finished.boost.status == "finished"


def test_email_due_events_fire_without_templates_but_respect_preferences(
    api_client, metric, receiver, tenant
):
    from trophy.types import (
        WebhooksEmailsAchievementDuePayload,
        WebhooksEmailsReactivationDuePayload,
        WebhooksEmailsRecapDuePayload,
        WebhooksEmailsStreakReminderDuePayload,
    )

    from apps.pipeline.jobs import (
        notifications_reactivation,
        notifications_recaps,
        notifications_streak_reminders,
    )

    def local(day, hour, minute=0):
        return dt.datetime.fromisoformat(day).replace(
            hour=hour, minute=minute, tzinfo=zoneinfo.ZoneInfo("America/New_York")
        )

    def jobs(when):
        with time_machine.travel(when, tick=False), committed():
            notifications_streak_reminders(when)
            notifications_reactivation(when)
            notifications_recaps(when)
            webhooks_dispatch(when)

    api_client.patch(
        "/admin/v1/streaks/settings",
        {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
    )
    api_client.post(
        "/admin/v1/achievements",
        [
            {
                "name": "First",
                "trigger": "metric",
                "metricId": str(metric.public_id),
                "metricValue": 1,
                "status": "active",
            }
        ],
    )
    endpoint(
        api_client,
        receiver.url,
        events=[
            "emails.achievement_due",
            "emails.streak_reminder_due",
            "emails.reactivation_due",
            "emails.recap_due",
        ],
    )
    # No email template is active, the users have no email: the events fire all the same.
    event(api_client, at("2026-03-04", 9), "ada")  # a Wednesday, 09:00 UTC
    event(api_client, at("2026-03-04", 9), "off")
    api_client.patch(
        "/v1/users/off/preferences",
        {
            "notifications": {
                t: [] for t in ("achievement_completed", "streak_reminder", "recap", "reactivation")
            }
        },
    )
    jobs(local("2026-03-04", 17))  # achievement due at 17:00 (no tz: New York)
    achievement = WebhooksEmailsAchievementDuePayload.model_validate_json(
        receiver.wait_for(1)[0].body
    )
    assert achievement.achievement.name == "First"
    assert achievement.user.id == "ada"  # "off" was scheduled before turning emails off: see below
    jobs(at("2026-03-05", 20, 1))  # streak reminder: not extended on Thursday (UTC streaks)
    jobs(local("2026-03-07", 17, 1))  # reactivation, 3 days
    jobs(local("2026-03-09", 9, 1))  # weekly recap on Monday
    jobs(local("2026-03-09", 9, 31))  # a repeated run tells nothing new
    requests = receiver.requests
    by_type = {}
    for r in requests:
        by_type.setdefault(r.json["type"], []).append(r.json["user"]["id"])
    assert by_type["emails.streak_reminder_due"] == ["ada"]
    assert by_type["emails.reactivation_due"] == ["ada"]
    assert by_type["emails.recap_due"] == ["ada"]
    reminder = next(r for r in requests if r.json["type"] == "emails.streak_reminder_due")
    assert (
        WebhooksEmailsStreakReminderDuePayload.model_validate_json(reminder.body).streak.length == 1
    )
    reactivation = next(r for r in requests if r.json["type"] == "emails.reactivation_due")
    parsed = WebhooksEmailsReactivationDuePayload.model_validate_json(reactivation.body)
    assert (parsed.reactivation.message_number, parsed.reactivation.days_since_last_active) == (
        1,
        3,
    )
    recap = next(r for r in requests if r.json["type"] == "emails.recap_due")
    assert (
        WebhooksEmailsRecapDuePayload.model_validate_json(recap.body).recap.period_start
        == "2026-03-02"
    )


def test_points_paid_when_identify_creates_a_user_are_reported(api_client, metric, receiver):
    system = api_client.post("/admin/v1/points", [{"name": "XP", "key": "xp"}]).json()
    system_id = system["created"][0]["id"]
    api_client.post(
        f"/admin/v1/points/{system_id}/triggers",
        [{"type": "user_creation", "points": 50, "status": "active"}],
    )
    endpoint(api_client, receiver.url, events=["points.changed"])
    with time_machine.travel(at("2026-03-10"), tick=False), committed():
        assert api_client.put("/v1/users/newcomer", {}).status_code == 200
    [request] = receiver.wait_for(1)
    payload = WebhooksPointsChangedPayload.model_validate_json(request.body)
    assert (payload.user.id, payload.points.total) == ("newcomer", 50)


def test_a_delivery_handed_off_while_the_broker_is_down_is_sent_by_the_dispatch_job(
    streaks, receiver, monkeypatch
):
    from kombu.exceptions import OperationalError

    from apps.core.tasks import outbox_run_task

    def broker_down(*args, **kwargs):
        raise OperationalError("Connection refused")

    endpoint(streaks, receiver.url)
    with monkeypatch.context() as patch:
        patch.setattr(outbox_run_task, "apply_async", broker_down)
        event(streaks, at("2026-03-10"))  # answered 201: the event is applied
    assert receiver.requests == []
    assert WebhookDelivery.objects.get().status == DeliveryStatus.PENDING
    run(at("2026-03-10", 12, 1))  # the periodic dispatch, broker or not
    assert len(receiver.wait_for(1)) == 1


# --- the endpoint collection and the redelivery of failed deliveries (admin API) -----------


def deliveries_of(created):
    return WebhookDelivery.objects.filter(endpoint__public_id=created["id"]).order_by("created")


def test_endpoints_are_listed_oldest_first_and_without_their_secrets(
    api_client, receiver, other_tenant_client
):
    with time_machine.travel(at("2026-03-10", 9), tick=False):
        first = endpoint(api_client, receiver.url, description="first")
    with time_machine.travel(at("2026-03-10", 10), tick=False):
        second = endpoint(api_client, f"{receiver.url}/second", events=["streak.lost"])
    endpoint(other_tenant_client, receiver.url)
    response = api_client.get(HOOKS)
    assert response.status_code == 200
    listed = response.json()
    assert [e["id"] for e in listed] == [first["id"], second["id"]]
    assert [(e["url"], e["description"], e["events"]) for e in listed] == [
        (receiver.url, "first", []),
        (f"{receiver.url}/second", "", ["streak.lost"]),
    ]
    assert not any("secret" in e for e in listed)
    assert listed[0] == api_client.get(f"{HOOKS}/{first['id']}").json()
    paged = api_client.get(HOOKS, {"limit": 1, "skip": 1}).json()
    assert [e["id"] for e in paged] == [second["id"]]
    assert api_client.get(HOOKS, {"skip": 2}).json() == []


@pytest.mark.parametrize("query", [{"limit": 0}, {"limit": 101}, {"skip": -1}, {"limit": "x"}])
def test_listing_endpoints_with_bad_paging_is_a_422(api_client, query):
    response = api_client.get(HOOKS, query)
    assert response.status_code == 422
    assert list(response.json()) == ["error"]


def test_an_update_changes_the_fields_given_and_keeps_the_others(api_client, receiver):
    created = endpoint(api_client, receiver.url, description="old", events=["streak.lost"])
    response = api_client.patch(
        HOOKS,
        [
            {
                "id": created["id"],
                "description": "new",
                "events": ["streak.started", "streak.lost", "streak.started"],
            }
        ],
    )
    assert response.status_code == 200
    assert response.json()["issues"] == []
    [updated] = response.json()["updated"]
    assert updated["id"] == created["id"]
    assert updated["url"] == receiver.url
    assert updated["description"] == "new"
    assert updated["events"] == ["streak.lost", "streak.started"]  # once each, sorted
    assert updated["status"] == "active"
    assert "secret" not in updated
    assert "disabledReason" not in updated
    assert api_client.get(f"{HOOKS}/{created['id']}").json() == updated
    moved = api_client.patch(
        HOOKS, [{"id": created["id"], "url": f"{receiver.url}/moved", "events": None}]
    ).json()["updated"][0]
    assert (moved["url"], moved["description"], moved["events"]) == (
        f"{receiver.url}/moved",
        "new",
        [],  # null: every type
    )


def test_a_disabled_endpoint_gets_nothing_until_it_is_switched_back_on(streaks, receiver):
    created = endpoint(streaks, receiver.url)
    event(streaks, at("2026-03-09"))
    assert [r.json["type"] for r in receiver.wait_for(1)] == ["streak.started"]
    response = streaks.patch(HOOKS, [{"id": created["id"], "status": "disabled"}])
    [disabled] = response.json()["updated"]
    assert disabled["status"] == "disabled"
    assert disabled["disabledReason"] == "Disabled through the API or the dashboard"
    event(streaks, at("2026-03-10"))
    assert deliveries_of(created).count() == 1
    [enabled] = streaks.patch(HOOKS, [{"id": created["id"], "status": "active"}]).json()["updated"]
    assert enabled["status"] == "active"
    assert "disabledReason" not in enabled
    event(streaks, at("2026-03-11"))
    types = [r.json["type"] for r in receiver.wait_for(2)]
    assert types == ["streak.started", "streak.extended"]  # nothing for the 10th


def test_bad_updates_are_issues_and_change_nothing(api_client, receiver, other_tenant_client):
    created = endpoint(api_client, receiver.url, events=["streak.lost"])
    theirs = endpoint(other_tenant_client, receiver.url, description="theirs")
    unknown = "00000000-0000-4000-8000-000000000000"
    response = api_client.patch(
        HOOKS,
        [
            {"id": created["id"], "url": "https://10.0.0.1/hook"},
            {"id": created["id"], "events": ["streak.nope"]},
            {"id": created["id"], "status": "paused"},
            {"id": created["id"], "colour": "red"},
            {"id": "not-a-uuid", "description": "x"},
            {"description": "no id"},
            {"id": unknown, "description": "x"},
            {"id": theirs["id"], "description": "stolen"},
        ],
    )
    assert response.status_code == 200
    body = response.json()
    assert body["updated"] == []
    issues = body["issues"]
    assert [issue.get("id", issue.get("index")) for issue in issues] == [
        *[created["id"]] * 4,
        4,
        5,
        unknown,
        theirs["id"],
    ]
    assert {issue["severity"] for issue in issues} == {"error"}
    messages = [issue["message"] for issue in issues]
    assert messages[0].startswith("url:")
    assert "events" in messages[1]
    assert "status" in messages[2]
    assert "colour" in messages[3]
    assert messages[4:6] == ["id must be a valid UUID"] * 2
    assert messages[6:] == ["Webhook not found by ID"] * 2
    kept = api_client.get(f"{HOOKS}/{created['id']}").json()
    assert (kept["url"], kept["events"], kept["status"]) == (
        receiver.url,
        ["streak.lost"],
        "active",
    )
    assert other_tenant_client.get(f"{HOOKS}/{theirs['id']}").json()["description"] == "theirs"


@pytest.mark.parametrize("body", [{"id": "x"}, [], "x"])
def test_an_update_body_that_is_not_a_list_of_items_is_a_422(api_client, body):
    response = api_client.patch(HOOKS, body)
    assert response.status_code == 422
    assert list(response.json()) == ["error"]


def test_deleting_an_endpoint_takes_its_deliveries_and_stops_its_events(streaks, receiver):
    kept = endpoint(streaks, receiver.url, events=["streak.lost"])
    gone = endpoint(streaks, receiver.url)
    event(streaks, at("2026-03-10"))  # streak.started, to the endpoint taking every type
    assert len(receiver.wait_for(1)) == 1
    assert deliveries_of(gone).count() == 1
    response = streaks.delete(f"{HOOKS}?ids={gone['id']}")
    assert response.status_code == 200
    assert response.json() == {"deleted": [{"id": gone["id"]}], "issues": []}
    assert WebhookEndpoint.objects.filter(public_id=gone["id"]).count() == 0
    assert WebhookDelivery.objects.count() == 0
    assert streaks.get(f"{HOOKS}/{gone['id']}").status_code == 404
    assert [e["id"] for e in streaks.get(HOOKS).json()] == [kept["id"]]
    event(streaks, at("2026-03-11"))  # streak.extended: nobody left to tell
    assert WebhookDelivery.objects.count() == 0
    assert len(receiver.requests) == 1


def test_deleting_what_is_not_there_is_an_issue(api_client, receiver, other_tenant_client):
    mine = endpoint(api_client, receiver.url)
    theirs = endpoint(other_tenant_client, receiver.url)
    unknown = "00000000-0000-4000-8000-000000000000"
    response = api_client.delete(f"{HOOKS}?ids={mine['id']},not-a-uuid,{unknown},{theirs['id']}")
    assert response.status_code == 200
    assert response.json() == {
        "deleted": [{"id": mine["id"]}],
        "issues": [
            admin_issue("id must be a valid UUID", id="not-a-uuid"),
            admin_issue("Webhook not found by ID", id=unknown),
            admin_issue("Webhook not found by ID", id=theirs["id"]),
        ],
    }
    assert other_tenant_client.get(f"{HOOKS}/{theirs['id']}").status_code == 200


def test_deleting_without_ids_is_a_422(api_client, receiver):
    endpoint(api_client, receiver.url)
    for query in ("", "?ids=", "?ids=,"):
        response = api_client.delete(f"{HOOKS}{query}")
        assert response.status_code == 422
        assert response.json() == {"error": "ids is required: give at least one id"}
    assert len(api_client.get(HOOKS).json()) == 1


def test_redelivery_sends_a_failed_delivery_again_with_its_webhook_id(streaks, receiver):
    created = endpoint(streaks, receiver.url)
    receiver.respond(410)
    event(streaks, at("2026-03-10"))
    [delivery] = deliveries_of(created)
    assert delivery.status == DeliveryStatus.FAILED
    streaks.patch(HOOKS, [{"id": created["id"], "status": "active"}])  # 410 disabled it
    with time_machine.travel(at("2026-03-11"), tick=False):
        response = streaks.post(
            f"{HOOKS}/{created['id']}/redeliver", {"since": "2026-03-10T00:00:00Z"}
        )
    assert response.status_code == 202
    assert response.json() == {"redelivered": 1}
    delivery.refresh_from_db()
    assert (delivery.status, delivery.next_attempt_at, delivery.attempts) == (
        DeliveryStatus.PENDING,
        at("2026-03-11"),
        1,
    )
    [logged] = streaks.get(f"{HOOKS}/{created['id']}/deliveries").json()
    assert (logged["status"], logged["nextAttemptAt"]) == ("pending", "2026-03-11T12:00:00Z")
    run(at("2026-03-11", 12, 1))
    first, again = receiver.wait_for(2)
    assert again.headers["webhook-id"] == first.headers["webhook-id"] == str(delivery.public_id)
    assert again.body == first.body
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.SUCCEEDED, 2)
    [logged] = streaks.get(f"{HOOKS}/{created['id']}/deliveries").json()
    assert [a["statusCode"] for a in logged["log"]] == [410, 200]


def test_redelivery_takes_only_this_endpoints_failed_deliveries_since_the_time(
    api_client, receiver
):
    created = endpoint(api_client, receiver.url)
    other = endpoint(api_client, receiver.url)

    def test_sent(target, day, status):
        with time_machine.travel(at(day), tick=False):
            api_client.post(f"{HOOKS}/{target['id']}/test")
        delivery = deliveries_of(target).last()
        WebhookDelivery.objects.filter(pk=delivery.pk).update(status=status)
        return delivery.pk

    before = test_sent(created, "2026-03-09", DeliveryStatus.FAILED)
    at_since = test_sent(created, "2026-03-10", DeliveryStatus.FAILED)
    after = test_sent(created, "2026-03-11", DeliveryStatus.FAILED)
    succeeded = test_sent(created, "2026-03-11", DeliveryStatus.SUCCEEDED)
    elsewhere = test_sent(other, "2026-03-11", DeliveryStatus.FAILED)
    with time_machine.travel(at("2026-03-12"), tick=False):
        response = api_client.post(
            f"{HOOKS}/{created['id']}/redeliver", {"since": "2026-03-10T12:00:00Z"}
        )
    assert response.status_code == 202
    assert response.json() == {"redelivered": 2}
    statuses = dict(WebhookDelivery.objects.values_list("pk", "status"))
    assert statuses == {
        before: DeliveryStatus.FAILED,
        at_since: DeliveryStatus.PENDING,
        after: DeliveryStatus.PENDING,
        succeeded: DeliveryStatus.SUCCEEDED,
        elsewhere: DeliveryStatus.FAILED,
    }
    assert {
        d.next_attempt_at for d in WebhookDelivery.objects.filter(pk__in=[at_since, after])
    } == {at("2026-03-12")}
    again = api_client.post(f"{HOOKS}/{created['id']}/redeliver", {"since": "2026-03-01T00:00Z"})
    assert again.json() == {"redelivered": 1}  # the one before; the others are pending now


@pytest.mark.parametrize(
    "body",
    [{}, {"since": "yesterday"}, {"since": None}, {"since": "2026-03-10T00:00Z", "until": 1}, []],
)
def test_redelivery_without_a_valid_since_is_a_422(api_client, receiver, body):
    created = endpoint(api_client, receiver.url)
    response = api_client.post(f"{HOOKS}/{created['id']}/redeliver", body)
    assert response.status_code == 422
    assert list(response.json()) == ["error"]


def test_redelivery_for_an_endpoint_not_there_is_a_404(api_client, receiver, other_tenant_client):
    theirs = endpoint(other_tenant_client, receiver.url)
    for object_id in ("00000000-0000-4000-8000-000000000000", "not-a-uuid", theirs["id"]):
        response = api_client.post(
            f"{HOOKS}/{object_id}/redeliver", {"since": "2026-03-10T00:00:00Z"}
        )
        assert response.status_code == 404
        assert response.json() == {"error": "Webhook not found by ID"}


def test_application_keys_cannot_manage_endpoints(org, anon_client, api_client, receiver):
    created = endpoint(api_client, receiver.url)
    anon_client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    responses = [
        anon_client.get(HOOKS),
        anon_client.patch(HOOKS, [{"id": created["id"], "description": "x"}]),
        anon_client.delete(f"{HOOKS}?ids={created['id']}"),
        anon_client.post(f"{HOOKS}/{created['id']}/redeliver", {"since": "2026-03-10T00:00Z"}),
    ]
    assert [r.status_code for r in responses] == [403] * 4
    assert all(list(r.json()) == ["error"] for r in responses)
    assert api_client.get(f"{HOOKS}/{created['id']}").json()["description"] == ""


def test_redelivery_to_a_disabled_endpoint_is_refused_and_changes_nothing(streaks, receiver):
    created = endpoint(streaks, receiver.url)
    receiver.respond(410)
    event(streaks, at("2026-03-10"))  # 410: the delivery fails and the endpoint is disabled
    [delivery] = deliveries_of(created)
    assert delivery.status == DeliveryStatus.FAILED
    one = f"{HOOKS}/{created['id']}/deliveries/{delivery.public_id}/redeliver"
    every = f"{HOOKS}/{created['id']}/redeliver"

    for response in (
        streaks.post(every, {"since": "2026-03-10T00:00:00Z"}),
        streaks.post(one),
    ):
        assert response.status_code == 422
        assert response.json() == {
            "error": "The endpoint is disabled: enable it before redelivering"
        }
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
