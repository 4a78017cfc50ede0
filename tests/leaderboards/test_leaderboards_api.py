"""Leaderboards through the admin and application APIs, with the clock moved through the whole
lifecycle: creation (inactive, invisible), activation, scheduled -> active and active ->
finished by the job, metric / points / streak boards, repeating runs, time windows in the
users' time zones, ties, the entry threshold and displacement at the cap, breakdown groups,
participation filters, frozen fields and query counts. Each test runs twice: ranks counted by
PostgreSQL, and ranks held in Redis (apps/leaderboards/ranks.py)."""

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.leaderboards.jobs import (
    leaderboards_lifecycle,
    leaderboards_snapshots,
    leaderboards_streaks_follow,
)
from apps.leaderboards.models import Leaderboard, LeaderboardEntry
from tests.factories import AttributeFactory, MetricFactory, bump

pytestmark = pytest.mark.usefixtures("rank_store")

ADMIN = "/admin/v1/leaderboards"
UTC = dt.UTC


def at(day: str, hour: int = 12, minute: int = 0) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, minute=minute, tzinfo=UTC)


@pytest.fixture
def clock() -> Iterator[Any]:
    """A frozen clock at noon UTC on 10 March 2026 (a Tuesday); `clock.move_to(...)` moves it."""
    with time_machine.travel(at("2026-03-10"), tick=False) as traveller:
        yield traveller


# --- helpers -----------------------------------------------------------------------------------


class Boards:
    """The admin leaderboards collection and the application read endpoints."""

    def __init__(self, client: Any, metric: Any) -> None:
        self.client = client
        self.metric = metric

    def create_raw(self, **item: Any) -> Any:
        return self.client.post(ADMIN, [item])

    def create(self, key: str = "top", **item: Any) -> dict[str, Any]:
        item.setdefault("name", key.title())
        item.setdefault("rankBy", "metric")
        if item["rankBy"] == "metric":
            item.setdefault("metricId", str(self.metric.public_id))
        response = self.create_raw(key=key, **item)
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["issues"] == [], body
        return body["created"][0]

    def live(self, key: str = "top", **item: Any) -> dict[str, Any]:
        item.setdefault("status", "active")
        return self.create(key, **item)

    def patch_raw(self, board_id: str, **fields: Any) -> dict[str, Any]:
        response = self.client.patch(ADMIN, [{"id": board_id, **fields}])
        assert response.status_code == 200, response.content
        return response.json()

    def update(self, board_id: str, **fields: Any) -> dict[str, Any]:
        body = self.patch_raw(board_id, **fields)
        assert body["issues"] == [], body
        return body["updated"][0]

    def update_issue(self, board_id: str, **fields: Any) -> dict[str, Any]:
        body = self.patch_raw(board_id, **fields)
        assert body["updated"] == [], body
        assert len(body["issues"]) == 1, body
        return body["issues"][0]

    def listing(self, **params: Any) -> list[dict[str, Any]]:
        response = self.client.get("/v1/leaderboards", params)
        assert response.status_code == 200, response.content
        return response.json()

    def get(self, key: str = "top", status: int = 200, **params: Any) -> dict[str, Any]:
        response = self.client.get(f"/v1/leaderboards/{key}", params)
        assert response.status_code == status, response.content
        return response.json()

    def table(self, key: str = "top", **params: Any) -> list[tuple[str, int, int]]:
        params.setdefault("limit", 100)
        return [(r["userId"], r["rank"], r["value"]) for r in self.get(key, **params)["rankings"]]

    def user(self, user: str = "u1", key: str = "top", status: int = 200, **params: Any) -> dict:
        response = self.client.get(f"/v1/users/{user}/leaderboards/{key}", params)
        assert response.status_code == status, response.content
        return response.json()


@pytest.fixture
def boards(api_client, metric) -> Boards:
    return Boards(api_client, metric)


def event(
    client: Any,
    user: str = "u1",
    value: Any = 1,
    key: str = "words",
    attrs: dict[str, str] | None = None,
    **user_fields: Any,
) -> dict[str, Any]:
    if attrs is not None:
        user_fields["attributes"] = attrs
    response = client.post(
        f"/v1/metrics/{key}/event", {"user": {"id": user, **user_fields}, "value": value}
    )
    assert response.status_code == 201, response.content
    return response.json()


def lb(body: dict[str, Any], key: str = "top") -> dict[str, Any] | None:
    return body["leaderboards"].get(key)


@pytest.fixture
def region(tenant):
    attribute = AttributeFactory(tenant=tenant, key="region", type="user")
    bump(tenant)
    return attribute


@pytest.fixture
def plan(tenant):
    attribute = AttributeFactory(tenant=tenant, key="plan", type="user")
    bump(tenant)
    return attribute


def ref(attribute: Any, value: str) -> dict[str, str]:
    return {"attributeId": str(attribute.public_id), "attributeValue": value}


# =================================================================================================
# Lifecycle
# =================================================================================================


