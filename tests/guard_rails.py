"""The configuration the guard-rail tests share (issue 27), made through the admin API as a
customer would: metrics, a metric achievement, live leaderboards, a points system paying for a
metric, streak conditions; leagues through their configuration service."""

from typing import Any

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from apps.leaderboards.models import Leaderboard
from apps.leagues.choices import ScoreBy, Status
from apps.leagues.configuration import league_create
from apps.leagues.domain import LeagueSettings
from apps.leagues.models import League
from apps.metrics.models import Metric
from apps.points.models import PointsSystem


def created(response: Any) -> dict[str, Any]:
    body = response.json()
    assert response.status_code == 201, body
    assert body["issues"] == [], body
    return body["created"][0]


def metric_of(client: Any, key: str, name: str) -> Metric:
    item = created(client.post("/admin/v1/metrics", [{"key": key, "name": name}]))
    return Metric.objects.get(public_id=item["id"])


def achievement_of(client: Any, metric: Metric, name: str) -> Achievement:
    item = {
        "name": name,
        "trigger": "metric",
        "metricId": str(metric.public_id),
        "metricValue": 1,
        "status": "active",
    }
    return Achievement.objects.get(
        public_id=created(client.post("/admin/v1/achievements", [item]))["id"]
    )


def board_of(
    client: Any, metric: Metric | None, name: str, key: str, system: PointsSystem | None = None
) -> Leaderboard:
    item: dict[str, Any] = {"name": name, "key": key, "status": "active"}
    if system is not None:
        item.update(rankBy="points", pointsSystemId=str(system.public_id))
    else:
        assert metric is not None
        item.update(rankBy="metric", metricId=str(metric.public_id))
    return Leaderboard.objects.get(
        public_id=created(client.post("/admin/v1/leaderboards", [item]))["id"]
    )


def system_of(client: Any, metric: Metric, key: str, name: str) -> PointsSystem:
    trigger = {
        "type": "metric",
        "points": 10,
        "metricId": str(metric.public_id),
        "metricThreshold": 1,
        "status": "active",
    }
    item = {"key": key, "name": name, "triggers": [trigger]}
    return PointsSystem.objects.get(
        public_id=created(client.post("/admin/v1/points", [item]))["id"]
    )


def streak_on(client: Any, *keys: str) -> None:
    body = {"metrics": [{"key": key, "threshold": 1} for key in keys]}
    assert client.patch("/admin/v1/streaks/settings", body).status_code == 200


def points_league_of(tenant: Tenant, system: PointsSystem) -> League:
    settings = LeagueSettings(
        name="Coin league",
        key="coin-league",
        score_by=ScoreBy.POINTS,
        points_system_id=str(system.public_id),
        status=Status.ACTIVE,
    )
    return league_create(tenant, settings)
