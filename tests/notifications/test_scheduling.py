"""The four notification types end to end: events and jobs at chosen moments, emails received
(Django's locmem backend), once and only once, in each user's local time."""

import datetime as dt

import pytest
import time_machine

from apps.notifications.choices import MessageStatus
from apps.notifications.models import Message
from apps.streaks.jobs import streaks_settle_due
from tests.notifications.conftest import (
    activate,
    at,
    committed,
    messages,
    metric_achievement,
    outbox_to,
    run_jobs,
    send_event,
)

PARIS = "Europe/Paris"
TOKYO = "Asia/Tokyo"


@pytest.fixture
def achievement(api_client, metric):
    created = metric_achievement(api_client, metric, "Ten words", 10, description="Wrote ten words")
    activate(api_client, "achievement_completed")
    return created


class TestAchievementCompleted:
    def test_completed_in_the_morning_is_sent_at_17_local(self, api_client, achievement):
        send_event(api_client, at("2026-03-10", 9, tz=PARIS), value=10, tz=PARIS)
        [message] = messages()
        assert message.send_at == at("2026-03-10", 17, tz=PARIS)
        run_jobs(at("2026-03-10", 16, 59, tz=PARIS))
        assert outbox_to("u1@example.com") == []
        run_jobs(at("2026-03-10", 17, 0, tz=PARIS))
        [email] = outbox_to("u1@example.com")
        assert "Ten words" in email.subject + email.body
        run_jobs(at("2026-03-10", 17, 5, tz=PARIS))
        assert len(outbox_to("u1@example.com")) == 1
        message.refresh_from_db()
        assert message.status == MessageStatus.SENT
        assert message.sent_at == at("2026-03-10", 17, 0, tz=PARIS)

    def test_completed_inside_the_window_is_sent_at_once(self, api_client, achievement):
        send_event(api_client, at("2026-03-10", 18, tz=TOKYO), value=12, tz=TOKYO)
        assert len(outbox_to("u1@example.com")) == 1

    def test_completed_after_21_waits_for_17_the_next_day(self, api_client, achievement):
        send_event(api_client, at("2026-03-10", 21, 30, tz=PARIS), value=10, tz=PARIS)
        [message] = messages()
        assert message.send_at == at("2026-03-11", 17, tz=PARIS)

    def test_users_without_time_zone_are_scheduled_in_new_york(self, api_client, achievement):
        send_event(api_client, at("2026-03-10", 12), value=10)  # 08:00 in New York
        [message] = messages()
        assert message.send_at == at("2026-03-10", 17, tz="America/New_York")

    def test_completion_through_the_api_is_notified(self, api_client, metric):
        api_client.post(
            "/admin/v1/achievements",
            [{"name": "Onboarded", "key": "onboarded", "trigger": "api", "status": "active"}],
        )
        activate(api_client, "achievement_completed")
        with time_machine.travel(at("2026-03-10", 18), tick=False), committed():
            response = api_client.post(
                "/v1/achievements/onboarded/complete",
                {"user": {"id": "u2", "email": "u2@example.com", "tz": "UTC"}},
            )
            assert response.status_code == 201
            again = api_client.post("/v1/achievements/onboarded/complete", {"user": {"id": "u2"}})
            assert again.status_code == 200
        assert len(outbox_to("u2@example.com")) == 1

    def test_backdated_completions_send_nothing(self, api_client, metric):
        send_event(api_client, at("2026-03-10", 18), value=50, tz="UTC")
        activate(api_client, "achievement_completed")
        with time_machine.travel(at("2026-03-10", 18, 5), tick=False), committed():
            metric_achievement(api_client, metric, "Backdated", 10)
        run_jobs(at("2026-03-10", 18, 10))
        achievements = api_client.get("/v1/users/u1/achievements").json()
        assert [a["name"] for a in achievements] == ["Backdated"]  # backdating ran
        assert messages() == []
        assert outbox_to("u1@example.com") == []

    def test_a_replayed_event_does_not_notify_twice(self, api_client, achievement):
        with time_machine.travel(at("2026-03-10", 18), tick=False), committed():
            for _ in range(2):
                api_client.post(
                    "/v1/metrics/words/event",
                    {"user": {"id": "u1", "email": "u1@example.com", "tz": "UTC"}, "value": 10},
                    HTTP_IDEMPOTENCY_KEY="once",
                )
        assert len(outbox_to("u1@example.com")) == 1

    def test_an_inactive_template_turns_the_type_off(self, api_client, metric, achievement):
        templates = api_client.get("/admin/v1/email-templates", {"limit": 100}).json()
        for template in templates:
            api_client.patch(
                "/admin/v1/email-templates", [{"id": template["id"], "status": "inactive"}]
            )
        send_event(api_client, at("2026-03-10", 18), value=10, tz="UTC")
        assert messages() == []


