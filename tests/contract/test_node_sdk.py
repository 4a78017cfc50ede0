"""The official Node SDK (`@trophyso/node` 1.0.42, pinned in tests/contract/node) against a live
server: its main application calls and admin calls whose answers carry issues, whose responses it
checks against its own schemas.

CI installs it with `npm ci --prefix tests/contract/node`; without Node or that install the test
is skipped with the reason. `streaks.rankings` is left out: that endpoint was removed from the
Trophy API after this SDK version (reference §2.3) and gamify does not serve it.
"""

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_django.live_server_helper import LiveServer

from tests.contract.helpers import CONTRACT_DB
from tests.factories import OrganizationWithKey

NODE_DIR = Path(__file__).parent / "node"
pytestmark = [pytest.mark.contract, CONTRACT_DB]


def admin(http: httpx.Client, method: str, path: str, body: Any) -> Any:
    response = http.request(method, path, json=body)
    assert response.status_code in (200, 201), response.text
    data = response.json()
    if isinstance(data, dict) and "issues" in data:
        assert data["issues"] == [], data
        return data["created"][0] if data.get("created") else data
    return data


def configure(server: LiveServer, key: str) -> None:
    """A metric, a daily streak, a points system with a trigger and levels, a metric and an
    api achievement, and a leaderboard: through the admin API, as a customer would."""
    with httpx.Client(base_url=server.url + "/admin/v1", headers={"X-API-KEY": key}) as http:
        metric = admin(http, "POST", "/metrics", [{"key": "words", "name": "Words"}])
        admin(
            http,
            "PATCH",
            "/streaks/settings",
            {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]},
        )
        system = admin(http, "POST", "/points", [{"name": "XP", "key": "xp"}])
        admin(
            http,
            "POST",
            f"/points/{system['id']}/triggers",
            [
                {
                    "type": "metric",
                    "points": 10,
                    "metricId": metric["id"],
                    "metricThreshold": 100,
                    "status": "active",
                }
            ],
        )
        admin(
            http,
            "POST",
            f"/points/{system['id']}/levels",
            [{"name": "Bronze", "key": "bronze", "points": 10}],
        )
        admin(
            http,
            "POST",
            "/achievements",
            [
                {
                    "name": "Novelist",
                    "trigger": "metric",
                    "metricId": metric["id"],
                    "metricValue": 500,
                    "status": "active",
                },
                {"name": "Shared", "trigger": "api", "key": "shared", "status": "active"},
            ],
        )
        admin(
            http,
            "POST",
            "/leaderboards",
            [
                {
                    "name": "Top writers",
                    "key": "top-writers",
                    "rankBy": "metric",
                    "metricId": metric["id"],
                    "status": "active",
                }
            ],
        )


def test_the_node_sdk_parses_every_main_call(server: LiveServer) -> None:
    node = shutil.which("node")
    if node is None or not (NODE_DIR / "node_modules" / "@trophyso" / "node").exists():
        pytest.skip("Node or tests/contract/node/node_modules missing (npm ci there)")
    org = OrganizationWithKey("Acme")
    configure(server, org.admin_key)

    run = subprocess.run(
        [node, "smoke.mjs"],
        cwd=NODE_DIR,
        env={
            "PATH": str(Path(node).parent),
            "GAMIFY_API": server.url + "/v1",
            "GAMIFY_ADMIN": server.url + "/admin/v1",
            "GAMIFY_KEY": org.admin_key,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert run.returncode == 0, run.stderr + run.stdout
    results = json.loads(run.stdout.strip().splitlines()[-1])
    assert results["created"] == "ada"
    assert results["name"] == "Ada L."
    assert results["eventTotal"] == 600
    assert results["eventPoints"] == 60
    assert results["eventStreak"] == 1
    assert results["metrics"] == [["words", 600, "active"]]
    assert results["singleMetric"] == 600
    assert results["points"] == 60
    assert results["streak"] == 1
    assert results["userRank"] == 1
    assert results["wrappedDays"] == 1
    assert results["completed"] == "shared"
    assert results["streaks"] == 2
    assert results["pointsSystem"] == 1
    assert results["boards"] == 1
    assert results["rankings"] == [["ada", 1, 600], ["bob", 2, 100]]
    # Issues parse: the SDK reads the deprecated level and reason, which repeat severity and
    # message.
    assert results["restoreIssues"] == [["nobody", "error", 'User not found: "nobody"']]
