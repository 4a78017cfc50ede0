"""A tenant configured through the admin API with one object of nearly every kind."""

from typing import Any

from apps.accounts.models import Tenant
from tests.conftest import Client


def admin_client(org: Any, tenant: Tenant | None = None) -> Client:
    client = Client()
    headers = {"HTTP_X_API_KEY": org.admin_key}
    if tenant is not None and tenant.customer_id:
        headers["HTTP_TENANT_ID"] = tenant.customer_id
    client.credentials(**headers)
    return client


def created(response: Any) -> dict[str, Any]:
    body = response.json()
    assert response.status_code in (200, 201), body
    assert body["issues"] == [], body["issues"]
    return dict(body["created"][0])


def configure(client: Client) -> dict[str, str]:
    """Attribute plan, metric words, streak settings, achievements writer (metric) and
    finisher (api, with writer as a prerequisite...), points system xp with a level and a
    trigger, leaderboard top, league weekly. Returns their ids by key."""
    ids: dict[str, str] = {}
    ids["plan"] = created(
        client.post("/admin/v1/attributes", [{"name": "Plan", "key": "plan", "type": "user"}])
    )["id"]
    ids["words"] = created(client.post("/admin/v1/metrics", [{"name": "Words", "key": "words"}]))[
        "id"
    ]
    response = client.patch(
        "/admin/v1/streaks/settings",
        {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
    )
    assert response.status_code == 200, response.json()
    ids["writer"] = created(
        client.post(
            "/admin/v1/achievements",
            [
                {
                    "name": "Writer",
                    "trigger": "metric",
                    "metricId": ids["words"],
                    "metricValue": 100,
                    "status": "active",
                    "userAttributes": [{"attributeId": ids["plan"], "attributeValue": "pro"}],
                }
            ],
        )
    )["id"]
    ids["finisher"] = created(
        client.post(
            "/admin/v1/achievements",
            [{"name": "Finisher", "trigger": "api", "key": "finisher", "status": "active"}],
        )
    )["id"]
    ids["xp"] = created(
        client.post(
            "/admin/v1/points",
            [
                {
                    "name": "XP",
                    "key": "xp",
                    "levels": [{"key": "gold", "name": "Gold", "points": 100}],
                    "triggers": [
                        {
                            "type": "metric",
                            "metricId": ids["words"],
                            "metricThreshold": 10,
                            "points": 5,
                            "status": "active",
                        },
                        {
                            "type": "achievement",
                            "achievementId": ids["finisher"],
                            "points": 50,
                            "status": "active",
                        },
                    ],
                }
            ],
        )
    )["id"]
    ids["top"] = created(
        client.post(
            "/admin/v1/leaderboards",
            [
                {
                    "name": "Top",
                    "key": "top",
                    "rankBy": "points",
                    "pointsSystemId": ids["xp"],
                    "start": "2026-01-01",
                    "breakdownAttributes": [ids["plan"]],
                }
            ],
        )
    )["id"]
    return ids
