"""The MCP server over Streamable HTTP (POST /admin/ext/v1/mcp), driven by the SDK's client
against a live uvicorn (tests/asgi_server.py), as an agent drives it."""

from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync

from tests.asgi_server import asgi_server
from tests.conftest import Client
from tests.factories import OrganizationWithKey
from tests.mcp.support import body, http_session


@pytest.fixture
def server(transactional_db: None) -> Iterator[str]:
    with asgi_server() as url:
        yield url


def test_tools_create_and_update_a_metric_the_admin_api_then_shows(server: str) -> None:
    org = OrganizationWithKey("MCP")

    async def agent() -> dict[str, Any]:
        async with http_session(server, {"X-API-KEY": org.admin_key}) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert {"create_metric", "update_metric", "list_metrics"} <= names
            created = await session.call_tool("create_metric", {"key": "words", "name": "Words"})
            assert not created.is_error, body(created)
            metric = body(created)
            updated = await session.call_tool(
                "update_metric", {"id": metric["id"], "name": "All words"}
            )
            assert not updated.is_error, body(updated)
            return metric

    metric = async_to_sync(agent)()
    admin = Client()
    admin.credentials(HTTP_X_API_KEY=org.admin_key)
    shown = admin.get(f"/admin/v1/metrics/{metric['id']}").json()
    assert shown["key"] == "words"
    assert shown["name"] == "All words"
