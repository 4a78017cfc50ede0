"""The MCP server over Streamable HTTP (POST /admin/ext/v1/mcp), driven by the SDK's client
against a live uvicorn (tests/asgi_server.py), as an agent drives it; what the tools write is
read back through the admin API."""

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync
from mcp import ClientSession, MCPError

from apps.accounts.services import tenant_create
from tests.asgi_server import asgi_server
from tests.conftest import Client
from tests.factories import OrganizationWithKey
from tests.mcp.support import body, http_session

ENDPOINT = "/admin/ext/v1/mcp"


@pytest.fixture
def server(transactional_db: None) -> Iterator[str]:
    with asgi_server() as url:
        yield url


@pytest.fixture
def org(transactional_db: None) -> OrganizationWithKey:
    return OrganizationWithKey("MCP")


def admin(org: OrganizationWithKey, tenant: str | None = None) -> Client:
    client = Client()
    client.credentials(
        HTTP_X_API_KEY=org.admin_key, **({"HTTP_TENANT_ID": tenant} if tenant else {})
    )
    return client


def agent(
    server: str, key: str, work: Callable[[ClientSession], Awaitable[Any]], **headers: str
) -> Any:
    """Run `work` with an initialized session of the SDK's client, with the key."""

    async def run() -> Any:
        async with http_session(server, {"X-API-KEY": key, **headers}) as session:
            return await work(session)

    return async_to_sync(run)()


def test_a_metric_created_and_updated_through_tools_is_what_the_admin_api_shows(server, org):
    async def work(session: ClientSession) -> dict[str, Any]:
        created = await session.call_tool("create_metric", {"key": "words", "name": "Words"})
        assert not created.is_error, body(created)
        metric = body(created)
        updated = await session.call_tool(
            "update_metric", {"id": metric["id"], "name": "All words", "units": "words"}
        )
        assert not updated.is_error, body(updated)
        read = await session.call_tool("get_metric", {"id": metric["id"]})
        return {"created": metric, "updated": body(updated), "read": body(read)}

    seen = agent(server, org.admin_key, work)
    shown = admin(org).get(f"/admin/v1/metrics/{seen['created']['id']}").json()
    assert (shown["key"], shown["name"], shown["units"]) == ("words", "All words", "words")
    # The tools answer what the admin API answers.
    assert seen["updated"] == shown
    assert seen["read"] == shown
    # The change history has both writes, as the key's through MCP.
    changes = admin(org).get("/admin/ext/v1/history?kind=metric").json()
    assert [(c["action"], c["source"], c["actor"]["kind"]) for c in changes] == [
        ("changed", "mcp", "api_key"),
        ("created", "mcp", "api_key"),
    ]


def test_read_tools_answer_what_the_apis_answer(server, org):
    client = admin(org)
    (metric,) = client.post("/admin/v1/metrics", [{"key": "words", "name": "Words"}]).json()[
        "created"
    ]
    streak = {"frequency": "daily", "metrics": [{"key": "words", "threshold": 1}]}
    assert client.patch("/admin/v1/streaks/settings", streak).status_code == 200
    (system,) = client.post("/admin/v1/points", [{"key": "xp", "name": "XP"}]).json()["created"]
    trigger = {"type": "metric", "points": 10, "metricId": metric["id"], "metricThreshold": 1}
    assert client.post(f"/admin/v1/points/{system['id']}/triggers", [trigger]).status_code == 201
    board = {"key": "top", "name": "Top", "rankBy": "metric", "metricId": metric["id"]}
    assert client.post("/admin/v1/leaderboards", [board | {"status": "active"}]).status_code == 201
    for user, value in (("u1", 3), ("u2", 5)):
        event = {"user": {"id": user}, "value": value}
        assert client.post("/v1/metrics/words/event", event).status_code == 201

    calls = {
        ("list_metrics", ()): "/admin/v1/metrics",
        ("list_points_triggers", (("systemId", system["id"]),)): (
            f"/admin/v1/points/{system['id']}/triggers"
        ),
        ("get_streak_settings", ()): "/admin/v1/streaks/settings",
        ("list_tenants", ()): "/admin/v1/tenants",
        ("get_leaderboard_rankings", (("key", "top"),)): "/v1/leaderboards/top",
        ("get_user", (("userId", "u1"),)): "/v1/users/u1",
        ("get_user_streak", (("userId", "u1"),)): "/v1/users/u1/streak",
        ("get_user_points", (("userId", "u2"), ("key", "xp"))): "/v1/users/u2/points/xp",
        ("get_user_achievements", (("userId", "u1"),)): "/v1/users/u1/achievements",
        ("get_user_leaderboard", (("userId", "u2"), ("key", "top"))): (
            "/v1/users/u2/leaderboards/top"
        ),
    }

    async def work(session: ClientSession) -> dict[str, Any]:
        answers = {}
        for name, arguments in calls:
            result = await session.call_tool(name, dict(arguments))
            assert not result.is_error, (name, body(result))
            answers[name] = body(result)
        return answers

    answers = agent(server, org.admin_key, work)
    for (name, _arguments), path in calls.items():
        assert answers[name] == client.get(path).json(), name
    rankings = answers["get_leaderboard_rankings"]["rankings"]
    assert [(row["userId"], row["rank"]) for row in rankings] == [("u2", 1), ("u1", 2)]


