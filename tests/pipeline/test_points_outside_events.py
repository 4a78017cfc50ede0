"""Points paid outside an event — identify's user_creation, an API completion, an anniversary
completion, a time trigger — count like an event's: the points boards move with them and
webhooks are told (points.changed, leaderboard.rank_changed). Before, only events moved the
boards, so a user's board value fell behind their balance for good, and the anniversary job
paid no achievement-trigger points at all. Each test runs with both rank stores."""

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine

from apps.pipeline.jobs import achievements_anniversaries_job, points_time_triggers_job
from apps.webhooks.models import WebhookEvent

pytestmark = pytest.mark.usefixtures("rank_store")

UTC = dt.UTC
NOON = dt.datetime(2026, 3, 10, 12, tzinfo=UTC)


@pytest.fixture
def clock() -> Iterator[Any]:
    with time_machine.travel(NOON, tick=False) as traveller:
        yield traveller


class Setup:
    def __init__(self, client: Any, metric: Any) -> None:
        self.client = client
        self.metric = metric
        response = client.post("/admin/v1/points", [{"name": "XP", "key": "xp"}])
        assert response.status_code == 201, response.content
        self.system_id = response.json()["created"][0]["id"]
        self.post(
            "/admin/v1/leaderboards",
            name="XP board",
            key="xp-board",
            rankBy="points",
            pointsSystemId=self.system_id,
            status="active",
        )

    def post(self, path: str, **item: Any) -> dict[str, Any]:
        response = self.client.post(path, [item])
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["issues"] == [], body
        return body["created"][0]

    def trigger(self, **item: Any) -> None:
        self.post(f"/admin/v1/points/{self.system_id}/triggers", status="active", **item)

    def per_word(self, points: int) -> None:
        self.trigger(
            type="metric", points=points, metricId=str(self.metric.public_id), metricThreshold=1
        )

    def achievement(self, name: str, **item: Any) -> str:
        created = self.post("/admin/v1/achievements", name=name, status="active", **item)
        self.trigger(type="achievement", points=100, achievementId=created["id"])
        return str(created["id"])

    def listen(self, settings: Any) -> None:
        settings.WEBHOOK_ALLOW_HTTP = True
        settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
        self.post(
            "/admin/v1/webhooks",
            url="http://127.0.0.1:9/hooks",
            events=["points.changed", "leaderboard.rank_changed"],
        )

    def event(self, user: str = "u1", value: int = 1) -> None:
        response = self.client.post(
            "/v1/metrics/words/event", {"user": {"id": user, "tz": "UTC"}, "value": value}
        )
        assert response.status_code == 201, response.content

    def board(self) -> list[tuple[str, int, int]]:
        response = self.client.get("/v1/leaderboards/xp-board", {"limit": 100})
        assert response.status_code == 200, response.content
        return [(r["userId"], r["rank"], r["value"]) for r in response.json()["rankings"]]

    def total(self, user: str = "u1") -> int:
        response = self.client.get(f"/v1/users/{user}/points/xp")
        assert response.status_code == 200, response.content
        return int(response.json()["total"])


@pytest.fixture
def xp(api_client: Any, metric: Any, clock: Any) -> Setup:
    return Setup(api_client, metric)


def told() -> list[str]:
    return list(WebhookEvent.objects.order_by("pk").values_list("type", flat=True))


def test_an_api_completion_moves_the_points_board(xp, settings):
    xp.per_word(10)
    xp.achievement("Hello", key="hello", trigger="api")
    xp.event("u1")
    xp.event("u2", value=3)
    assert xp.board() == [("u2", 1, 30), ("u1", 2, 10)]
    xp.listen(settings)

    response = xp.client.post("/v1/achievements/hello/complete", {"user": {"id": "u1"}})

    assert response.status_code == 201, response.content
    assert response.json()["points"]["xp"]["added"] == 100
    assert xp.total("u1") == 110
    assert xp.board() == [("u1", 1, 110), ("u2", 2, 30)]
    assert told() == ["points.changed", "leaderboard.rank_changed"]
    # The board goes on from there: the next event adds to what the completion left.
    xp.event("u1")
    assert xp.board() == [("u1", 1, 120), ("u2", 2, 30)]