class TestLifecycle:
    def test_created_inactive_and_invisible(self, boards, api_client, clock):
        created = boards.create(description="Most words")
        assert created == {
            "id": created["id"],
            "name": "Top",
            "key": "top",
            "description": "Most words",
            "status": "inactive",
            "rankBy": "metric",
            "metricId": str(boards.metric.public_id),
            "pointsSystemId": None,
            "maxParticipants": 1000,
            "start": "2026-03-10",
            "end": None,
            "startTime": None,
            "endTime": None,
            "breakdownAttributes": [],
            "runUnit": None,
            "runInterval": None,
            "userAttributes": [],
        }
        assert boards.listing() == []
        assert boards.listing(includeFinished="true") == []
        boards.get(status=404)
        assert event(api_client)["leaderboards"] == {}
        assert not LeaderboardEntry.objects.exists()

    def test_activation_makes_it_visible_and_tracks_activity(self, boards, api_client, clock):
        created = boards.create()
        assert boards.update(created["id"], status="active")["status"] == "active"
        listed = boards.listing()
        assert [(b["key"], b["status"]) for b in listed] == [("top", "active")]
        assert listed[0]["metricKey"] == "words"
        assert listed[0]["metricName"] == "Words"
        body = event(api_client, value=5)
        assert lb(body) == {
            "id": created["id"],
            "name": "Top",
            "key": "top",
            "rankBy": "metric",
            "breakdownAttribute": None,
            "breakdownAttributes": [],
            "description": None,
            "start": "2026-03-10",
            "end": None,
            "startTime": None,
            "endTime": None,
            "maxParticipants": 1000,
            "runUnit": None,
            "runInterval": None,
            "userAttributes": [],
            "metricKey": "words",
            "metricName": "Words",
            "rank": 1,
            "previousRank": None,
            "threshold": 0,
            "breakdownAttributeValues": [],
        }
        page = boards.get()
        assert page["status"] == "active"
        assert page["rankings"] == [{"userId": "u1", "userName": None, "rank": 1, "value": 5}]

    def test_deactivating_stops_tracking_and_hides(self, boards, api_client, clock):
        created = boards.live()
        event(api_client, value=5)
        boards.update(created["id"], status="inactive")
        assert event(api_client, value=5)["leaderboards"] == {}
        boards.get(status=404)
        boards.update(created["id"], status="active")
        assert boards.table() == [("u1", 1, 5)]  # entries were kept

    def test_future_start_is_scheduled_then_activated_by_the_job(self, boards, api_client, clock):
        created = boards.live(start="2026-03-12")
        assert created["status"] == "scheduled"
        assert [(b["key"], b["status"]) for b in boards.listing()] == [("top", "scheduled")]
        assert event(api_client)["leaderboards"] == {}
        assert boards.get()["rankings"] == []
        # The job does nothing before the start date.
        clock.move_to(at("2026-03-11", 23, 59))
        assert leaderboards_lifecycle(dt.datetime.now(UTC)) == 0
        clock.move_to(at("2026-03-12", 0, 5))
        assert leaderboards_lifecycle(dt.datetime.now(UTC)) == 1
        assert leaderboards_lifecycle(dt.datetime.now(UTC)) == 0  # idempotent
        assert boards.get()["status"] == "active"
        assert lb(event(api_client, value=3))["rank"] == 1
        assert boards.table() == [("u1", 1, 3)]

    def test_status_scheduled_with_a_past_start_is_active(self, boards, clock):
        assert boards.live(start="2026-03-01", status="scheduled")["status"] == "active"

    def test_finished_by_the_job_12_hours_after_the_utc_end(self, boards, api_client, clock):
        boards.live(end="2026-03-11")
        event(api_client, user="a", value=5)
        event(api_client, user="b", value=7)
        clock.move_to(at("2026-03-12", 11, 59))
        assert leaderboards_lifecycle(dt.datetime.now(UTC)) == 0
        assert boards.get()["status"] == "active"
        clock.move_to(at("2026-03-12", 12, 0))
        assert leaderboards_lifecycle(dt.datetime.now(UTC)) == 1
        assert Leaderboard.objects.get().status == "finished"
        # Hidden from the list unless asked for, still readable.
        assert boards.listing() == []
        assert [(b["key"], b["status"]) for b in boards.listing(includeFinished="true")] == [
            ("top", "finished")
        ]
        page = boards.get()
        assert page["status"] == "finished"
        assert page["end"] == "2026-03-11"
        assert boards.table() == [("b", 1, 7), ("a", 2, 5)]
        assert boards.table(run="2026-03-10") == [("b", 1, 7), ("a", 2, 5)]
        assert boards.user("a")["rank"] == 2
        # No more tracking.
        assert event(api_client, user="a", value=100)["leaderboards"] == {}

    def test_finished_only_with_a_past_end(self, boards, clock):
        created = boards.create(end="2026-03-20")
        issue = boards.update_issue(created["id"], status="finished")
        assert "end" in str(issue).lower()
        assert (
            boards.create_raw(
                key="old",
                name="Old",
                rankBy="metric",
                metricId=str(boards.metric.public_id),
                start="2026-01-01",
                end="2026-03-09",
                status="finished",
            ).status_code
            == 201
        )
        assert [b["key"] for b in boards.listing(includeFinished="true")] == ["old"]

    def test_a_board_past_its_end_cannot_go_live(self, boards, clock):
        created = boards.create(start="2026-01-01", end="2026-03-09")
        boards.update_issue(created["id"], status="active")

    def test_end_before_start_is_refused(self, boards, clock):
        response = boards.create_raw(
            key="bad",
            name="Bad",
            rankBy="metric",
            metricId=str(boards.metric.public_id),
            start="2026-03-10",
            end="2026-03-01",
        )
        assert response.status_code == 200
        assert response.json()["created"] == []


