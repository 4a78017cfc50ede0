"""Streaks through the public API, with the clock moved through multi-day scenarios."""

import datetime as dt

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.streaks.jobs import streaks_settle_due
from apps.streaks.models import StreakState
from tests.admin_issues import admin_issue
from tests.factories import MetricFactory, bump

UTC = dt.UTC


def at(day: str, hour: int = 12, minute: int = 0) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, minute=minute, tzinfo=UTC)


def configure(client, **settings):
    response = client.patch("/admin/v1/streaks/settings", settings)
    assert response.status_code == 200, response.content
    return response.json()


def event(client, when, user="u1", value=1, key="words", **user_fields):
    with time_machine.travel(when, tick=False):
        response = client.post(
            f"/v1/metrics/{key}/event", {"user": {"id": user, **user_fields}, "value": value}
        )
    assert response.status_code == 201, response.content
    return response.json()["currentStreak"]


def streak(client, when, user="u1", **params):
    with time_machine.travel(when, tick=False):
        response = client.get(f"/v1/users/{user}/streak", params)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def daily(api_client, metric):
    configure(api_client, frequency="daily", metrics=[{"key": "words", "threshold": 1}])
    return api_client


class TestDaily:
    def test_first_event_starts_a_streak(self, daily):
        body = event(daily, at("2026-03-10"))
        assert body == {
            "length": 1,
            "frequency": "daily",
            "started": "2026-03-10",
            "periodStart": "2026-03-10",
            "periodEnd": "2026-03-10",
            "expires": "2026-03-11",
            "extended": True,
        }

    def test_second_event_same_day_does_not_extend(self, daily):
        event(daily, at("2026-03-10", 9))
        body = event(daily, at("2026-03-10", 20))
        assert (body["length"], body["extended"]) == (1, False)

    def test_consecutive_days_extend_and_a_missed_day_loses(self, daily):
        event(daily, at("2026-03-10"))
        assert event(daily, at("2026-03-11"))["length"] == 2
        # Nothing on the 12th: read on the 13th, without any job having run.
        read = streak(daily, at("2026-03-13", 8))
        assert (read["length"], read["started"], read["expires"], read["extended"]) == (
            0,
            None,
            None,
            None,
        )
        body = event(daily, at("2026-03-13", 9))
        assert (body["length"], body["started"]) == (1, "2026-03-13")

    def test_the_streak_survives_until_the_end_of_the_next_day(self, daily):
        event(daily, at("2026-03-10"))
        assert streak(daily, at("2026-03-11", 23, 59))["length"] == 1
        assert streak(daily, at("2026-03-12", 0, 1))["length"] == 0

    def test_threshold_is_the_change_within_the_day(self, api_client, metric):
        configure(api_client, metrics=[{"key": "words", "threshold": 500}])
        assert event(api_client, at("2026-03-10", 9), value=300)["length"] == 0
        body = event(api_client, at("2026-03-10", 10), value=250)
        assert (body["length"], body["extended"]) == (1, True)
        # A new day starts from zero again.
        assert event(api_client, at("2026-03-11", 10), value=499)["extended"] is False

    def test_other_metrics_do_not_extend(self, daily, tenant):
        MetricFactory(tenant=tenant, key="logins")
        bump(tenant)
        assert event(daily, at("2026-03-10"), key="logins")["length"] == 0

    def test_days_are_the_users_local_days(self, daily):
        # 23:30 UTC on the 10th is the 11th in Tokyo: two events an hour apart, two days.
        event(daily, at("2026-03-10", 14, 30), tz="Asia/Tokyo")  # 23:30 on the 10th in Tokyo
        body = event(daily, at("2026-03-10", 15, 30), tz="Asia/Tokyo")  # 00:30 on the 11th
        assert (body["length"], body["periodStart"]) == (2, "2026-03-11")

    def test_dst_spring_forward_day_counts_once(self, daily):
        # New York loses an hour on 8 March 2026; the day is still one period.
        event(daily, at("2026-03-08", 5, 30), tz="America/New_York")  # 00:30 EST
        body = event(daily, at("2026-03-09", 3, 30), tz="America/New_York")  # 23:30 EDT on 8th
        assert (body["length"], body["extended"]) == (1, False)
        assert event(daily, at("2026-03-09", 4, 30), tz="America/New_York")["length"] == 2

    def test_moving_east_across_the_date_line_keeps_the_streak(self, daily):
        event(daily, at("2026-06-01", 10), tz="Pacific/Pago_Pago")  # 23:00 on 31 May there
        # Same instant, now in Kiritimati: its 2 June overlaps the 31 May already counted...
        body = event(daily, at("2026-06-01", 10, 30), tz="Pacific/Kiritimati")
        assert (body["length"], body["extended"], body["periodStart"]) == (1, False, "2026-06-02")
        # ...and the streak is not lost for the 1 June the user never lived there.
        assert streak(daily, at("2026-06-02", 11), user="u1")["length"] == 1  # 3 June there
        assert event(daily, at("2026-06-02", 11))["length"] == 2

    def test_moving_west_does_not_count_a_day_twice(self, daily):
        event(daily, at("2026-06-01", 10, 30), tz="Pacific/Kiritimati")  # 2 June there
        body = event(daily, at("2026-06-01", 11), tz="Pacific/Pago_Pago")  # 31 May there
        assert body["length"] == 1