class TestWhoGetsNothing:
    @pytest.mark.parametrize(
        "user_fields",
        [
            {"subscribeToEmails": False},
            {"email": None},
        ],
    )
    def test_unreachable_users_get_no_email(self, api_client, achievement, user_fields):
        fields = {"tz": "UTC", **user_fields}
        send_event(api_client, at("2026-03-10", 18), value=10, **fields)
        assert messages() == []

    def test_the_control_group_gets_nothing(self, api_client, tenant, achievement):
        tenant.control_ratio = 100
        tenant.save()
        send_event(api_client, at("2026-03-10", 18), value=10, tz="UTC")
        assert messages() == []

    def test_a_type_turned_off_in_preferences_is_not_sent(self, api_client, achievement):
        send_event(api_client, at("2026-03-10", 8), value=1, tz="UTC")
        api_client.patch(
            "/v1/users/u1/preferences", {"notifications": {"achievement_completed": ["push"]}}
        )
        send_event(api_client, at("2026-03-10", 18), value=10, tz="UTC")
        assert messages() == []

    def test_unsubscribing_after_scheduling_skips_the_message(self, api_client, achievement):
        send_event(api_client, at("2026-03-10", 9), value=10, tz="UTC")
        api_client.patch("/v1/users/u1", {"subscribeToEmails": False})
        run_jobs(at("2026-03-10", 17))
        [message] = messages()
        assert message.status == MessageStatus.SKIPPED
        assert "not subscribed" in message.error
        assert outbox_to("u1@example.com") == []

    def test_template_filters_pick_the_matching_template(self, api_client, tenant, achievement):
        attribute = api_client.post(
            "/admin/v1/attributes", [{"name": "Plan", "key": "plan", "type": "user"}]
        ).json()["created"][0]
        api_client.post(
            "/admin/v1/email-templates",
            [
                {
                    "type": "achievement_completed",
                    "name": "Pro",
                    "status": "active",
                    "priority": 10,
                    "subject": "Pro: {{ achievement.name }}",
                    "html": "<p>Pro {{ user.name }}</p>",
                    "userAttributes": [{"attributeId": attribute["id"], "attributeValue": "pro"}],
                }
            ],
        )
        send_event(
            api_client, at("2026-03-10", 18), "pro", value=10, tz="UTC", attributes={"plan": "pro"}
        )
        send_event(
            api_client,
            at("2026-03-10", 18),
            "free",
            value=10,
            tz="UTC",
            attributes={"plan": "free"},
        )
        assert outbox_to("pro@example.com")[0].subject == "Pro: Ten words"
        assert not outbox_to("free@example.com")[0].subject.startswith("Pro")