def test_refusals_of_the_api_are_tool_errors_with_its_message(server, org):
    async def work(session: ClientSession) -> list[tuple[bool, Any]]:
        results = [
            await session.call_tool("create_metric", {"key": "not a key", "name": "Words"}),
            await session.call_tool("create_metric", {"key": "words"}),
            await session.call_tool("create_metric", {"key": "words", "name": "W", "colour": 1}),
            await session.call_tool(
                "update_metric", {"id": "00000000-0000-0000-0000-000000000000", "name": "X"}
            ),
            await session.call_tool("get_metric", {"id": "nope"}),
            await session.call_tool("update_streak_settings", {"frequency": "hourly"}),
            await session.call_tool(
                "update_streak_settings", {"freezes": {"startCount": 5, "maxCount": 1}}
            ),
            await session.call_tool("get_user", {"userId": "ghost"}),
            await session.call_tool("list_metrics", {"limit": 1000}),
        ]
        return [(result.is_error, body(result)) for result in results]

    results = agent(server, org.admin_key, work)
    assert all(error for error, _ in results), results
    messages = [answer["error"] for _, answer in results]
    assert "key" in messages[0]
    assert messages[1] == "name: This field is required."
    assert "colour" in messages[2]
    assert messages[3] == "Metric not found by ID"
    assert "not found" in messages[4].lower()
    assert "frequency" in messages[5]
    assert "startCount" in messages[6] or "maxCount" in messages[6]  # the wire's names
    assert "not found" in messages[7].lower()
    assert "limit" in messages[8]
    # Nothing was written by the refused calls.
    assert admin(org).get("/admin/v1/metrics").json() == []


def test_there_is_no_delete_tool_and_a_delete_call_is_refused(server, org):
    (metric,) = (
        admin(org).post("/admin/v1/metrics", [{"key": "words", "name": "W"}]).json()["created"]
    )

    async def work(session: ClientSession) -> list[str]:
        names = [tool.name for tool in (await session.list_tools()).tools]
        with pytest.raises(MCPError, match="Unknown tool: delete_metric"):
            await session.call_tool("delete_metric", {"id": metric["id"]})
        # An update cannot smuggle a deletion in either: unknown fields are refused.
        refused = await session.call_tool("update_metric", {"id": metric["id"], "deleted": True})
        assert refused.is_error
        return names

    names = agent(server, org.admin_key, work)
    assert not [name for name in names if any(w in name for w in ("delete", "remove", "reset"))]
    assert admin(org).get(f"/admin/v1/metrics/{metric['id']}").status_code == 200


def test_another_environments_tenant_is_refused_exactly_like_a_missing_one(server, org):
    other = OrganizationWithKey("Other")
    tenant_create(other.environment, customer_id="theirs", name="Theirs")
    tenant_create(org.environment, customer_id="ours", name="Ours")

    async def work(session: ClientSession) -> dict[str, Any]:
        theirs = await session.call_tool("list_metrics", {"tenant": "theirs"})
        missing = await session.call_tool("list_metrics", {"tenant": "nobody"})
        created = await session.call_tool(
            "create_metric", {"tenant": "ours", "key": "words", "name": "Words"}
        )
        return {"theirs": theirs, "missing": missing, "created": created}

    seen = agent(server, org.admin_key, work)
    assert seen["theirs"].is_error
    assert seen["missing"].is_error
    assert body(seen["theirs"])["error"] == body(seen["missing"])["error"].replace(
        "nobody", "theirs"
    )
    assert not seen["created"].is_error
    # Written in the named tenant of the key's environment, and only there.
    assert [m["key"] for m in admin(org, "ours").get("/admin/v1/metrics").json()] == ["words"]
    assert admin(org).get("/admin/v1/metrics").json() == []
    # The Tenant-ID header of the request is refused the same way, before any tool runs.
    answer = _post(server, {"X-API-KEY": org.admin_key, "Tenant-ID": "theirs"})
    assert answer.status_code == 404
    assert answer.json() == {"error": 'Tenant not found: "theirs"'}


