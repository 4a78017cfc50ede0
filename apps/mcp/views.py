"""The MCP endpoint: the tools of apps/mcp over the SDK's Streamable HTTP transport, for the
request's admin key (X-API-KEY) and, when it names one, its tenant (Tenant-ID) as the tools'
default. Authentication is the admin API's (apps/accounts/auth.py): no key 401, an
application key 403, a Tenant-ID outside the key's environment 404."""

from django.http import HttpResponse, JsonResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import UnsupportedMediaType
from rest_framework.request import Request

from apps.core.api.errors import ErrorBody
from apps.core.api.views import AdminApi
from apps.core.openapi import ADMIN_FORBIDDEN, errors
from apps.mcp import openapi
from apps.mcp.server import mcp_server
from apps.mcp.streamable import streamable_http_answer


class McpApi(AdminApi):
    http_method_names = ["post", "options"]

    @extend_schema(
        operation_id="ext_admin_mcp",
        summary="MCP server (Streamable HTTP)",
        description="The Model Context Protocol server: tools that read and change this "
        "environment's configuration through the admin API (no deletions), grant streak "
        "freezes, restore streaks, and read users' state and live rankings. Stateless, "
        "JSON answers: POST one JSON-RPC message per request, with the admin key; no session, "
        "no server stream (GET is 405). Tools take an optional `tenant` (a customer id); "
        "the Tenant-ID header, when given, is their default.",
        tags=openapi.TAGS,
        parameters=[openapi.ACCEPT],
        request=openapi.McpMessage,
        responses={
            200: openapi.answer("The answer to a JSON-RPC request."),
            202: OpenApiResponse(description="A notification or a response: accepted."),
            **errors(401, (403, ADMIN_FORBIDDEN), 404),
            400: openapi.refused("Not a JSON-RPC message, or a NUL character in the URL."),
            406: openapi.refused("The Accept header does not accept application/json."),
            413: openapi.refused("The body is larger than the server takes."),
            415: OpenApiResponse(ErrorBody, description="The body is not application/json."),
        },
    )
    def post(self, request: Request) -> HttpResponse:
        self.scope(request)  # an admin key, and the Tenant-ID of its environment
        if request.content_type.split(";")[0].strip() != "application/json":
            # As every route that reads a body answers it (the SDK would answer plain text).
            raise UnsupportedMediaType(request.content_type)
        server = mcp_server(request.headers["X-API-KEY"], request.headers.get("Tenant-ID"))
        answer = streamable_http_answer(
            server, "POST", request.path, dict(request.headers), request.body
        )
        if answer.body and not answer.is_json:
            # Whatever else the transport refuses in words, in the API's error body.
            return JsonResponse(
                {"error": answer.body.decode(errors="replace")}, status=answer.status
            )
        response = HttpResponse(answer.body, status=answer.status)
        for name, value in answer.headers:
            if name.lower() != "content-length":
                response[name] = value
        return response
