"""The MCP tools: which API operation each one is, and its input schema, derived from the
operation's own OpenAPI document.

A tool names an operation by its operationId in one of the served documents (the admin API,
the application API, the admin extensions). Its method and path, its description and its
arguments come from that operation: the path and query parameters, and the fields of the
request body, which drf-spectacular documents from the route's own input serializer (the one
`tests/core/test_declarations.py` holds to the resource's declaration). A create or an update
takes one object (the bulk body's item) and the tool wraps it in the one-item array the admin
API reads. Every tool also takes `tenant`, the customer id the API reads from `Tenant-ID`.

No tool is a DELETE, and `apps/mcp/dispatch.py` builds no DELETE request (issue 28: the MCP
server never deletes); `tests/mcp/test_catalogue.py` holds both.
"""

import copy
import enum
import functools
from dataclasses import dataclass
from typing import Any

from apps.mcp.dispatch import api_call

# The served documents a tool may name: (document route, the operations' path prefix).
DOCUMENTS = {
    "admin": ("/admin/v1/openapi", "/admin/v1"),
    "application": ("/v1/openapi", "/v1"),
    "ext-admin": ("/admin/ext/v1/openapi", "/admin/ext/v1"),
}

# A path parameter's argument name (the documents name them as the URL patterns do).
PATH_ARGUMENTS = {"object_id": "id", "system_id": "systemId", "user_id": "userId", "key": "key"}

TENANT_ARGUMENT = "tenant"
TENANT_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "description": "The customer id of the tenant to act on (the API's Tenant-ID). Omitted: "
    "the environment's default tenant. Only tenants of the key's environment are found.",
}


class Kind(enum.Enum):
    READ = "read"  # answers the operation's body
    CREATE = "create"  # one item of a bulk create: answers the created object
    UPDATE = "update"  # one item of a bulk update: answers the updated object
    CHANGE = "change"  # a PATCH of one object (settings): answers it
    ACT = "act"  # an operation on users with an issues envelope: answers the envelope


@dataclass(frozen=True)
class ToolSpec:
    name: str
    document: str
    operation: str  # the operationId
    kind: Kind


@dataclass(frozen=True)
class Operation:
    method: str
    path: str  # the full path template, "/admin/v1/points/{system_id}/levels"
    summary: str
    description: str
    path_parameters: tuple[str, ...]
    query_parameters: tuple[str, ...]
    input_schema: dict[str, Any]
    body_is_list: bool


# Collections of the admin API: (tool noun, its plural, document, operationId stem).
_COLLECTIONS = (
    ("metric", "metrics", "admin", "admin_metrics"),
    ("attribute", "attributes", "admin", "admin_attributes"),
    ("achievement", "achievements", "admin", "admin_achievements"),
    ("leaderboard", "leaderboards", "admin", "admin_leaderboards"),
    ("points_system", "points_systems", "admin", "admin_points_systems"),
    ("points_trigger", "points_triggers", "admin", "admin_points_triggers"),
    ("points_level", "points_levels", "admin", "admin_points_levels"),
    ("points_boost", "points_boosts", "admin", "admin_points_boosts"),
    ("email_template", "email_templates", "admin", "admin_email_templates"),
    ("push_template", "push_templates", "admin", "admin_push_templates"),
    ("tenant", "tenants", "admin", "admin_tenants"),
    ("league", "leagues", "ext-admin", "admin_leagues"),
    ("quest", "quests", "ext-admin", "admin_quests"),
    ("quest_pool", "quest_pools", "ext-admin", "admin_quest_pools"),
    ("anomaly_rule", "anomaly_rules", "ext-admin", "admin_anomaly_rules"),
)


def _collection_tools() -> list[ToolSpec]:
    tools = []
    for noun, plural, document, stem in _COLLECTIONS:
        tools += [
            ToolSpec(f"list_{plural}", document, f"{stem}_list", Kind.READ),
            ToolSpec(f"get_{noun}", document, f"{stem}_get", Kind.READ),
            ToolSpec(f"create_{noun}", document, f"{stem}_create", Kind.CREATE),
            ToolSpec(f"update_{noun}", document, f"{stem}_update", Kind.UPDATE),
        ]
    return tools