class TestConditions:
    @pytest.fixture
    def two_metrics(self, api_client, tenant, metric):
        MetricFactory(tenant=tenant, key="lessons")
        bump(tenant)
        return api_client

    def test_and_needs_every_metric(self, two_metrics):
        configure(
            two_metrics,
            evaluationMode="AND",
            metrics=[{"key": "words", "threshold": 10}, {"key": "lessons", "threshold": 1}],
        )
        assert event(two_metrics, at("2026-03-10", 9), value=10)["length"] == 0
        assert event(two_metrics, at("2026-03-10", 10), key="lessons")["length"] == 1

    def test_or_needs_one_metric(self, two_metrics):
        configure(
            two_metrics,
            evaluationMode="OR",
            metrics=[{"key": "words", "threshold": 10}, {"key": "lessons", "threshold": 1}],
        )
        assert event(two_metrics, at("2026-03-10", 10), key="lessons")["length"] == 1


class TestWeeklyAndMonthly:
    def test_weekly_expires_at_the_end_of_the_next_week(self, api_client, metric):
        configure(api_client, frequency="weekly", metrics=[{"key": "words", "threshold": 1}])
        body = event(api_client, at("2026-04-01"))  # a Wednesday
        assert (body["periodStart"], body["periodEnd"], body["expires"]) == (
            "2026-03-29",
            "2026-04-04",
            "2026-04-11",
        )
        assert event(api_client, at("2026-04-10"))["length"] == 2
        assert streak(api_client, at("2026-04-19"))["length"] == 0

    def test_monthly_across_february_of_a_leap_year(self, api_client, metric):
        configure(api_client, frequency="monthly", metrics=[{"key": "words", "threshold": 1}])
        event(api_client, at("2028-01-31"))
        body = event(api_client, at("2028-02-29"))
        assert (body["length"], body["periodEnd"], body["expires"]) == (
            2,
            "2028-02-29",
            "2028-03-31",
        )


