"""A tool call: its arguments as the operation's request, the API's answer as the result.

What the API refuses comes back as a tool error (`ToolResult.error`) carrying the API's own
message, worded with the wire names the agent sent (`metricId`, not `metric_id`): an error
answer (`{"error": ...}`), or a bulk envelope whose one item is in `issues` instead of
`created` or `updated` (reference §2.2: the admin API answers per-item problems that way).
"""

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from apps.mcp.catalogue import PATH_ARGUMENTS, TENANT_ARGUMENT, Kind, ToolSpec, operation
from apps.mcp.dispatch import Answer, api_call


@dataclass(frozen=True)
class ToolResult:
    body: Any
    error: bool = False


class ArgumentsError(Exception):
    """Arguments no request can be built from (a tool error, worded for the agent)."""


def tool_call(
    key: str, tool: ToolSpec, arguments: dict[str, Any], default_tenant: str | None = None
) -> ToolResult:
    try:
        answer = _call(key, tool, dict(arguments), default_tenant)
    except ArgumentsError as exc:
        return ToolResult({"error": str(exc)}, error=True)
    return _result(tool, answer)


def _call(
    key: str, tool: ToolSpec, arguments: dict[str, Any], default_tenant: str | None
) -> Answer:
    op = operation(tool)
    tenant = arguments.pop(TENANT_ARGUMENT, None)
    if tenant is None:
        tenant = default_tenant
    elif not isinstance(tenant, str) or not tenant:
        raise ArgumentsError("tenant must be a customer id (a non-empty string)")
    path = op.path
    for name in op.path_parameters:
        value = arguments.pop(PATH_ARGUMENTS.get(name, name), None)
        if not isinstance(value, str) or not value:
            raise ArgumentsError(f"{PATH_ARGUMENTS.get(name, name)} is required (a string)")
        path = path.replace("{" + name + "}", quote(value, safe=""))
    query = {name: arguments.pop(name) for name in op.query_parameters if name in arguments}
    body: Any = None
    if op.method != "GET":
        body = [arguments] if op.body_is_list else arguments
    elif arguments:
        raise ArgumentsError(f"Unknown arguments: {', '.join(sorted(arguments))}")
    return api_call(key, tenant, op.method, path, query=_query_values(query), body=body)


def _query_values(query: dict[str, Any]) -> dict[str, Any]:
    """Query values as a URL writes them: booleans in the API's spelling, lists repeated."""
    written: dict[str, Any] = {}
    for name, value in query.items():
        if isinstance(value, bool):
            written[name] = "true" if value else "false"
        elif isinstance(value, list | tuple):
            written[name] = [str(item) for item in value]
        else:
            written[name] = str(value)
    return written


def _result(tool: ToolSpec, answer: Answer) -> ToolResult:
    if not answer.ok:
        return ToolResult({"error": answer.error}, error=True)
    body = answer.body
    if tool.kind in (Kind.CREATE, Kind.UPDATE):
        done = body.get("created" if tool.kind is Kind.CREATE else "updated") or []
        if done:
            return ToolResult(done[0])
        return ToolResult({"error": _issues_message(body)}, error=True)
    if tool.kind is Kind.ACT and answer.status == 200 and body.get("issues"):
        # Nothing done for any user (201 when something was): the issues say why.
        return ToolResult(body, error=True)
    return ToolResult(body)


def _issues_message(body: dict[str, Any]) -> str:
    messages = [issue.get("message", "") for issue in body.get("issues", [])]
    return "; ".join(message for message in messages if message) or "Nothing was written"