TOOLS: tuple[ToolSpec, ...] = (
    *_collection_tools(),
    ToolSpec("get_streak_settings", "admin", "admin_streaks_settings_get", Kind.READ),
    ToolSpec("update_streak_settings", "admin", "admin_streaks_settings_update", Kind.CHANGE),
    ToolSpec("get_tenant_settings", "admin", "admin_settings_get", Kind.READ),
    ToolSpec("update_tenant_settings", "admin", "admin_settings_update", Kind.CHANGE),
    ToolSpec("list_environments", "admin", "admin_environments_list", Kind.READ),
    ToolSpec("preview_email_template", "admin", "admin_email_templates_preview", Kind.READ),
    ToolSpec("preview_push_template", "admin", "admin_push_templates_preview", Kind.READ),
    ToolSpec("grant_streak_freezes", "admin", "admin_streaks_freezes_create", Kind.ACT),
    ToolSpec("restore_streaks", "admin", "admin_streaks_restore", Kind.ACT),
    ToolSpec("get_friend_settings", "ext-admin", "admin_ext_friends_settings_get", Kind.READ),
    ToolSpec(
        "update_friend_settings", "ext-admin", "admin_ext_friends_settings_update", Kind.CHANGE
    ),
    # The configuration's change history, the file and the diff between environments: reads.
    ToolSpec("list_config_changes", "ext-admin", "ext_admin_history_list", Kind.READ),
    ToolSpec("get_config_change", "ext-admin", "ext_admin_history_get", Kind.READ),
    ToolSpec("export_config", "ext-admin", "ext_admin_config_export", Kind.READ),
    ToolSpec("diff_config", "ext-admin", "ext_admin_config_diff", Kind.READ),
    # Live rankings and a user's state: the application API's reads, which an admin key may
    # make for any user of the tenant.
    ToolSpec("get_leaderboard_rankings", "application", "leaderboards_get", Kind.READ),
    ToolSpec("get_user", "application", "users_get", Kind.READ),
    ToolSpec("get_user_streak", "application", "users_streak", Kind.READ),
    ToolSpec("get_user_points", "application", "users_points", Kind.READ),
    ToolSpec("get_user_achievements", "application", "users_achievements", Kind.READ),
    ToolSpec("get_user_metrics", "application", "users_all_metrics", Kind.READ),
    ToolSpec("get_user_leaderboard", "application", "users_leaderboard", Kind.READ),
)

TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}

# The admin operations that are no tool, and why (`tests/mcp/test_catalogue.py` fails for an
# admin operation that is neither a tool nor here, so a new route is a decision, not an
# oversight). Every DELETE is left out: the MCP server never deletes.
LEFT_OUT = {
    "admin_analytics_": "figures, not configuration",
    "admin_application_api_keys_": "credentials: an agent neither sees nor makes keys",
    "admin_webhooks_": "endpoints carry signing secrets; deliveries are not configuration",
    "admin_push_channels_": "credentials of the push services",
    "admin_metrics_batch_events": "events are end-users' data, not configuration",
    "admin_streaks_pauses_": "users' streaks change through freezes and restore only",
    "admin_streaks_reset": "a reset ends users' streaks: a deletion of their state",
    "ext_admin_stream": "Server-Sent Events and their tokens: streams, not calls",
    "ext_admin_mcp": "the MCP endpoint itself",
    "ext_admin_config_apply": "a file archives or deletes what it leaves out: no deletions",
    "ext_admin_config_promote": "a promote archives or deletes what the source lacks",
    "ext_admin_config_schema": "the file's JSON Schema, for editors rather than agents",
    "ext_admin_history_revert": "reverting a creation deletes the object: no deletions",
    "ext_admin_environments_": "environments and their admin keys: credentials",
    "admin_ext_users_friends_": "end-users' friends lists are their data, not configuration",
    "ext_admin_events_undo": "undoing events takes back users' data (points, achievements)",
    "admin_ext_users_exclusion_": "excluding a user is moderation of their data, not configuration",
}


def left_out(operation_id: str, method: str) -> str | None:
    """Why the admin operation is no tool, or None when it should be one."""
    if method == "DELETE":
        return "no deletions"
    return next((why for prefix, why in LEFT_OUT.items() if operation_id.startswith(prefix)), None)