class TestFreezes:
    @pytest.fixture
    def frozen(self, api_client, metric):
        configure(
            api_client,
            metrics=[{"key": "words", "threshold": 1}],
            freezes={"startCount": 1, "maxCount": 3},
        )
        return api_client

    def test_a_freeze_bridges_a_missed_day(self, frozen):
        body = event(frozen, at("2026-03-10"))
        assert (body["freezes"], body["maxFreezes"], body["expires"]) == (1, 3, "2026-03-12")
        read = streak(frozen, at("2026-03-12", 8), historyPeriods=3)
        assert (read["length"], read["freezes"]) == (1, 0)
        assert [
            (h["periodStart"], h["length"], h["usedFreeze"]) for h in read["streakHistory"]
        ] == [("2026-03-10", 1, False), ("2026-03-11", 1, True), ("2026-03-12", 1, False)]
        assert event(frozen, at("2026-03-12", 9))["length"] == 2

    def test_without_enough_freezes_the_streak_is_lost(self, frozen):
        event(frozen, at("2026-03-10"))
        read = streak(frozen, at("2026-03-13", 8))
        assert (read["length"], read["freezes"]) == (0, 0)

    def test_granted_freezes_bridge_several_days_and_respect_the_cap(self, frozen):
        event(frozen, at("2026-03-10"))
        with time_machine.travel(at("2026-03-10", 13), tick=False):
            response = frozen.post(
                "/admin/v1/streaks/freezes",
                {
                    "freezes": [
                        {"userId": "u1"},
                        {"userId": "u1"},
                        {"userId": "u1"},
                        {"userId": "ghost"},
                    ]
                },
            )
        assert response.status_code == 201
        issues = response.json()["issues"]
        assert {(i.get("userId"), i["severity"], i["message"]) for i in issues} == {
            ("ghost", "error", 'User not found: "ghost"'),
            ("u1", "warning", "Would exceed maximum freeze limit"),
        }
        assert streak(frozen, at("2026-03-10", 14))["freezes"] == 3
        read = streak(frozen, at("2026-03-14", 8))
        assert (read["length"], read["freezes"]) == (1, 0)

    def test_the_job_consumes_freezes_at_local_midnight_once(self, frozen):
        event(frozen, at("2026-03-10", 12), tz="Europe/Paris")
        # Paris midnight starting the 12th is 23:00 UTC on the 11th.
        streaks_settle_due(at("2026-03-11", 22, 59))
        assert StreakState.objects.get().freezes == 1
        streaks_settle_due(at("2026-03-11", 23, 0))
        state = StreakState.objects.get()
        assert (state.freezes, state.length) == (0, 1)
        streaks_settle_due(at("2026-03-11", 23, 5))
        assert StreakState.objects.get().freezes == 0
        assert streak(frozen, at("2026-03-11", 23, 10))["length"] == 1

    def test_freeze_fields_are_absent_when_freezes_are_disabled(self, daily):
        body = event(daily, at("2026-03-10"))
        assert "freezes" not in body
        assert "usedFreeze" not in streak(daily, at("2026-03-10"))["streakHistory"][-1]

    def test_auto_earn(self, api_client, metric):
        from apps.streaks.jobs import streaks_freezes_earn

        configure(
            api_client,
            metrics=[{"key": "words", "threshold": 1}],
            freezes={"startCount": 0, "maxCount": 2, "autoEarnInterval": 7, "autoEarnAmount": 1},
        )
        event(api_client, at("2026-03-01"))
        streaks_freezes_earn(at("2026-03-07"))
        assert StreakState.objects.get().freezes == 0
        outcomes = streaks_freezes_earn(at("2026-03-08"))
        assert [(o.kind, o.amount, o.freezes) for o in outcomes] == [("freeze_earned", 1, 1)]
        streaks_freezes_earn(at("2026-03-08", 13))
        streaks_freezes_earn(at("2026-03-29"))
        assert StreakState.objects.get().freezes == 2


class TestPauses:
    def test_a_paused_day_keeps_the_length(self, daily):
        event(daily, at("2026-03-10"))
        with time_machine.travel(at("2026-03-10", 13), tick=False):
            response = daily.post(
                "/admin/v1/streaks/pauses",
                {"pauses": [{"userId": "u1", "start": "2026-03-11", "end": "2026-03-12"}]},
            )
        assert response.status_code == 201
        created = response.json()["created"][0]
        assert (created["userId"], created["start"], created["status"]) == (
            "u1",
            "2026-03-11",
            "active",
        )
        read = streak(daily, at("2026-03-12", 9))
        assert read["length"] == 1
        assert read["pauses"] == [{"id": created["id"], "start": "2026-03-11", "end": "2026-03-12"}]
        assert event(daily, at("2026-03-13"))["length"] == 2
        history = streak(daily, at("2026-03-13", 13), historyPeriods=4)["streakHistory"]
        assert [(h["length"], h["usedPause"]) for h in history] == [
            (1, False),
            (1, True),
            (1, True),
            (2, False),
        ]

    def test_pause_validation(self, daily):
        event(daily, at("2026-03-10"))
        with time_machine.travel(at("2026-03-10", 13), tick=False):
            response = daily.post(
                "/admin/v1/streaks/pauses",
                {
                    "pauses": [
                        {"userId": "u1", "start": "2026-03-09", "end": "2026-03-12"},
                        {"userId": "u1", "start": "2026-03-12", "end": "2026-03-11"},
                        {"userId": "ghost", "start": "2026-03-12", "end": "2026-03-12"},
                    ]
                },
            )
        assert response.status_code == 200
        assert response.json()["created"] == []
        assert len(response.json()["issues"]) == 3

    def test_deleted_pause_no_longer_protects(self, daily):
        event(daily, at("2026-03-10"))
        with time_machine.travel(at("2026-03-10", 13), tick=False):
            pause = daily.post(
                "/admin/v1/streaks/pauses",
                {"pauses": [{"userId": "u1", "start": "2026-03-11", "end": "2026-03-11"}]},
            ).json()
            pause_id = pause["created"][0]["id"]
            deleted = daily.delete(f"/admin/v1/streaks/pauses?ids={pause_id},nope")
        assert deleted.json()["deleted"] == [{"id": pause_id}]
        assert deleted.json()["issues"][0]["message"] == "Streak pause not found by ID"
        assert streak(daily, at("2026-03-12", 9))["length"] == 0


