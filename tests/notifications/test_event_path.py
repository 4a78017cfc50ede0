"""What notifications cost the event path: nothing per template, one insert per message due,
and the user's activity recorded once a day."""

import datetime as dt

import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.users.models import EndUser
from tests.notifications.conftest import activate, at, messages

BODY = {"user": {"id": "u0", "email": "u0@example.com", "tz": "UTC"}, "value": 1}


def count(client, body, when):
    with time_machine.travel(when, tick=False), CaptureQueriesContext(connection) as ctx:
        response = client.post("/v1/metrics/words/event", body)
    assert response.status_code == 201, response.content
    return len(ctx.captured_queries)


def test_templates_add_no_query_to_the_event_path(api_client, metric):
    # Each count follows a warm-up at the same instant: configuration snapshots are loaded and
    # the API key's last-used stamp is fresh, so only the event's own statements are counted.
    count(api_client, BODY, at("2026-03-10", 9))
    before = count(api_client, BODY, at("2026-03-10", 9))
    for type in ("achievement_completed", "recap", "reactivation", "streak_reminder"):
        activate(api_client, type)
    for n in range(5):
        api_client.post(
            "/admin/v1/email-templates",
            [{"type": "recap", "name": f"extra {n}", "status": "active"}],
        )
    count(api_client, BODY, at("2026-03-10", 11))
    assert count(api_client, BODY, at("2026-03-10", 11)) == before


def test_the_first_event_of_a_day_records_the_users_activity_once(api_client, metric):
    count(api_client, BODY, at("2026-03-10", 8))
    same_day = count(api_client, BODY, at("2026-03-10", 9))
    next_day = count(api_client, BODY, at("2026-03-11", 9))
    assert next_day == same_day + 1
    user = EndUser.objects.get(external_id="u0")
    assert user.last_active_on == dt.date(2026, 3, 11)
    assert user.last_active_at == at("2026-03-11", 9)


def test_a_completion_adds_one_insert_whatever_the_number_of_templates(api_client, metric):
    api_client.post(
        "/admin/v1/achievements",
        [
            {
                "name": f"Level {n}",
                "trigger": "metric",
                "metricId": str(metric.public_id),
                "metricValue": 5,
                "status": "active",
            }
            for n in range(3)
        ],
    )
    activate(api_client, "achievement_completed")
    for n in range(4):
        api_client.post(
            "/admin/v1/email-templates",
            [{"type": "achievement_completed", "name": f"extra {n}", "status": "active"}],
        )
    count(api_client, {**BODY, "user": {**BODY["user"], "id": "warm"}}, at("2026-03-10", 8))
    count(api_client, BODY, at("2026-03-10", 8))
    steady = count(api_client, BODY, at("2026-03-10", 9))
    completing = {**BODY, "value": 10}
    with_completion = count(api_client, completing, at("2026-03-10", 10))
    assert len(messages(type="achievement_completed")) == 3
    without_notifications = 0
    assert with_completion > steady
    # The three completions are one multi-row insert of achievements (already there before
    # notifications) plus one multi-row insert of messages.
    api_client.patch(
        "/admin/v1/email-templates",
        [
            {"id": t["id"], "status": "inactive"}
            for t in api_client.get("/admin/v1/email-templates", {"limit": 100}).json()
        ],
    )
    count(api_client, {**BODY, "user": {**BODY["user"], "id": "warm2"}}, at("2026-03-10", 10))
    count(api_client, {**BODY, "user": {**BODY["user"], "id": "u1"}}, at("2026-03-10", 10))
    without_notifications = count(
        api_client, {**completing, "user": {**BODY["user"], "id": "u1"}}, at("2026-03-10", 11)
    )
    assert with_completion == without_notifications + 1