@pytest.fixture
def daily_streak(api_client, metric):
    response = api_client.patch(
        "/admin/v1/streaks/settings",
        {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
    )
    assert response.status_code == 200, response.content
    activate(api_client, "streak_reminder")
    return api_client


class TestStreakReminder:
    def test_reminded_at_20_local_when_not_yet_extended_today(self, daily_streak):
        send_event(daily_streak, at("2026-03-09", 10, tz=TOKYO), tz=TOKYO)
        run_jobs(at("2026-03-10", 19, 55, tz=TOKYO))
        assert outbox_to("u1@example.com") == []
        run_jobs(at("2026-03-10", 20, 0, tz=TOKYO))
        run_jobs(at("2026-03-10", 20, 5, tz=TOKYO))
        [email] = outbox_to("u1@example.com")
        assert "streak" in email.subject.lower() + email.body.lower()
        [message] = messages(type="streak_reminder")
        assert message.dedupe_key == "streak_reminder:daily:2026-03-10"

    def test_no_reminder_once_extended_today(self, daily_streak):
        send_event(daily_streak, at("2026-03-09", 10, tz=PARIS), tz=PARIS)
        send_event(daily_streak, at("2026-03-10", 10, tz=PARIS), tz=PARIS)
        run_jobs(at("2026-03-10", 20, 30, tz=PARIS))
        assert messages(type="streak_reminder") == []

    def test_a_late_run_after_the_day_ended_sends_nothing(self, daily_streak):
        send_event(daily_streak, at("2026-03-09", 10, tz=PARIS), tz=PARIS)
        run_jobs(at("2026-03-11", 0, 30, tz=PARIS))
        assert messages(type="streak_reminder") == []

    def test_reminder_on_the_day_clocks_change_is_at_20_local(self, daily_streak):
        # Paris springs forward on 2026-03-29: 20:00 local is 18:00 UTC that day.
        send_event(daily_streak, at("2026-03-28", 10, tz=PARIS), tz=PARIS)
        run_jobs(dt.datetime(2026, 3, 29, 17, 59, tzinfo=dt.UTC))
        assert messages(type="streak_reminder") == []
        run_jobs(dt.datetime(2026, 3, 29, 18, 0, tzinfo=dt.UTC))
        assert len(messages(type="streak_reminder")) == 1

    def test_paused_streaks_are_not_reminded(self, daily_streak):
        send_event(daily_streak, at("2026-03-09", 10), tz="UTC")
        with time_machine.travel(at("2026-03-09", 11), tick=False):
            response = daily_streak.post(
                "/admin/v1/streaks/pauses",
                {"pauses": [{"userId": "u1", "start": "2026-03-10", "end": "2026-03-12"}]},
            )
        assert response.status_code in (200, 201), response.content
        assert response.json()["issues"] == []
        run_jobs(at("2026-03-10", 20, 30))
        assert messages(type="streak_reminder") == []

    def test_days_off_are_not_reminded(self, api_client, metric):
        api_client.patch(
            "/admin/v1/streaks/settings",
            {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}], "daysOff": [2]},
        )
        activate(api_client, "streak_reminder")
        send_event(api_client, at("2026-03-09", 10), tz="UTC")  # Monday
        run_jobs(at("2026-03-10", 20, 30))  # Tuesday: a day off
        assert messages(type="streak_reminder") == []

    def test_weekly_streaks_are_reminded_on_friday_morning(self, api_client, metric):
        api_client.patch(
            "/admin/v1/streaks/settings",
            {"frequency": "weekly", "metrics": [{"key": "words", "threshold": 1}]},
        )
        activate(api_client, "streak_reminder")
        send_event(api_client, at("2026-03-04", 10), tz="UTC")  # the week of Sunday 1 March
        run_jobs(at("2026-03-13", 8, 55))
        assert messages(type="streak_reminder") == []
        run_jobs(at("2026-03-13", 9, 0))  # Friday of the next week
        assert [m.dedupe_key for m in messages(type="streak_reminder")] == [
            "streak_reminder:weekly:2026-03-08"
        ]

    def test_after_the_settle_job_the_reminder_follows_the_new_period(self, daily_streak):
        send_event(daily_streak, at("2026-03-09", 10), tz="UTC")
        run_jobs(at("2026-03-10", 20, 30))
        with time_machine.travel(at("2026-03-11", 0, 5), tick=False):
            streaks_settle_due(at("2026-03-11", 0, 5))
        run_jobs(at("2026-03-11", 20, 30))
        assert len(messages(type="streak_reminder")) == 1  # the streak was lost on the 10th


@pytest.fixture
def reactivation(api_client, metric):
    activate(api_client, "reactivation")
    return api_client


class TestReactivation:
    def test_messages_one_to_five_after_3_5_7_14_30_days(self, reactivation):
        send_event(reactivation, at("2026-03-01", 10, tz=PARIS), tz=PARIS)
        for day in range(2, 40):
            run_jobs(
                at(
                    f"2026-03-{day:02d}" if day <= 31 else f"2026-04-{day - 31:02d}",
                    17,
                    1,
                    tz=PARIS,
                )
            )
        sent = messages(type="reactivation")
        assert [(m.payload["messageNumber"], m.payload["daysSinceLastActive"]) for m in sent] == [
            (1, 3),
            (2, 5),
            (3, 7),
            (4, 14),
            (5, 30),
        ]
        assert [m.send_at.astimezone(dt.UTC).date().isoformat() for m in sent] == [
            "2026-03-04",
            "2026-03-06",
            "2026-03-08",
            "2026-03-15",
            "2026-03-31",
        ]
        assert len(outbox_to("u1@example.com")) == 5

    def test_an_event_resets_the_sequence(self, reactivation):
        send_event(reactivation, at("2026-03-01", 10), tz="UTC")
        run_jobs(at("2026-03-04", 17, 1, tz="America/New_York"))
        send_event(reactivation, at("2026-03-05", 10), tz="UTC")
        run_jobs(at("2026-03-06", 17, 1, tz="America/New_York"))  # 5 days after 1 March
        run_jobs(at("2026-03-08", 17, 1, tz="America/New_York"))  # 3 days after 5 March
        sent = messages(type="reactivation")
        assert [m.dedupe_key for m in sent] == [
            "reactivation:2026-03-01:1",
            "reactivation:2026-03-05:1",
        ]

    def test_a_repeated_or_late_run_sends_once(self, reactivation):
        send_event(reactivation, at("2026-03-01", 10), tz="UTC")
        for minute in (0, 5, 30):
            run_jobs(at("2026-03-04", 17, minute, tz="America/New_York"))
        run_jobs(at("2026-03-05", 16, 0, tz="America/New_York"))  # a late run, next morning
        assert len(messages(type="reactivation")) == 1

    def test_a_slot_missed_entirely_is_caught_up_by_the_next_run(self, reactivation):
        send_event(reactivation, at("2026-03-01", 10), tz="UTC")
        run_jobs(at("2026-03-05", 16, 0))  # no run at 17:00 on the 4th: this one is late
        [message] = messages(type="reactivation")
        assert message.payload["messageNumber"] == 1


