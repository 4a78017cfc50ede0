"""OpenAPI documentation of the MCP endpoint (documentation only): a JSON-RPC 2.0 message in,
the SDK's JSON answer out (the Model Context Protocol's Streamable HTTP transport)."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema_field
from rest_framework import serializers

TAGS = ["mcp"]

_JSONRPC_ID = {"oneOf": [{"type": "string"}, {"type": "integer"}]}


@extend_schema_field(_JSONRPC_ID)
class _JsonRpcIdField(serializers.JSONField):
    pass


class McpMessage(serializers.Serializer):
    """A JSON-RPC 2.0 message of the Model Context Protocol: a request (`initialize`,
    `tools/list`, `tools/call`, ...) or, without `id`, a notification."""

    jsonrpc = serializers.ChoiceField(choices=["2.0"])
    id = _JsonRpcIdField(required=False)
    method = serializers.CharField(max_length=100)
    params = serializers.DictField(required=False)


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
