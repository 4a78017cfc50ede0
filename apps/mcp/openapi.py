"""OpenAPI documentation of the MCP endpoint (documentation only): a JSON-RPC 2.0 message in,
the SDK's JSON answer out (the Model Context Protocol's Streamable HTTP transport)."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse

TAGS = ["mcp"]

_JSONRPC_ID = {"oneOf": [{"type": "string"}, {"type": "integer"}]}

MESSAGE = {
    "type": "object",
    "description": "A JSON-RPC 2.0 message of the Model Context Protocol: a request "
    "(`initialize`, `tools/list`, `tools/call`, ...), a notification (no `id`) or a response.",
    "properties": {
        "jsonrpc": {"type": "string", "enum": ["2.0"]},
        "id": _JSONRPC_ID,
        "method": {"type": "string", "minLength": 1, "maxLength": 100},
        "params": {"type": "object", "additionalProperties": True},
    },
    "required": ["jsonrpc", "method"],
}

_ANSWER = {
    "type": "object",
    "description": "A JSON-RPC 2.0 response: `result`, or `error` ({code, message}). A tool "
    "the API refused answers a result with `isError: true` and the API's message.",
    "properties": {
        "jsonrpc": {"type": "string", "enum": ["2.0"]},
        "id": {"oneOf": [{"type": "string"}, {"type": "integer"}], "nullable": True},
        "result": {"type": "object", "additionalProperties": True},
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "integer"},
                "message": {"type": "string"},
                "data": {},
            },
            "required": ["code", "message"],
        },
    },
    "required": ["jsonrpc"],
}


def answer(description: str) -> OpenApiResponse:
    return OpenApiResponse(_ANSWER, description=description)


def refused(description: str) -> OpenApiResponse:
    """Refused by the API's own checks ({"error": ...}: content negotiation, a NUL in the URL,
    the request size) or by the SDK's transport (a JSON-RPC error), whichever saw it first."""
    return OpenApiResponse(
        {"oneOf": [{"$ref": "#/components/schemas/ErrorBody"}, _ANSWER]},
        description=description,
    )


ACCEPT = OpenApiParameter(
    "Accept",
    {"type": "string", "enum": ["application/json", "application/json, text/event-stream"]},
    OpenApiParameter.HEADER,
    required=True,
    description="Must accept application/json: answers are JSON, never a stream (406 otherwise).",
)