class TestDaysOff:
    def test_a_day_off_keeps_the_length_and_activity_on_it_extends(self, api_client, metric):
        configure(api_client, metrics=[{"key": "words", "threshold": 1}], daysOff=[0])
        event(api_client, at("2026-03-07"))  # Saturday
        # Sunday the 8th is a day off: skipped, the streak lives on.
        assert streak(api_client, at("2026-03-09", 9))["length"] == 1
        assert event(api_client, at("2026-03-09"))["length"] == 2
        # Activity on a day off still extends.
        assert event(api_client, at("2026-03-15"))["length"] == 1  # missed 10..14
        assert event(api_client, at("2026-03-16"))["length"] == 2

    def test_saturday_expiry_skips_sunday(self, api_client, metric):
        configure(api_client, metrics=[{"key": "words", "threshold": 1}], daysOff=[0])
        assert event(api_client, at("2026-03-07"))["expires"] == "2026-03-09"

    def test_days_off_need_daily_frequency(self, api_client, metric):
        response = api_client.patch(
            "/admin/v1/streaks/settings", {"frequency": "weekly", "daysOff": [0]}
        )
        assert response.status_code == 422


class TestRestoreAndReset:
    def test_reset_then_restore(self, daily):
        for day in ("2026-03-10", "2026-03-11", "2026-03-12"):
            event(daily, at(day))
        with time_machine.travel(at("2026-03-12", 13), tick=False):
            reset = daily.post("/admin/v1/streaks/reset", {"users": [{"id": "u1"}, {"id": "x"}]})
        assert reset.json()["resetUsers"] == ["u1"]
        assert reset.json()["issues"][0]["severity"] == "error"
        read = streak(daily, at("2026-03-12", 14))
        assert read["length"] == 0
        assert "resetAt" in read["streakHistory"][-1]
        with time_machine.travel(at("2026-03-13", 9), tick=False):
            restored = daily.post("/admin/v1/streaks/restore", {"users": [{"id": "u1"}]})
        assert restored.status_code == 201
        assert restored.json() == {"restoredUsers": ["u1"], "issues": []}
        assert streak(daily, at("2026-03-13", 10))["length"] == 3
        assert event(daily, at("2026-03-13", 11))["length"] == 4

    def test_nothing_to_restore_is_a_warning(self, daily):
        event(daily, at("2026-03-10"))
        with time_machine.travel(at("2026-03-10", 13), tick=False):
            response = daily.post("/admin/v1/streaks/restore", {"users": [{"id": "u1"}]})
        assert response.status_code == 200
        assert response.json()["issues"] == [
            admin_issue("No streak to restore", "warning", userId="u1")
        ]


class TestBulkAndPreferences:
    def test_streaks_of_several_users_longest_first(self, daily):
        event(daily, at("2026-03-10"), user="a")
        for day in ("2026-03-10", "2026-03-11"):
            event(daily, at(day), user="b")
        with time_machine.travel(at("2026-03-11", 13), tick=False):
            response = daily.get("/v1/streaks", {"userIds": ["a", "b", "ghost"]})
        assert [(i["userId"], i["streakLength"]) for i in response.json()] == [("b", 2), ("a", 1)]
        assert daily.get("/v1/streaks").status_code == 422

    def test_personalization_is_forbidden_unless_enabled(self, daily):
        event(daily, at("2026-03-10"))
        response = daily.patch("/v1/users/u1/preferences", {"streak": {"evaluationMode": "OR"}})
        assert response.status_code == 403
        assert (
            daily.patch("/v1/users/u1/preferences", {"streak": {"enabled": False}}).status_code
            == 200
        )
        assert streak(daily, at("2026-03-10", 13))["length"] == 0
        assert event(daily, at("2026-03-11"))["length"] == 0

    def test_personal_thresholds(self, daily):
        configure(daily, customizationEnabled=True)
        daily.put("/v1/users/u1", {})
        response = daily.patch(
            "/v1/users/u1/preferences",
            {
                "streak": {"metrics": [{"key": "words", "threshold": 5}]},
                "notifications": {"recap": ["email"]},
            },
        )
        assert response.status_code == 200
        assert response.json() == {
            "notifications": {"recap": ["email"]},
            "streak": {"enabled": True, "metrics": [{"key": "words", "threshold": 5}]},
        }
        assert event(daily, at("2026-03-10", 9), value=4)["length"] == 0
        assert event(daily, at("2026-03-10", 10), value=1)["length"] == 1

    def test_preferences_of_unknown_user_is_404(self, daily):
        assert daily.get("/v1/users/ghost/preferences").status_code == 404


