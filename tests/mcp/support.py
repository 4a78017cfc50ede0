"""The SDK's own client, connected to gamify's MCP server over stdio or Streamable HTTP."""

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp_types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


@contextlib.asynccontextmanager
async def http_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    client: httpx2.AsyncClient = create_mcp_http_client(headers=headers)
    async with (
        client,
        streamable_http_client(f"{url}/admin/ext/v1/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def body(result: types.CallToolResult) -> Any:
    """A tool result's JSON (the API's answer, or its error)."""
    import json

    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return json.loads(content.text)
