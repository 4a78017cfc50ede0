"""The MCP server (the official `mcp` SDK's low-level `Server`), bound to one admin key.

`mcp_server(key)` lists the tools of `apps/mcp/catalogue.py` and answers a call by making the
tool's API operation with that key (`apps/mcp/calls.py`), in a thread: the SDK runs on an
event loop, the API's views and the ORM are synchronous. stdio (`manage.py mcp`) serves one
such server for the process's key; the HTTP route (`apps/mcp/views.py`) makes one per request
for the request's key.
"""

import json
from typing import Any

import mcp_types as types
from asgiref.sync import sync_to_async
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from apps.mcp.calls import ToolResult, tool_call
from apps.mcp.catalogue import TOOLS, TOOLS_BY_NAME, Kind, ToolSpec, operation

SERVER_NAME = "gamify"
INSTRUCTIONS = (
    "Reads and changes the configuration of one gamify environment (the admin key's): "
    "metrics, attributes, streak settings, points systems with their triggers, levels and "
    "boosts, achievements, leaderboards, leagues, email and push templates, tenants; grants "
    "streak freezes, restores streaks and reads users' state and live rankings. Every tool "
    "takes an optional `tenant` (a customer id; the default tenant when omitted). Writes are "
    "validated as the admin API validates them; nothing can be deleted."
)


def tool_definitions() -> list[types.Tool]:
    return [_definition(tool) for tool in TOOLS]


def _definition(tool: ToolSpec) -> types.Tool:
    op = operation(tool)
    reads = tool.kind is Kind.READ
    title, description = op.summary, f"{op.summary}. {op.description}".strip()
    if tool.kind in (Kind.CREATE, Kind.UPDATE):
        # The operation's own words are about a bulk body of 1 to 100 items; the tool takes one.
        verb, noun = tool.name.split("_", 1)
        noun = noun.replace("_", " ")
        title = f"{verb.capitalize()} {'an' if noun[0] in 'aeiou' else 'a'} {noun}"
        what = (
            "the fields it starts with" if verb == "create" else "its id and the fields to change"
        )
        description = (
            f"{title}: give {what}, as the admin API's item. Answers the {noun} as the admin API "
            "shows it, or a tool error with the API's reason for refusing it."
        )
    return types.Tool(
        name=tool.name,
        title=title,
        description=description,
        input_schema=op.input_schema,
        annotations=types.ToolAnnotations(
            title=title,
            read_only_hint=reads,
            destructive_hint=False,
            idempotent_hint=reads or tool.kind in (Kind.UPDATE, Kind.CHANGE),
            open_world_hint=False,
        ),
    )


def mcp_server(key: str, default_tenant: str | None = None) -> Server[Any]:
    """An MCP server whose tools act with `key` (an admin key the caller checked), on
    `default_tenant` when a call names none."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await sync_to_async(tool_definitions)())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = TOOLS_BY_NAME.get(params.name)
        if tool is None:
            # Not a refusal by the API: the tool does not exist (there is no delete tool).
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        result = await sync_to_async(tool_call)(key, tool, params.arguments or {}, default_tenant)
        return _call_result(result)

    return Server(
        SERVER_NAME,
        version="1",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _call_result(result: ToolResult) -> types.CallToolResult:
    text = json.dumps(result.body, ensure_ascii=False)
    structured = result.body if isinstance(result.body, dict) else {"items": result.body}
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=structured,
        is_error=result.error,
    )