@functools.cache
def document(name: str) -> dict[str, Any]:
    """A served OpenAPI document, read once per process through its own route."""
    route, _prefix = DOCUMENTS[name]
    answer = api_call("", None, "GET", route)
    if not answer.ok:
        raise RuntimeError(f"{route} answered {answer.status}")
    body: dict[str, Any] = answer.body
    return body


@functools.cache
def operation(tool: ToolSpec) -> Operation:
    doc = document(tool.document)
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            if isinstance(op, dict) and op.get("operationId") == tool.operation:
                return _operation(doc, tool, method.upper(), path, op)
    raise LookupError(f"{tool.name}: no operation {tool.operation} in the {tool.document} API")


def _operation(
    doc: dict[str, Any], tool: ToolSpec, method: str, path: str, op: dict[str, Any]
) -> Operation:
    converter = _Converter(doc["components"].get("schemas", {}))
    properties: dict[str, Any] = {TENANT_ARGUMENT: TENANT_SCHEMA}
    required: list[str] = []
    path_parameters: list[str] = []
    query_parameters: list[str] = []
    for parameter in op.get("parameters", []):
        where, name = parameter["in"], parameter["name"]
        if where not in ("path", "query"):
            continue  # the Tenant-ID header is the `tenant` argument
        argument = PATH_ARGUMENTS.get(name, name) if where == "path" else name
        schema = converter.convert(parameter.get("schema", {}))
        if parameter.get("description"):
            schema["description"] = parameter["description"]
        _add(tool, properties, argument, schema)
        if parameter.get("required"):
            required.append(argument)
        (path_parameters if where == "path" else query_parameters).append(name)
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    body_is_list = False
    if body is not None:
        body = converter.resolve(body)
        if body.get("type") == "array":
            body_is_list = True
            body = converter.resolve(body["items"])
        for name, schema in body.get("properties", {}).items():
            _add(tool, properties, name, converter.convert(schema))
        required += body.get("required", [])
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        input_schema["required"] = required
    if converter.definitions:
        input_schema["$defs"] = converter.definitions
    prefix = DOCUMENTS[tool.document][1]
    return Operation(
        method=method,
        path=prefix + path,
        summary=op.get("summary", ""),
        description=op.get("description", ""),
        path_parameters=tuple(path_parameters),
        query_parameters=tuple(query_parameters),
        input_schema=input_schema,
        body_is_list=body_is_list,
    )


def _add(tool: ToolSpec, properties: dict[str, Any], name: str, schema: dict[str, Any]) -> None:
    if name in properties:
        raise RuntimeError(f"{tool.name}: two arguments are named {name!r}")
    properties[name] = schema


# The StrictSerializer's docstring, which drf-spectacular gives every input object: written
# for developers of gamify, not for the agent that fills the object in.
_DEVELOPER_NOTE = "Rejects unknown fields"


class _Converter:
    """OpenAPI 3.0 schemas as JSON Schema (2020-12): `nullable` as a null alternative, the
    boolean `exclusiveMinimum`/`exclusiveMaximum` as the bound they make exclusive, and
    components as `$defs` of the tool's schema (only those it uses)."""

    def __init__(self, components: dict[str, Any]) -> None:
        self.components = components
        self.definitions: dict[str, Any] = {}

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.components[schema["$ref"].rsplit("/", 1)[1]]
        return schema

    def convert(self, schema: Any) -> Any:
        if isinstance(schema, list):
            return [self.convert(item) for item in schema]
        if not isinstance(schema, dict):
            return schema
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            if name not in self.definitions:
                self.definitions[name] = {}  # a recursive reference finds it being built
                self.definitions[name] = self.convert(copy.deepcopy(self.components[name]))
            return {"$ref": f"#/$defs/{name}"}
        converted = {key: self.convert(value) for key, value in schema.items()}
        if str(converted.get("description", "")).startswith(_DEVELOPER_NOTE):
            del converted["description"]
        for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if converted.get(exclusive) is True and bound in converted:
                converted[exclusive] = converted.pop(bound)
            elif isinstance(converted.get(exclusive), bool):
                del converted[exclusive]
        if converted.pop("nullable", False):
            if isinstance(converted.get("type"), str) and "enum" not in converted:
                converted["type"] = [converted["type"], "null"]
            else:
                return {"anyOf": [converted, {"type": "null"}]}
        return converted