class TestQueryCounts:
    def test_event_with_streaks_configured_costs_a_bounded_number_of_queries(self, daily):
        event(daily, at("2026-03-10", 9), user="warm")
        counts = []
        for day in ("2026-03-10", "2026-03-11", "2026-03-12"):
            with (
                time_machine.travel(at(day, 12), tick=False),
                CaptureQueriesContext(connection) as ctx,
            ):
                daily.post("/v1/metrics/words/event", {"user": {"id": "u1"}, "value": 1})
            counts.append(len(ctx.captured_queries))
        with (
            time_machine.travel(at("2026-03-12", 13), tick=False),
            CaptureQueriesContext(connection) as ctx,
        ):
            daily.post("/v1/metrics/words/event", {"user": {"id": "u1"}, "value": 1})
        not_extending = len(ctx.captured_queries)
        assert counts[1] == counts[2] <= 15
        assert not_extending <= 11

    def test_reading_history_costs_the_same_for_7_and_100_periods(self, daily):
        for day in ("2026-03-10", "2026-03-11"):
            event(daily, at(day))
        counts = []
        for periods in (7, 100):
            with (
                time_machine.travel(at("2026-03-11", 13), tick=False),
                CaptureQueriesContext(connection) as ctx,
            ):
                response = daily.get("/v1/users/u1/streak", {"historyPeriods": periods})
            assert len(response.json()["streakHistory"]) == periods
            counts.append(len(ctx.captured_queries))
        assert counts[0] == counts[1] <= 8


class TestSettingsApi:
    def test_defaults_and_round_trip(self, api_client, metric):
        assert api_client.get("/admin/v1/streaks/settings").json() == {
            "frequency": "daily",
            "evaluationMode": "AND",
            "customizationEnabled": False,
            "daysOff": [],
            "metrics": [],
            "freezes": None,
        }
        body = configure(
            api_client,
            frequency="daily",
            daysOff=[0, 6],
            metrics=[{"key": "words", "threshold": 3}],
            freezes={"startCount": 1, "maxCount": 2},
        )
        assert body["metrics"] == [{"key": "words", "threshold": 3}]
        assert body["freezes"] == {
            "startCount": 1,
            "maxCount": 2,
            "autoEarnInterval": None,
            "autoEarnAmount": None,
        }
        assert configure(api_client, freezes=None)["freezes"] is None
        # Switching away from daily clears days off.
        assert configure(api_client, frequency="weekly")["daysOff"] == []

    @pytest.mark.parametrize(
        "body",
        [
            {"frequency": "hourly"},
            {"metrics": [{"key": "nope", "threshold": 1}]},
            {"metrics": [{"key": "words", "threshold": 0}]},
            {"metrics": [{"key": "words", "threshold": 1}, {"key": "words", "threshold": 2}]},
            {"freezes": {"startCount": 3, "maxCount": 1}},
            {"freezes": {"startCount": 0, "maxCount": 1, "autoEarnInterval": 7}},
            {"daysOff": [7]},
            {"daysOff": [0, 1, 2, 3, 4, 5, 6]},
            {"unknown": True},
        ],
    )
    def test_invalid_settings_are_422_and_change_nothing(self, api_client, metric, body):
        before = api_client.get("/admin/v1/streaks/settings").json()
        response = api_client.patch("/admin/v1/streaks/settings", body)
        assert response.status_code == 422, response.content
        assert api_client.get("/admin/v1/streaks/settings").json() == before

    def test_settings_are_per_tenant(self, api_client, other_tenant_client, metric):
        configure(api_client, metrics=[{"key": "words", "threshold": 1}])
        assert other_tenant_client.get("/admin/v1/streaks/settings").json()["metrics"] == []