class TestConfiguration:
    def test_frozen_fields_once_live(self, boards, plan, clock):
        created = boards.live()
        for field, value in (
            ("key", "renamed"),
            ("rankBy", "streak"),
            ("userAttributes", [ref(plan, "pro")]),
        ):
            issue = boards.update_issue(created["id"], **{field: value})
            assert field in str(issue), issue
        # Other fields may change while active.
        assert boards.update(created["id"], name="Renamed", maxParticipants=5)["name"] == "Renamed"
        # Back to inactive: everything is editable again.
        boards.update(created["id"], status="inactive")
        updated = boards.update(created["id"], key="renamed", userAttributes=[ref(plan, "pro")])
        assert updated["key"] == "renamed"

    def test_resending_an_unchanged_frozen_field_is_not_a_change(self, boards, clock):
        # Clients often send the whole object back; the same key / rankBy is no change.
        created = boards.live()
        updated = boards.update(created["id"], key="top", rankBy="metric", name="Same key")
        assert (updated["key"], updated["name"]) == ("top", "Same key")

    def test_frozen_while_scheduled_too(self, boards, clock):
        created = boards.live(start="2026-04-01")
        boards.update_issue(created["id"], key="other")

    def test_streak_boards_are_perpetual(self, boards, clock):
        response = boards.create_raw(
            key="s", name="S", rankBy="streak", runUnit="day", runInterval=1
        )
        assert response.json()["created"] == []
        assert "perpetual" in str(response.json()["issues"]).lower()

    def test_run_unit_requires_interval(self, boards, clock):
        response = boards.create_raw(
            key="r",
            name="R",
            rankBy="metric",
            metricId=str(boards.metric.public_id),
            runUnit="day",
        )
        assert response.json()["created"] == []

    @pytest.mark.parametrize("cap", [0, 1001])
    def test_max_participants_range(self, boards, clock, cap):
        response = boards.create_raw(
            key="r",
            name="R",
            rankBy="metric",
            metricId=str(boards.metric.public_id),
            maxParticipants=cap,
        )
        assert response.json()["created"] == []

    def test_metric_board_needs_a_metric(self, boards, clock):
        response = boards.create_raw(key="r", name="R", rankBy="metric")
        assert response.json()["created"] == []

    def test_duplicate_key(self, boards, clock):
        boards.create("top")
        response = boards.create_raw(
            key="top", name="Again", rankBy="metric", metricId=str(boards.metric.public_id)
        )
        assert response.json()["created"] == []

    def test_null_clears_end_and_times(self, boards, clock):
        created = boards.create(end="2026-04-01", startTime="09:00", endTime="17:00")
        assert (created["startTime"], created["endTime"]) == ("09:00", "17:00")
        updated = boards.update(created["id"], end=None, startTime=None, endTime=None)
        assert (updated["end"], updated["startTime"], updated["endTime"]) == (None, None, None)

    def test_admin_get_list_delete(self, boards, api_client, clock):
        a = boards.create("a")
        boards.create("b")
        assert api_client.get(f"{ADMIN}/{a['id']}").json()["key"] == "a"
        assert [b["key"] for b in api_client.get(ADMIN).json()] == ["a", "b"]
        assert [b["key"] for b in api_client.get(ADMIN, {"limit": 1, "skip": 1}).json()] == ["b"]
        response = api_client.delete(f"{ADMIN}?ids={a['id']}")
        assert response.status_code == 200, response.content
        assert [b["key"] for b in api_client.get(ADMIN).json()] == ["b"]

    def test_unknown_key_is_404(self, boards, api_client, clock):
        boards.get("nope", status=404)
        event(api_client)
        boards.user("u1", "nope", status=404)


# =================================================================================================
# What boards rank by
# =================================================================================================