@pytest.fixture
def recap(api_client, metric):
    activate(api_client, "recap")
    return api_client


class TestRecap:
    def test_weekly_recap_on_monday_9_local_for_the_week_before(self, recap):
        send_event(recap, at("2026-03-04", 10, tz=TOKYO), value=5, tz=TOKYO)
        run_jobs(at("2026-03-09", 8, 55, tz=TOKYO))
        assert messages(type="recap") == []
        run_jobs(at("2026-03-09", 9, 0, tz=TOKYO))
        run_jobs(at("2026-03-09", 9, 30, tz=TOKYO))
        [message] = messages(type="recap")
        assert message.payload["periodStart"] == "2026-03-02"
        assert message.payload["periodEnd"] == "2026-03-08"
        [email] = outbox_to("u1@example.com")
        assert "5" in email.body

    def test_users_inactive_for_two_periods_get_no_recap(self, recap):
        send_event(recap, at("2026-02-18", 10), tz="UTC")
        run_jobs(at("2026-03-09", 9, 5))
        assert messages(type="recap") == []

    def test_active_in_the_period_before_is_enough(self, recap):
        send_event(recap, at("2026-02-25", 10), tz="UTC")
        run_jobs(at("2026-03-09", 9, 5))
        assert len(messages(type="recap")) == 1

    def test_a_recap_more_than_a_day_late_is_not_sent(self, recap):
        send_event(recap, at("2026-03-04", 10), tz="UTC")
        run_jobs(at("2026-03-10", 9, 5))
        assert messages(type="recap") == []

    def test_monthly_recap_on_the_1st(self, recap, tenant):
        tenant.aggregation_period = "monthly"
        tenant.save()
        send_event(recap, at("2026-02-14", 10), tz="UTC")
        run_jobs(at("2026-03-01", 9, 5))
        [message] = messages(type="recap")
        assert (message.payload["periodStart"], message.payload["periodEnd"]) == (
            "2026-02-01",
            "2026-02-28",
        )


def test_messages_are_isolated_per_tenant(api_client, other_tenant_client, achievement):
    other_tenant_client.post(
        "/admin/v1/metrics", [{"name": "Words", "key": "words", "unitType": "number"}]
    )
    send_event(other_tenant_client, at("2026-03-10", 18), "u9", value=10, tz="UTC")
    assert Message.objects.count() == 0


def test_an_anniversary_completed_by_the_job_is_notified(api_client):
    from apps.pipeline.jobs import achievements_anniversaries_job

    with time_machine.travel(at("2025-06-01"), tick=False):
        response = api_client.put(
            "/v1/users/u1",
            {"email": "u1@example.com", "tz": "UTC", "signUpDate": "2025-03-10"},
        )
        assert response.status_code == 200, response.content
        created = api_client.post(
            "/admin/v1/achievements",
            [
                {
                    "name": "One year",
                    "trigger": "anniversary",
                    "anniversaryYears": 1,
                    "status": "active",
                }
            ],
        )
        assert created.status_code == 201, created.content
    activate(api_client, "achievement_completed")
    with time_machine.travel(at("2026-03-10", 18), tick=False), committed():
        assert achievements_anniversaries_job(at("2026-03-10", 18)) == 1
    [email] = outbox_to("u1@example.com")
    assert "One year" in email.subject + email.body
