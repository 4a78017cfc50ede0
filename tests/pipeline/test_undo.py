"""Undoing events (POST /admin/ext/v1/events/undo, apps/pipeline/undo.py): each effect set
right exactly, on both rank stores; twice is once; a retry of an undone event's idempotency key
counts nothing; another tenant's events are not found."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from apps.achievements.models import AchievementCompletion
from apps.leaderboards.models import LeaderboardEntry
from apps.leagues.models import LeagueEntry
from apps.metrics.models import MetricDailyChange, MetricTotal, UndoneEvent
from apps.points.models import PointsAward, PointsTotal, PointsTriggerMark
from apps.webhooks.models import WebhookEvent
from tests.leagues.test_weeks_and_cohorts import MONDAY, league_of

pytestmark = pytest.mark.usefixtures("rank_store")

URL = "/admin/ext/v1/events/undo"


class Setup:
    """Words earn 10 XP per 5 words; levels at 10 (silver) and 20 (gold); a finisher
    achievement at 10 words paying 100 XP; a words board and an XP board."""

    def __init__(self, client: Any, metric: Any) -> None:
        self.client, self.metric = client, metric
        self.system_id = self.post("/admin/v1/points", name="XP", key="xp")["id"]
        self.post(
            f"/admin/v1/points/{self.system_id}/triggers",
            type="metric",
            points=10,
            metricId=str(metric.public_id),
            metricThreshold=5,
            status="active",
        )
        for key, points in (("silver", 10), ("gold", 20)):
            self.post(f"/admin/v1/points/{self.system_id}/levels", key=key, name=key, points=points)
        self.finisher = self.post(
            "/admin/v1/achievements",
            name="Finisher",
            trigger="metric",
            metricId=str(metric.public_id),
            metricValue=10,
            status="active",
        )["id"]
        self.post(
            f"/admin/v1/points/{self.system_id}/triggers",
            type="achievement",
            points=100,
            achievementId=self.finisher,
            status="active",
        )
        for key, rank_by, ref in (
            ("words", "metric", {"metricId": str(metric.public_id)}),
            ("xp-board", "points", {"pointsSystemId": self.system_id}),
        ):
            self.post(
                "/admin/v1/leaderboards", name=key, key=key, rankBy=rank_by, status="active", **ref
            )

    def post(self, path: str, **item: Any) -> dict[str, Any]:
        response = self.client.post(path, [item])
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["issues"] == [], body
        return body["created"][0]

    def send(self, user: str, value: Any, key: str | None = None) -> dict[str, Any]:
        headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
        response = self.client.post(
            f"/v1/metrics/{self.metric.key}/event",
            {"user": {"id": user}, "value": value},
            **headers,
        )
        assert response.status_code in (201, 202), response.content
        return response.json()

    def undo(self, status: int = 200, **body: Any) -> dict[str, Any]:
        response = self.client.post(URL, {"reason": "cheating", **body})
        assert response.status_code == status, response.content
        return response.json()

    def ranking(self, key: str) -> list[tuple[str, float]]:
        body = self.client.get(f"/v1/leaderboards/{key}").json()
        return [(r["userId"], r["value"]) for r in body["rankings"]]

    def xp(self, user: str) -> tuple[int, str | None]:
        row = PointsTotal.objects.select_related("level").get(user__external_id=user)
        return row.total, row.level.key if row.level else None


def total(user: str) -> Decimal:
    return MetricTotal.objects.get(user__external_id=user).total


@pytest.fixture
def setup(api_client: Any, metric: Any) -> Setup:
    with time_machine.travel(MONDAY - dt.timedelta(hours=1), tick=True):
        return Setup(api_client, metric)


@pytest.mark.parametrize("revoke", [True, False])
def test_undo_takes_back_totals_rollups_points_levels_and_ranks(setup: Setup, revoke: bool) -> None:
    with time_machine.travel(MONDAY, tick=True):
        setup.send("ann", 6)  # 6 words: 10 XP (silver)
        bad = setup.send("ann", 6)["eventId"]  # 12 words: 10 XP + finisher: 100 XP (gold)
        setup.send("bob", 8)  # 10 XP
        assert setup.xp("ann") == (120, "gold")
        assert setup.ranking("words") == [("ann", 12), ("bob", 8)]
        assert setup.ranking("xp-board") == [("ann", 120), ("bob", 10)]

        body = setup.undo(eventIds=[bad], revokeAchievements=revoke)

    assert [e["eventId"] for e in body["undone"]] == [bad]
    assert body["issues"] == []
    [user] = body["users"]
    assert user["metricTotals"] == {"words": 6}
    assert total("ann") == 6
    day = MetricDailyChange.objects.get(user__external_id="ann")
    assert (day.change, day.events) == (6, 1)
    # The metric trigger's second multiple is taken back (a reversing award, never deleted).
    assert PointsTriggerMark.objects.get(user__external_id="ann", trigger__type="metric").mark == 1
    awards = list(
        PointsAward.objects.filter(user__external_id="ann")
        .order_by("pk")
        .values_list("awarded", flat=True)
    )
    if revoke:
        assert sorted(awards) == [-100, -10, 10, 10, 100]
        assert setup.xp("ann") == (10, "silver")
        assert user["revokedAchievements"] == [setup.finisher]
        assert not AchievementCompletion.objects.filter(user__external_id="ann").exists()
        assert user["points"] == [{"system": "xp", "change": -110, "total": 10, "level": "silver"}]
        assert setup.ranking("xp-board") == [("bob", 10), ("ann", 10)]
    else:
        assert sorted(awards) == [-10, 10, 10, 100]
        assert setup.xp("ann") == (110, "gold")
        assert user["revokedAchievements"] == []
        assert AchievementCompletion.objects.filter(user__external_id="ann").exists()
        assert setup.ranking("xp-board") == [("ann", 110), ("bob", 10)]
    assert setup.ranking("words") == [("bob", 8), ("ann", 6)]


def test_undoing_twice_does_nothing_and_a_retry_counts_nothing(setup: Setup) -> None:
    with time_machine.travel(MONDAY, tick=True):
        setup.send("ann", 5)
        setup.send("ann", 5, key="k-1")
        first = setup.undo(idempotencyKeys=[{"userId": "ann", "idempotencyKey": "k-1"}])
        assert len(first["undone"]) == 1
        again = setup.undo(idempotencyKeys=[{"userId": "ann", "idempotencyKey": "k-1"}])
        event_id = first["undone"][0]["eventId"]
        by_id = setup.undo(eventIds=[event_id])
        retried = setup.send("ann", 5, key="k-1")
    assert again["undone"] == []
    assert again["users"] == []
    assert [i["severity"] for i in again["issues"]] == ["warning"]
    assert by_id["issues"][0]["id"] == event_id
    assert by_id["undone"] == []
    assert retried["eventId"] == event_id
    assert total("ann") == 5
    assert setup.xp("ann") == (110, "gold")  # the finisher kept (revokeAchievements false)
    assert UndoneEvent.objects.count() == 1
    assert setup.ranking("words") == [("ann", 5)]


def test_reaching_an_undone_multiple_again_pays_again(setup: Setup) -> None:
    with time_machine.travel(MONDAY, tick=True):
        bad = setup.send("ann", 5)["eventId"]
        setup.undo(eventIds=[bad])
        assert setup.xp("ann") == (0, None)
        setup.send("ann", 5)
    assert setup.xp("ann") == (10, "silver")
    assert total("ann") == 5


def test_a_range_undoes_all_of_one_users_events_in_it(setup: Setup) -> None:
    with time_machine.travel(MONDAY, tick=False) as clock:
        setup.send("ann", 3)
        clock.shift(dt.timedelta(hours=1))
        setup.send("ann", 4)
        setup.send("bob", 4)
        clock.shift(dt.timedelta(hours=1))
        setup.send("ann", 2)
        since = (MONDAY + dt.timedelta(minutes=30)).isoformat()
        until = (MONDAY + dt.timedelta(minutes=90)).isoformat()
        body = setup.undo(userId="ann", since=since, until=until)
    assert [e["value"] for e in body["undone"]] == [4]
    assert total("ann") == 5
    assert total("bob") == 4
    # 7 words had paid one multiple; 5 still reach it.
    assert setup.xp("ann") == (10, "silver")


def test_a_straddling_award_is_replaced_by_what_is_still_reached(setup: Setup) -> None:
    with time_machine.travel(MONDAY, tick=True):
        bad = setup.send("ann", 3)["eventId"]  # no multiple yet
        setup.send("ann", 9)  # 12 words: multiples 1 and 2 in one award (20)
        body = setup.undo(eventIds=[bad], revokeAchievements=False)
    # Without it, 9 words: one multiple still reached. The 20 is taken back whole and the
    # one multiple paid again under its own key.
    assert total("ann") == 9
    assert body["users"][0]["points"][0]["change"] == -10
    awards = PointsAward.objects.filter(user__external_id="ann", trigger__type="metric")
    assert sorted(awards.values_list("awarded", "dedupe_key")) == [
        (-20, f"undo:{awards.get(awarded=20).public_id}"),
        (10, f"metric:{awards.get(awarded=10).trigger_id}:1"),
        (20, f"metric:{awards.get(awarded=20).trigger_id}:2~undone:{body['users'][0]['undoId']}"),
    ]
    assert setup.xp("ann") == (10 + 100, "gold")  # the finisher's points kept


def test_a_league_week_loses_the_undone_events(api_client: Any, tenant: Any, metric: Any) -> None:
    league_of(tenant, metric)
    setup = Setup.__new__(Setup)
    setup.client, setup.metric = api_client, metric
    with time_machine.travel(MONDAY, tick=True):
        setup.send("ann", 4)
        bad = setup.send("ann", 9)["eventId"]
        setup.undo(eventIds=[bad])
    assert LeagueEntry.objects.get(user__external_id="ann").score == 4


def test_bad_input_is_refused_and_unknown_or_foreign_events_are_issues(
    setup: Setup, other_tenant_client: Any
) -> None:
    with time_machine.travel(MONDAY, tick=True):
        mine = setup.send("ann", 5)["eventId"]
    assert setup.undo(422, eventIds=["not-a-uuid"])["error"]
    assert setup.undo(422)["error"]
    assert setup.undo(422, eventIds=[mine], userId="ann")["error"]
    assert setup.undo(422, userId="ann", since="2026-01-02T00:00:00Z", until="2026-01-01T00:00:00Z")
    assert setup.client.post(URL, {"eventIds": [mine]}).status_code == 422  # no reason
    assert setup.client.post(URL, [1]).status_code == 422
    foreign = other_tenant_client.post(URL, {"eventIds": [mine], "reason": "x"})
    assert foreign.status_code == 200
    assert foreign.json()["issues"][0]["id"] == mine
    assert foreign.json()["undone"] == []
    assert total("ann") == 5


def test_webhooks_hear_the_points_and_rank_changes(setup: Setup, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_HTTP = True
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    setup.post(
        "/admin/v1/webhooks",
        url="http://127.0.0.1:9/hooks",
        events=["points.changed", "leaderboard.rank_changed"],
    )
    with time_machine.travel(MONDAY, tick=True):
        setup.send("bob", 6)
        bad = setup.send("ann", 7)["eventId"]
        before = WebhookEvent.objects.count()
        setup.undo(eventIds=[bad])
    kinds = list(WebhookEvent.objects.order_by("pk").values_list("type", flat=True)[before:])
    assert "points.changed" in kinds
    assert "leaderboard.rank_changed" in kinds


def test_undo_is_recorded_with_who_and_why(setup: Setup) -> None:
    with time_machine.travel(MONDAY, tick=True):
        bad = setup.send("ann", 5)["eventId"]
        setup.undo(eventIds=[bad])
    row = UndoneEvent.objects.get()
    assert (row.reason, row.actor_kind, row.revoke_achievements) == ("cheating", "api_key", False)
    assert str(row.event.public_id) == bad


def test_entries_stay_exact_in_the_rank_store(setup: Setup) -> None:
    with time_machine.travel(MONDAY, tick=True):
        for user, value in (("a", 3), ("b", 5), ("c", 4)):
            setup.send(user, value)
        bad = setup.send("a", 4)["eventId"]  # a: 7, first
        assert setup.ranking("words")[0] == ("a", 7)
        setup.undo(eventIds=[bad])
        assert setup.ranking("words") == [("b", 5), ("c", 4), ("a", 3)]
    assert LeaderboardEntry.objects.get(user__external_id="a", leaderboard__key="words").value == 3


def test_a_batch_retry_of_an_undone_events_key_counts_nothing(
    setup: Setup, django_capture_on_commit_callbacks: Any
) -> None:
    with time_machine.travel(MONDAY, tick=True):
        setup.send("ann", 5, key="k-1")
        setup.undo(idempotencyKeys=[{"userId": "ann", "idempotencyKey": "k-1", "metric": "words"}])
        body = [{"key": "words", "user": {"id": "ann"}, "value": 5, "idempotencyKey": "k-1"}]
        with django_capture_on_commit_callbacks(execute=True):
            assert setup.client.post("/admin/v1/metrics/events", body).status_code == 202
    assert total("ann") == 0
    assert setup.xp("ann") == (0, None)
    assert setup.ranking("words") == [("ann", 0)]


def test_an_application_key_may_not_undo(setup: Setup, org: Any) -> None:
    from tests.conftest import Client

    with time_machine.travel(MONDAY, tick=True):
        mine = setup.send("ann", 5)["eventId"]
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.application_key("ann"))
    response = client.post(URL, {"eventIds": [mine], "reason": "mine"})
    assert response.status_code == 403
    assert total("ann") == 5


def test_a_points_league_week_loses_the_reversed_points(
    setup: Setup, tenant: Any, metric: Any
) -> None:
    from apps.leagues.choices import ScoreBy

    with time_machine.travel(MONDAY - dt.timedelta(minutes=30), tick=True):
        league_of(
            tenant,
            metric,
            score_by=ScoreBy.POINTS,
            metric_id=None,
            points_system_id=setup.system_id,
        )
    with time_machine.travel(MONDAY, tick=True):
        setup.send("ann", 6)  # 10 XP
        bad = setup.send("ann", 6)["eventId"]  # 10 XP and the finisher's 100
        assert LeagueEntry.objects.get(user__external_id="ann").score == 120
        setup.undo(eventIds=[bad], revokeAchievements=True)
    assert LeagueEntry.objects.get(user__external_id="ann").score == 10