def test_a_time_trigger_moves_the_points_board(xp, settings, clock):
    xp.per_word(10)
    xp.trigger(type="time", points=1000, timeUnit="hours", timeInterval=1)
    xp.event("u1")
    xp.listen(settings)
    later = NOON + dt.timedelta(hours=1, minutes=30)
    clock.move_to(later)

    assert points_time_triggers_job(later) == 1

    assert xp.total("u1") == 1010
    assert xp.board() == [("u1", 1, 1010)]
    assert told() == ["points.changed"]  # the rank did not change
    # Paid once: a second run finds nothing due.
    assert points_time_triggers_job(later) == 0
    assert xp.board() == [("u1", 1, 1010)]


def test_the_anniversary_job_pays_achievement_points_and_moves_the_board(xp, settings, clock):
    xp.per_word(10)
    xp.achievement("One year", trigger="anniversary", anniversaryYears=1)
    response = xp.client.put("/v1/users/u1", {"tz": "UTC", "signUpDate": "2025-03-11"})
    assert response.status_code == 200, response.content
    xp.event("u1")
    xp.listen(settings)
    anniversary = dt.datetime(2026, 3, 11, 0, 30, tzinfo=UTC)
    clock.move_to(anniversary)

    assert achievements_anniversaries_job(anniversary) == 1

    assert xp.total("u1") == 110
    assert xp.board() == [("u1", 1, 110)]
    assert "points.changed" in told()


def test_identify_puts_a_new_user_on_the_points_board_with_their_creation_points(xp, settings):
    xp.trigger(type="user_creation", points=5)
    xp.per_word(10)
    xp.event("u2", value=2)
    xp.listen(settings)

    response = xp.client.put("/v1/users/u1", {"tz": "UTC"})

    assert response.status_code == 200, response.content
    assert xp.board() == [("u2", 1, 25), ("u1", 2, 5)]
    assert told() == ["points.changed", "leaderboard.rank_changed"]
    xp.event("u1")
    assert xp.board() == [("u2", 1, 25), ("u1", 2, 15)]


def test_an_api_completion_that_creates_its_user_puts_them_on_the_board(xp, settings):
    xp.per_word(10)
    xp.achievement("Hello", key="hello", trigger="api")
    xp.event("u2", value=3)
    xp.listen(settings)

    response = xp.client.post(
        "/v1/achievements/hello/complete", {"user": {"id": "newcomer", "tz": "UTC"}}
    )

    assert response.status_code == 201, response.content
    assert xp.board() == [("newcomer", 1, 100), ("u2", 2, 30)]
    assert told() == ["points.changed", "leaderboard.rank_changed"]


def bodies(type: str) -> list[dict[str, Any]]:
    import json

    rows = WebhookEvent.objects.filter(type=type).order_by("pk").values_list("body", flat=True)
    return [json.loads(body) for body in rows]


def test_payloads_of_points_paid_outside_an_event_carry_what_was_paid(xp, settings, clock):
    # The payloads are built from the facts these producers fill (apps/webhooks/payloads.py),
    # not read back: they show what a read of the user's points and the board shows.
    xp.per_word(10)
    xp.trigger(type="time", points=1000, timeUnit="hours", timeInterval=1)
    xp.achievement("Hello", key="hello", trigger="api")
    xp.event("u2", value=5)
    xp.event("u1")
    xp.listen(settings)

    response = xp.client.post("/v1/achievements/hello/complete", {"user": {"id": "u1"}})
    assert response.status_code == 201, response.content
    later = NOON + dt.timedelta(hours=1, minutes=30)
    clock.move_to(later)
    assert points_time_triggers_job(later) == 2

    read = xp.client.get("/v1/users/u1/points/xp").json()
    [*_, completion, timed] = [b for b in bodies("points.changed") if b["user"]["id"] == "u1"]
    assert (completion["points"]["added"], completion["points"]["total"]) == (100, 110)
    assert [a["awarded"] for a in completion["points"]["awards"]] == [100]
    assert completion["points"]["awards"][0]["trigger"]["type"] == "achievement"
    assert (timed["points"]["added"], timed["points"]["total"]) == (1000, read["total"])
    assert [a["trigger"]["type"] for a in timed["points"]["awards"]] == ["time"]
    # The completion puts u1 first; the time job pays u2 (first again), then u1.
    ranks = [(b["user"]["id"], b["leaderboard"]) for b in bodies("leaderboard.rank_changed")]
    assert [(u, r["key"], r["rank"], r["previousRank"], r["value"]) for u, r in ranks] == [
        ("u1", "xp-board", 1, 2, 110),
        ("u2", "xp-board", 1, 2, 1050),
        ("u1", "xp-board", 1, 2, 1110),
    ]
    assert xp.board() == [("u1", 1, 1110), ("u2", 2, 1050)]