class TestRankBy:
    def test_metric_totals_accumulate_and_other_metrics_do_not_count(
        self, boards, api_client, tenant, clock
    ):
        MetricFactory(tenant=tenant, key="logins")
        bump(tenant)
        boards.live()
        event(api_client, value=3)
        body = event(api_client, value=4.5)
        assert lb(body)["previousRank"] == 1
        assert event(api_client, key="logins", value=100)["leaderboards"] == {}
        assert boards.table() == [("u1", 1, 7)]  # integer on the wire
        assert boards.user("u1")["value"] == 7

    def test_idempotent_replay_does_not_count_twice(self, boards, api_client, clock):
        boards.live()
        body = {"user": {"id": "u1"}, "value": 5}
        headers = {"HTTP_IDEMPOTENCY_KEY": "once"}
        assert api_client.post("/v1/metrics/words/event", body, **headers).status_code == 201
        replay = api_client.post("/v1/metrics/words/event", body, **headers)
        assert replay.status_code == 202
        assert boards.table() == [("u1", 1, 5)]

    def test_negative_values_lower_the_score(self, boards, api_client, clock):
        boards.live()
        event(api_client, user="a", value=10)
        event(api_client, user="b", value=8)
        body = event(api_client, user="a", value=-5)
        assert (lb(body)["previousRank"], lb(body)["rank"]) == (1, 2)
        assert boards.table() == [("b", 1, 8), ("a", 2, 5)]

    def test_points_board_adds_the_points_awarded(self, boards, api_client, metric, clock):
        response = api_client.post("/admin/v1/points", [{"name": "XP", "key": "xp"}])
        assert response.status_code == 201, response.content
        system = response.json()["created"][0]
        response = api_client.post(
            f"/admin/v1/points/{system['id']}/triggers",
            [
                {
                    "type": "metric",
                    "points": 10,
                    "metricId": str(metric.public_id),
                    "metricThreshold": 2,
                    "status": "active",
                }
            ],
        )
        assert response.status_code == 201, response.content
        created = boards.live("xp-board", rankBy="points", pointsSystemId=system["id"])
        assert created["pointsSystemId"] == system["id"]
        # Below the trigger threshold: no points, the board is not touched.
        assert lb(event(api_client, value=1), "xp-board") is None
        body = event(api_client, value=1)  # total 2: 10 points
        assert body["points"]["xp"]["added"] == 10
        entry = lb(body, "xp-board")
        assert (entry["rank"], entry["pointsSystemKey"], entry["pointsSystemName"]) == (
            1,
            "xp",
            "XP",
        )
        assert "metricKey" not in entry
        event(api_client, value=3)  # total 5: crosses 4 -> 10 more points
        event(api_client, user="u2", value=2)
        assert boards.table("xp-board") == [("u1", 1, 20), ("u2", 2, 10)]

    def test_points_board_needs_an_active_system(self, boards, clock):
        response = boards.create_raw(
            key="p",
            name="P",
            rankBy="points",
            pointsSystemId="00000000-0000-4000-8000-000000000000",
        )
        assert response.json()["created"] == []

    def test_streak_board_shows_current_streak_length(self, boards, api_client, clock):
        response = api_client.patch(
            "/admin/v1/streaks/settings",
            {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
        )
        assert response.status_code == 200, response.content
        boards.live("streaks", rankBy="streak")
        body = event(api_client, user="a")
        assert lb(body, "streaks")["rank"] == 1
        assert "metricKey" not in lb(body, "streaks")
        # A second event the same day does not extend: the board is not affected.
        assert lb(event(api_client, user="a"), "streaks") is None
        clock.move_to(at("2026-03-11"))
        event(api_client, user="a")
        event(api_client, user="b")
        clock.move_to(at("2026-03-12"))
        event(api_client, user="a")
        assert boards.table("streaks") == [("a", 1, 3), ("b", 2, 1)]
        # b misses the 13th: the follow job drops b to 0 on the 14th; a keeps going.
        clock.move_to(at("2026-03-13"))
        event(api_client, user="a")
        clock.move_to(at("2026-03-14", 1))
        assert leaderboards_streaks_follow(dt.datetime.now(UTC)) >= 1
        table = {u: v for u, _, v in boards.table("streaks")}
        assert table["b"] == 0
        assert table["a"] == 4


# =================================================================================================
# Repeating runs
# =================================================================================================


class TestRuns:
    def test_daily_runs_reset_and_past_runs_stay_readable(self, boards, api_client, clock):
        boards.live("daily", runUnit="day", runInterval=1)
        body = event(api_client, user="a", value=5)
        assert lb(body, "daily")["end"] == "2026-03-10"
        event(api_client, user="b", value=3)
        clock.move_to(at("2026-03-11"))
        body = event(api_client, user="b", value=1)
        assert (lb(body, "daily")["rank"], lb(body, "daily")["end"]) == (1, "2026-03-11")
        assert boards.table("daily") == [("b", 1, 1)]
        assert boards.get("daily")["end"] == "2026-03-11"
        assert boards.table("daily", run="2026-03-10") == [("a", 1, 5), ("b", 2, 3)]
        assert boards.get("daily", run="2026-03-10")["end"] == "2026-03-10"
        assert boards.user("a", "daily")["rank"] is None
        assert boards.user("a", "daily", run="2026-03-10")["rank"] == 1

    def test_weekly_runs_and_reading_by_any_date_in_the_run(self, boards, api_client, clock):
        # 10 March 2026 is a Tuesday; the week starts next Monday.
        created = boards.live("weekly", runUnit="day", runInterval=7, start="2026-03-16")
        assert created["status"] == "scheduled"
        clock.move_to(at("2026-03-16", 0, 30))
        leaderboards_lifecycle(dt.datetime.now(UTC))
        body = event(api_client, value=2)
        assert lb(body, "weekly")["end"] == "2026-03-22"
        clock.move_to(at("2026-03-22", 20))
        event(api_client, value=2)
        clock.move_to(at("2026-03-23", 8))
        body = event(api_client, value=1)
        assert lb(body, "weekly")["end"] == "2026-03-29"
        assert boards.table("weekly") == [("u1", 1, 1)]
        assert boards.table("weekly", run="2026-03-16") == [("u1", 1, 4)]
        assert boards.table("weekly", run="2026-03-19") == [("u1", 1, 4)]
        boards.get("weekly", status=422, run="2026-03-01")  # before the start

    def test_monthly_runs_from_31_january(self, boards, api_client, clock):
        clock.move_to(at("2026-01-31"))
        boards.live("monthly", runUnit="month", runInterval=1)
        assert lb(event(api_client, value=1), "monthly")["end"] == "2026-02-27"
        clock.move_to(at("2026-02-28"))
        assert lb(event(api_client, value=2), "monthly")["end"] == "2026-03-30"
        assert boards.table("monthly", run="2026-01-31") == [("u1", 1, 1)]
        assert boards.table("monthly") == [("u1", 1, 2)]

    def test_runs_are_in_the_users_local_date(self, boards, api_client, clock):
        boards.live("daily", runUnit="day", runInterval=1)
        # 20:00 UTC on the 10th is 09:00 on the 11th in Auckland.
        clock.move_to(at("2026-03-10", 20))
        body = event(api_client, user="kiwi", tz="Pacific/Auckland", value=4)
        assert lb(body, "daily")["end"] == "2026-03-11"
        event(api_client, user="london", tz="Europe/London", value=2)
        assert boards.table("daily", run="2026-03-11") == [("kiwi", 1, 4)]
        assert boards.table("daily", run="2026-03-10") == [("london", 1, 2)]

    def test_the_last_day_counts_in_every_time_zone(self, boards, api_client, clock):
        boards.live(end="2026-03-11")
        # 08:00 UTC on the 12th: still the 11th in Pago Pago (UTC-11), already the 12th in Tokyo.
        clock.move_to(at("2026-03-12", 8))
        assert leaderboards_lifecycle(dt.datetime.now(UTC)) == 0
        assert lb(event(api_client, user="samoa", tz="Pacific/Pago_Pago", value=3))["rank"] == 1
        assert lb(event(api_client, user="tokyo", tz="Asia/Tokyo", value=3)) is None
        assert boards.table() == [("samoa", 1, 3)]

    def test_board_end_caps_the_run_end(self, boards, api_client, clock):
        boards.live("weekly", runUnit="day", runInterval=7, end="2026-03-12")
        assert lb(event(api_client), "weekly")["end"] == "2026-03-12"
        clock.move_to(at("2026-03-13"))
        assert event(api_client)["leaderboards"] == {}  # past the end, not yet finished


# =================================================================================================
# Time windows
# =================================================================================================


class TestTimeWindows:
    def test_window_in_each_users_local_time(self, boards, api_client, clock):
        boards.live(startTime="09:00", endTime="17:00")
        clock.move_to(at("2026-03-10", 1))  # 10:00 in Tokyo, 01:00 in London
        assert lb(event(api_client, user="tokyo", tz="Asia/Tokyo", value=5))["rank"] == 1
        assert lb(event(api_client, user="london", tz="Europe/London", value=5)) is None
        clock.move_to(at("2026-03-10", 9))  # 18:00 in Tokyo, 09:00 in London
        assert lb(event(api_client, user="tokyo", tz="Asia/Tokyo", value=5)) is None
        assert lb(event(api_client, user="london", tz="Europe/London", value=2))["rank"] == 2
        assert boards.table() == [("tokyo", 1, 5), ("london", 2, 2)]

    def test_only_a_start_time(self, boards, api_client, clock):
        boards.live(startTime="18:00")
        clock.move_to(at("2026-03-10", 17, 59))
        assert lb(event(api_client)) is None
        clock.move_to(at("2026-03-10", 18))
        assert lb(event(api_client, value=2))["rank"] == 1
        assert boards.table() == [("u1", 1, 2)]  # activity outside the window never counts

    def test_only_an_end_time(self, boards, api_client, clock):
        boards.live(endTime="08:00")
        clock.move_to(at("2026-03-10", 7, 59))
        assert lb(event(api_client, value=2))["rank"] == 1
        clock.move_to(at("2026-03-10", 8))
        assert lb(event(api_client, value=3)) is None
        assert boards.table() == [("u1", 1, 2)]

    def test_window_wrapping_past_midnight(self, boards, api_client, clock):
        boards.live(startTime="22:00", endTime="02:00")
        for hour, counts in ((21, False), (22, True), (23, True)):
            clock.move_to(at("2026-03-10", hour))
            assert (lb(event(api_client)) is not None) is counts, hour
        for hour, counts in ((0, True), (1, True), (2, False), (12, False)):
            clock.move_to(at("2026-03-11", hour))
            assert (lb(event(api_client)) is not None) is counts, hour
        assert boards.table() == [("u1", 1, 4)]

    def test_window_newcomer_enters_with_window_activity_only(self, boards, api_client, clock):
        boards.live(startTime="09:00", endTime="17:00")
        clock.move_to(at("2026-03-10", 8))
        event(api_client, value=100)  # outside
        clock.move_to(at("2026-03-10", 10))
        event(api_client, value=1)
        assert boards.table() == [("u1", 1, 1)]


# =================================================================================================
# Ranking rules: ties, threshold, cap, breakdowns, participation filters
# =================================================================================================


class TestRanking:
    def test_ties_first_to_reach_wins(self, boards, api_client, clock):
        boards.live()
        clock.move_to(at("2026-03-10", 9))
        event(api_client, user="late", value=5)
        clock.move_to(at("2026-03-10", 8))  # an earlier instant: "early" reached 5 first
        event(api_client, user="early", value=5)
        clock.move_to(at("2026-03-10", 10))
        event(api_client, user="top", value=9)
        assert boards.table() == [("top", 1, 9), ("early", 2, 5), ("late", 3, 5)]

    def test_ties_at_the_same_instant_order_by_user(self, boards, api_client, clock):
        boards.live()
        for user in ("c", "a", "b"):
            event(api_client, user=user, value=5)
        # Same value reached at the same moment: the earlier-created user (lower id) first.
        assert boards.table() == [("c", 1, 5), ("a", 2, 5), ("b", 3, 5)]
        assert [boards.user(u)["rank"] for u in ("c", "a", "b")] == [1, 2, 3]

    def test_reaching_a_value_later_ranks_behind(self, boards, api_client, clock):
        boards.live()
        event(api_client, user="a", value=5)
        clock.move_to(at("2026-03-10", 13))
        event(api_client, user="b", value=3)
        clock.move_to(at("2026-03-10", 14))
        body = event(api_client, user="b", value=2)  # b reaches 5 after a did
        assert (lb(body)["rank"], lb(body)["previousRank"]) == (2, 2)
        assert boards.table() == [("a", 1, 5), ("b", 2, 5)]

    def test_threshold_and_displacement_at_the_cap(self, boards, api_client, clock):
        boards.live(maxParticipants=2)
        assert lb(event(api_client, user="a", value=5))["threshold"] == 0
        body = event(api_client, user="b", value=3)
        assert (lb(body)["rank"], lb(body)["threshold"]) == (2, 3)
        # Equal to the lowest is not enough.
        body = event(api_client, user="c", value=3)
        assert (lb(body)["rank"], lb(body)["previousRank"], lb(body)["threshold"]) == (
            None,
            None,
            3,
        )
        assert boards.table() == [("a", 1, 5), ("b", 2, 3)]
        # c's next event: the whole run's gain (4) beats the lowest and displaces b.
        body = event(api_client, user="c", value=1)
        assert (lb(body)["rank"], lb(body)["threshold"]) == (2, 4)
        assert boards.table() == [("a", 1, 5), ("c", 2, 4)]
        assert boards.user("b")["rank"] is None
        assert boards.user("b")["value"] is None
        # b comes back with their whole gain too (3 + 3 = 6).
        body = event(api_client, user="b", value=3)
        assert lb(body)["rank"] == 1
        assert boards.table() == [("b", 1, 6), ("a", 2, 5)]

    def test_newcomer_counts_the_whole_run_of_a_repeating_board(self, boards, api_client, clock):
        boards.live("daily", runUnit="day", runInterval=1, maxParticipants=1)
        event(api_client, user="a", value=10)
        event(api_client, user="b", value=6)
        clock.move_to(at("2026-03-11"))
        event(api_client, user="a", value=2)
        # Only today's gain counts for b: 3 > 2.
        body = event(api_client, user="b", value=3)
        assert lb(body, "daily")["rank"] == 1
        assert boards.table("daily") == [("b", 1, 3)]

    def test_newcomer_gain_uses_the_users_local_run(self, boards, api_client, clock):
        boards.live("daily", runUnit="day", runInterval=1, maxParticipants=1)
        clock.move_to(at("2026-03-10", 13))  # 02:00 on the 11th in Auckland
        event(api_client, user="a", value=5, tz="Pacific/Auckland")
        event(api_client, user="b", value=4, tz="Pacific/Auckland")
        clock.move_to(at("2026-03-11", 1))  # 14:00 on the 11th in Auckland: same local run
        body = event(api_client, user="b", value=2, tz="Pacific/Auckland")
        assert lb(body, "daily")["rank"] == 1
        assert boards.table("daily", run="2026-03-11") == [("b", 1, 6)]

    def test_cap_of_one(self, boards, api_client, clock):
        boards.live(maxParticipants=1)
        event(api_client, user="a", value=2)
        assert lb(event(api_client, user="b", value=1))["rank"] is None
        assert lb(event(api_client, user="b", value=5))["rank"] == 1
        assert boards.table() == [("b", 1, 6)]

    def test_breakdown_groups_rank_separately_with_a_cap_each(
        self, boards, api_client, region, clock
    ):
        created = boards.live(breakdownAttributes=[str(region.public_id)], maxParticipants=1)
        assert created["breakdownAttributes"] == [str(region.public_id)]
        body = event(api_client, user="eu1", value=5, attrs={"region": "eu"})
        assert lb(body)["rank"] == 1
        assert lb(body)["breakdownAttributeValues"] == [{"key": "region", "value": "eu"}]
        assert lb(body)["breakdownAttributes"] == ["region"]
        assert lb(event(api_client, user="us1", value=1, attrs={"region": "us"}))["rank"] == 1
        assert lb(event(api_client, user="eu2", value=2, attrs={"region": "eu"}))["rank"] is None
        # Users without the attribute do not take part.
        assert lb(event(api_client, user="nowhere", value=50)) is None
        assert boards.table(userAttributes="region:eu") == [("eu1", 1, 5)]
        assert boards.table(userAttributes="region:us") == [("us1", 1, 1)]
        assert boards.table(userAttributes="region:mars") == []
        assert boards.user("us1")["rank"] == 1
        assert boards.user("nowhere")["rank"] is None

    def test_displacement_stays_within_the_group(self, boards, api_client, region, clock):
        boards.live(breakdownAttributes=[str(region.public_id)], maxParticipants=1)
        event(api_client, user="eu1", value=5, attrs={"region": "eu"})
        event(api_client, user="us1", value=1, attrs={"region": "us"})
        body = event(api_client, user="eu2", value=6, attrs={"region": "eu"})
        assert (lb(body)["rank"], lb(body)["threshold"]) == (1, 6)
        assert boards.table(userAttributes="region:eu") == [("eu2", 1, 6)]
        assert boards.table(userAttributes="region:us") == [("us1", 1, 1)]

    def test_breakdown_query_needs_user_attributes(self, boards, api_client, region, clock):
        boards.live(breakdownAttributes=[str(region.public_id)])
        boards.get(status=422)
        boards.get(status=422, userAttributes="plan:pro")
        boards.get(status=422, userAttributes="garbage")

    def test_user_attributes_only_valid_on_breakdown_boards(self, boards, clock):
        boards.live()
        boards.get(status=422, userAttributes="region:eu")

    def test_two_breakdown_attributes(self, boards, api_client, region, plan, clock):
        boards.live(breakdownAttributes=[str(region.public_id), str(plan.public_id)])
        body = event(api_client, user="a", value=3, attrs={"region": "eu", "plan": "pro"})
        assert sorted((kv["key"], kv["value"]) for kv in lb(body)["breakdownAttributeValues"]) == [
            ("plan", "pro"),
            ("region", "eu"),
        ]
        event(api_client, user="b", value=4, attrs={"region": "eu", "plan": "free"})
        assert lb(event(api_client, user="c", value=4, attrs={"region": "eu"})) is None
        assert boards.table(userAttributes="plan:pro,region:eu") == [("a", 1, 3)]
        assert boards.table(userAttributes="region:eu,plan:free") == [("b", 1, 4)]
        boards.get(status=422, userAttributes="region:eu")

    def test_participation_filter(self, boards, api_client, plan, clock):
        created = boards.live(userAttributes=[ref(plan, "pro")])
        assert created["userAttributes"] == [ref(plan, "pro")]
        assert boards.listing()[0]["userAttributes"] == [{"key": "plan", "value": "pro"}]
        assert lb(event(api_client, user="pro", value=2, attrs={"plan": "pro"}))["rank"] == 1
        assert lb(event(api_client, user="free", value=9, attrs={"plan": "free"})) is None
        assert lb(event(api_client, user="anon", value=9)) is None
        assert boards.table() == [("pro", 1, 2)]


# =================================================================================================
# Reading: pages, userId centring, a user's rank and history
# =================================================================================================


class TestReading:
    @pytest.fixture
    def five(self, boards, api_client, clock):
        boards.live()
        for i, value in enumerate([50, 40, 30, 20, 10], start=1):
            event(api_client, user=f"u{i}", value=value, name=f"User {i}")
        return boards

    def test_pages(self, five):
        page = five.get()
        assert [r["userId"] for r in page["rankings"]] == ["u1", "u2", "u3", "u4", "u5"]
        assert page["rankings"][0] == {"userId": "u1", "userName": "User 1", "rank": 1, "value": 50}
        assert five.table(offset=1, limit=2) == [("u2", 2, 40), ("u3", 3, 30)]
        assert five.table(offset=10) == []
        assert five.get(limit=0)["rankings"] == []
        five.get(status=422, offset=-1)
        five.get(status=422, limit="x")
        five.get(status=422, run="not-a-date")

    def test_user_id_centres_the_page(self, five):
        assert five.table(userId="u3", limit=2) == [("u3", 3, 30), ("u4", 4, 20)]
        assert five.table(userId="u3", offset=1, limit=2) == [("u4", 4, 20), ("u5", 5, 10)]
        assert five.get(userId="stranger")["rankings"] == []

    def test_user_rank_and_history(self, five, api_client, clock):
        clock.move_to(at("2026-03-10", 23))
        assert leaderboards_snapshots(dt.datetime.now(UTC)) == 5
        clock.move_to(at("2026-03-11", 12))
        event(api_client, user="u5", value=100)
        clock.move_to(at("2026-03-11", 23))
        leaderboards_snapshots(dt.datetime.now(UTC))
        body = five.user("u5")
        assert (body["rank"], body["value"], body["key"]) == (1, 110, "top")
        assert body["history"] == [
            {
                "date": "2026-03-11",
                "timestamp": "2026-03-11T00:00:00Z",
                "previousRank": 5,
                "rank": 1,
                "previousValue": 10,
                "value": 110,
            },
            {
                "date": "2026-03-10",
                "timestamp": "2026-03-10T00:00:00Z",
                "previousRank": None,
                "rank": 5,
                "previousValue": None,
                "value": 10,
            },
        ]
        assert len(five.user("u5", numEvents=1)["history"]) == 1
        assert five.user("u5", numEvents=0)["history"] == []
        five.user("u5", status=422, numEvents=101)

    def test_user_not_on_the_board(self, five, api_client, tenant):
        MetricFactory(tenant=tenant, key="logins")
        bump(tenant)
        event(api_client, user="late", key="logins")
        five.user("late")  # exists: rank null
        assert (five.user("late")["rank"], five.user("late")["value"]) == (None, None)
        five.user("ghost", status=404)


# =================================================================================================
# Query counts
# =================================================================================================


def queries(func: Any, *args: Any, **kwargs: Any) -> tuple[int, Any]:
    with CaptureQueriesContext(connection) as ctx:
        result = func(*args, **kwargs)
    return len(ctx.captured_queries), result


class TestQueryCount:
    def _baseline(self, api_client):
        event(api_client, user="base")
        return queries(event, api_client, user="base")[0]

    def test_event_with_one_and_five_boards_is_bounded(
        self, boards, api_client, tenant, region, clock
    ):
        without = self._baseline(api_client)
        boards.live("b0")
        event(api_client, user="u0")
        one, body = queries(event, api_client, user="u0")
        assert set(body["leaderboards"]) == {"b0"}
        assert one - without <= 8, (one, without)
        boards.live("b1", runUnit="day", runInterval=1)
        boards.live("b2", maxParticipants=3)
        boards.live("b3", breakdownAttributes=[str(region.public_id)])
        boards.live("b4", startTime="00:00", endTime="23:59")
        event(api_client, user="u0", value=100, attrs={"region": "eu"})
        for i in range(3):  # b2 is full from here on
            event(api_client, user=f"other-{i}", value=i, attrs={"region": "eu"})
        five, body = queries(event, api_client, user="u0")
        assert set(body["leaderboards"]) == {"b0", "b1", "b2", "b3", "b4"}
        assert five - without <= 5 * 8, (five, without)
        for i in range(3, 30):
            event(api_client, user=f"other-{i}", value=i, attrs={"region": "eu"})
        later, body = queries(event, api_client, user="u0")
        assert set(body["leaderboards"]) == {"b0", "b1", "b2", "b3", "b4"}
        assert later == five

    def test_rankings_page_and_user_rank_do_not_grow(self, boards, api_client, clock):
        boards.live()
        for i in range(3):
            event(api_client, user=f"u{i}", value=i + 1)
        page_small, _ = queries(boards.get, limit=50)
        centred_small, _ = queries(boards.get, userId="u1", limit=5)
        user_small, _ = queries(boards.user, "u1")
        for i in range(3, 40):
            event(api_client, user=f"u{i}", value=i + 1)
        page_big, page = queries(boards.get, limit=50)
        centred_big, _ = queries(boards.get, userId="u1", limit=5)
        user_big, _ = queries(boards.user, "u1")
        assert len(page["rankings"]) == 40
        assert page_big == page_small <= 6
        assert centred_big == centred_small <= 7
        assert user_big == user_small <= 8