def test_the_tenant_id_header_is_the_tools_default_tenant(server, org):
    tenant_create(org.environment, customer_id="ours", name="Ours")

    async def work(session: ClientSession) -> Any:
        return await session.call_tool("create_metric", {"key": "words", "name": "Words"})

    assert not agent(server, org.admin_key, work, **{"Tenant-ID": "ours"}).is_error
    assert [m["key"] for m in admin(org, "ours").get("/admin/v1/metrics").json()] == ["words"]
    assert admin(org).get("/admin/v1/metrics").json() == []


def _post(server: str, headers: dict[str, str]) -> httpx.Response:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    return httpx.post(
        server + ENDPOINT,
        json=message,
        headers={"Accept": "application/json, text/event-stream", **headers},
        timeout=30,
    )


def test_only_an_admin_key_opens_the_endpoint(server, org):
    assert _post(server, {}).status_code == 401
    assert _post(server, {"X-API-KEY": "abc.def"}).status_code == 401
    answer = _post(server, {"X-API-KEY": org.application_key("u1")})
    assert answer.status_code == 403
    assert answer.json() == {"error": "This endpoint requires an admin API key"}
    assert _post(server, {"X-API-KEY": org.admin_key}).status_code == 200

    async def work(session: ClientSession) -> None:
        raise AssertionError("the session should not open")

    with pytest.raises(Exception):  # noqa: B017 - the SDK's transport error, any kind
        agent(server, org.application_key("u1"), work)


def test_freezes_are_granted_and_streaks_restored_through_tools(server, org):
    client = admin(org)
    client.post("/admin/v1/metrics", [{"key": "words", "name": "Words"}])

    async def configure(session: ClientSession) -> Any:
        settings = {
            "frequency": "daily",
            "metrics": [{"key": "words", "threshold": 1}],
            "freezes": {"startCount": 0, "maxCount": 2},
        }
        return await session.call_tool("update_streak_settings", settings)

    configured = agent(server, org.admin_key, configure)
    assert not configured.is_error, body(configured)
    assert body(configured) == client.get("/admin/v1/streaks/settings").json()
    for user in ("u1", "u2"):
        event = {"user": {"id": user}, "value": 1}
        assert client.post("/v1/metrics/words/event", event).status_code == 201

    async def grant(session: ClientSession) -> list[Any]:
        freezes = [{"userId": "u1"}, {"userId": "u1"}, {"userId": "u1"}, {"userId": "ghost"}]
        granted = await session.call_tool("grant_streak_freezes", {"freezes": freezes})
        none = await session.call_tool("grant_streak_freezes", {"freezes": [{"userId": "ghost"}]})
        return [granted, none]

    granted, none = agent(server, org.admin_key, grant)
    assert not granted.is_error
    severities = sorted(issue["severity"] for issue in body(granted)["issues"])
    assert severities == ["error", "warning"]  # the unknown user; the third, over the cap
    assert none.is_error  # nothing granted to anyone
    assert client.get("/v1/users/u1/streak").json()["freezes"] == 2

    assert client.post("/admin/v1/streaks/reset", {"users": [{"id": "u2"}]}).status_code == 201
    assert client.get("/v1/users/u2/streak").json()["length"] == 0

    async def restore(session: ClientSession) -> list[Any]:
        restored = await session.call_tool("restore_streaks", {"users": [{"id": "u2"}]})
        again = await session.call_tool("restore_streaks", {"users": [{"id": "u2"}]})
        read = await session.call_tool("get_user_streak", {"userId": "u2"})
        return [restored, again, read]

    restored, again, read = agent(server, org.admin_key, restore)
    assert not restored.is_error
    assert body(restored) == {"restoredUsers": ["u2"], "issues": []}
    assert again.is_error  # nothing left to restore: the API's warning, as a tool error
    assert body(again)["issues"][0]["message"] == "No streak to restore"
    assert body(read)["length"] == 1
    assert client.get("/v1/users/u2/streak").json()["length"] == 1
