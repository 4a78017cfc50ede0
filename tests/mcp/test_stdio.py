"""The MCP server over stdio (`manage.py mcp --key ...`), started as an MCP client starts it
(Claude Desktop's configuration names the command), driven by the SDK's stdio client.

The server is another process, so it cannot see the test's database (SQLite in memory, or a
transaction): it runs on a scratch SQLite file made for this module by `migrate`, with
organizations made by `create_organization`, as an operator makes them."""

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.management import CommandError, call_command
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

from tests.factories import OrganizationWithKey
from tests.mcp.support import body

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Deployment:
    env: dict[str, str]
    keys: dict[str, str]  # organization name -> its admin key


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    root = tmp_path_factory.mktemp("mcp-stdio")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "gamify.settings_test",
        "DATABASE_URL": f"sqlite:///{root / 'db.sqlite3'}",
        "LOG_LEVEL": "WARNING",
    }
    _manage(env, "migrate", "--noinput", "-v0")
    keys = {}
    for name in ("Acme", "Globex"):
        keys[name] = json.loads(_manage(env, "create_organization", name, "--json"))["apiKey"]
    made = _manage(
        env,
        "shell",
        "--no-imports",
        "-c",
        "from apps.accounts.models import Tenant;"
        "from apps.accounts.services import application_key_create;"
        "tenant = Tenant.objects.get(environment__organization__name='Acme', is_default=True);"
        "print('KEY=' + application_key_create(tenant, user_id='u1')[1])",
    )
    keys["application"] = next(line[4:] for line in made.splitlines() if line.startswith("KEY="))
    return Deployment(env, keys)


def agent(deployment: Deployment, key: str, work: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp", "--key", key],
        env=deployment.env,
        cwd=ROOT,
    )

    async def run() -> Any:
        async with (
            stdio_client(parameters) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)

    return async_to_sync(run)()


def test_tools_list_create_update_and_read_over_stdio(deployment):
    key = deployment.keys["Acme"]

    async def write(session: ClientSession) -> tuple[list[str], Any, Any]:
        names = [tool.name for tool in (await session.list_tools()).tools]
        created = await session.call_tool(
            "create_attribute", {"key": "plan", "name": "Plan", "type": "user"}
        )
        assert not created.is_error, body(created)
        updated = await session.call_tool(
            "update_attribute", {"id": body(created)["id"], "name": "Subscription plan"}
        )
        return names, body(created), updated

    names, created, updated = agent(deployment, key, write)
    assert {"list_metrics", "create_attribute", "grant_streak_freezes", "restore_streaks"} <= set(
        names
    )
    assert not updated.is_error, body(updated)

    async def read(session: ClientSession) -> Any:
        return await session.call_tool("list_attributes", {})

    # Another server process reads what the first one wrote.
    listed = body(agent(deployment, key, read))
    assert [(a["id"], a["key"], a["name"]) for a in listed] == [
        (created["id"], "plan", "Subscription plan")
    ]


def test_refusals_over_stdio_are_tool_errors_and_there_is_no_delete(deployment):
    key = deployment.keys["Acme"]

    async def work(session: ClientSession) -> list[Any]:
        bad = await session.call_tool("create_points_system", {"key": "xp"})
        with pytest.raises(MCPError, match="Unknown tool"):
            await session.call_tool("delete_attribute", {"id": "x"})
        return [bad]

    (bad,) = agent(deployment, key, work)
    assert bad.is_error
    assert "name" in body(bad)["error"]


def test_another_environments_tenant_is_not_found_over_stdio(deployment):
    async def globex(session: ClientSession) -> Any:
        return await session.call_tool("create_tenant", {"customerId": "globex-eu", "name": "EU"})

    assert not agent(deployment, deployment.keys["Globex"], globex).is_error

    async def acme(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("list_metrics", {"tenant": "globex-eu"}),
            await session.call_tool("get_tenant_settings", {"tenant": "globex-eu"}),
        ]

    for result in agent(deployment, deployment.keys["Acme"], acme):
        assert result.is_error
        assert body(result) == {"error": 'Tenant not found: "globex-eu"'}


def test_the_command_refuses_what_is_not_an_admin_key(db):
    org = OrganizationWithKey("Keys")
    with pytest.raises(CommandError, match="Invalid API key"):
        call_command("mcp", key="abc.def")
    with pytest.raises(CommandError, match="needs an admin API key"):
        call_command("mcp", key=org.application_key("u1"))
    with pytest.raises(CommandError, match="Give an admin API key"):
        call_command("mcp")
    other = OrganizationWithKey("Other")
    from apps.accounts.services import tenant_create

    tenant_create(other.environment, customer_id="theirs", name="Theirs")
    with pytest.raises(CommandError, match='Tenant not found: "theirs"'):
        call_command("mcp", key=org.admin_key, tenant="theirs")


@pytest.mark.parametrize(
    ("key", "said"),
    [("application", "needs an admin API key"), ("app_abcdefgh.secret", "Invalid API key")],
)
def test_an_application_or_unknown_key_stops_the_stdio_server_before_it_serves(
    deployment, key, said
):
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp", "--key", deployment.keys.get(key, key)],
        cwd=ROOT,
        env=deployment.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        input="",
    )
    assert done.returncode != 0
    assert said in done.stderr
    assert done.stdout == ""  # nothing a client would read as a message
