"""Undoing events shortens or loses the current streak as if they never came (daily streak,
threshold 1, in the user's own time zone), and the streak board follows."""

import datetime as dt
import json
from typing import Any

import pytest
import time_machine

from apps.leaderboards.models import LeaderboardEntry
from apps.streaks.models import StreakPeriod, StreakState
from tests.streaks.test_streak_api import at, configure, streak

pytestmark = pytest.mark.usefixtures("rank_store")

URL = "/admin/ext/v1/events/undo"


@pytest.fixture
def daily(api_client: Any, metric: Any) -> Any:
    configure(api_client, frequency="daily", metrics=[{"key": "words", "threshold": 2}])
    with time_machine.travel(at("2026-03-01"), tick=False):
        item = {"name": "Streaks", "key": "streaks", "rankBy": "streak", "status": "active"}
        assert api_client.post("/admin/v1/leaderboards", [item]).status_code == 201
    return api_client


def event_id(client: Any, when: dt.datetime, value: int = 2, **user: Any) -> str:
    with time_machine.travel(when, tick=False):
        body = {"user": {"id": "u1", **user}, "value": value}
        response = client.post("/v1/metrics/words/event", body)
    assert response.status_code == 201, response.content
    return str(response.json()["eventId"])


def undo(client: Any, when: dt.datetime, *ids: str) -> dict[str, Any]:
    with time_machine.travel(when, tick=False):
        response = client.post(URL, {"eventIds": list(ids), "reason": "test"})
    assert response.status_code == 200, response.content
    return response.json()


def board_value(user: str = "u1") -> float:
    return float(LeaderboardEntry.objects.get(user__external_id=user).value)


def test_undoing_a_middle_day_restarts_the_streak_after_it(daily: Any) -> None:
    ids = [event_id(daily, at(f"2026-03-{d:02}")) for d in (10, 11, 12, 13)]
    assert streak(daily, at("2026-03-13", 13))["length"] == 4
    body = undo(daily, at("2026-03-13", 14), ids[1])
    assert body["users"][0]["streak"] == 2
    after = streak(daily, at("2026-03-13", 15))
    assert (after["length"], after["started"]) == (2, "2026-03-12")
    march_11 = StreakPeriod.objects.get(period_start=dt.date(2026, 3, 11))
    assert (march_11.extended, march_11.length) == (False, 0)
    assert StreakPeriod.objects.get(period_start=dt.date(2026, 3, 13)).length == 2
    assert board_value() == 2


def test_a_day_still_met_by_other_events_keeps_counting(daily: Any) -> None:
    event_id(daily, at("2026-03-10"))
    first = event_id(daily, at("2026-03-11", 9))
    event_id(daily, at("2026-03-11", 10), value=5)
    body = undo(daily, at("2026-03-11", 11), first)
    assert body["users"][0]["streak"] is None
    assert streak(daily, at("2026-03-11", 12))["length"] == 2


def test_undoing_today_leaves_yesterday_and_today_still_open(daily: Any) -> None:
    event_id(daily, at("2026-03-10"))
    today = event_id(daily, at("2026-03-11"))
    undo(daily, at("2026-03-11", 13), today)
    view = streak(daily, at("2026-03-11", 14))
    assert (view["length"], view["extended"]) == (1, "2026-03-10T12:00:00Z")
    assert board_value() == 1
    event_id(daily, at("2026-03-11", 15))  # acting again today extends it again
    assert streak(daily, at("2026-03-11", 16))["length"] == 2


def test_undoing_yesterday_loses_the_streak_as_a_missed_day_would(daily: Any) -> None:
    event_id(daily, at("2026-03-09"))
    yesterday = event_id(daily, at("2026-03-10"))
    undo(daily, at("2026-03-11", 9), yesterday)
    assert streak(daily, at("2026-03-11", 10))["length"] == 0


def test_undoing_the_only_day_ends_the_streak(daily: Any) -> None:
    only = event_id(daily, at("2026-03-10"))
    body = undo(daily, at("2026-03-10", 13), only)
    assert body["users"][0]["streak"] == 0
    assert StreakState.objects.get().length == 0
    assert board_value() == 0


def test_the_day_is_the_users_local_date_when_the_event_came(daily: Any) -> None:
    # 23:30 in Auckland on the 11th is 10:30 UTC on the 11th; 01:00 there on the 12th is
    # 12:00 UTC on the 11th: two local days, one UTC day.
    tz = {"tz": "Pacific/Auckland"}
    first = event_id(daily, dt.datetime(2026, 3, 11, 10, 30, tzinfo=dt.UTC), **tz)
    event_id(daily, dt.datetime(2026, 3, 11, 12, 0, tzinfo=dt.UTC), **tz)
    assert streak(daily, dt.datetime(2026, 3, 11, 12, 5, tzinfo=dt.UTC))["length"] == 2
    undo(daily, dt.datetime(2026, 3, 11, 12, 10, tzinfo=dt.UTC), first)
    view = streak(daily, dt.datetime(2026, 3, 11, 12, 15, tzinfo=dt.UTC))
    assert (view["length"], view["started"]) == (1, "2026-03-12")


def test_a_streak_undone_to_zero_is_told_as_lost(daily: Any, settings: Any) -> None:
    from apps.webhooks.models import WebhookEvent

    settings.WEBHOOK_ALLOW_HTTP = True
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    endpoint = {"url": "http://127.0.0.1:9/hooks", "events": ["streak.lost"]}
    assert daily.post("/admin/v1/webhooks", [endpoint]).status_code == 201
    only = event_id(daily, at("2026-03-10"))
    undo(daily, at("2026-03-10", 13), only)
    lost = json.loads(WebhookEvent.objects.get(type="streak.lost").body)
    assert (lost["user"]["id"], lost["length"]) == ("u1", 1)
