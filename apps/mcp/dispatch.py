"""One API operation called in process, as an HTTP client would call it.

Every MCP tool is an operation of the admin API (or a read of the application API) called
with the caller's admin key and tenant: the route's own view authenticates the key
(`apps/accounts/auth.py`), resolves the tenant, validates the body with the route's input
serializer, calls the configuration services and renders the answer. So a tool validates,
refuses, writes (and is recorded by whatever the services record) exactly as the admin API
does, and answers what it answers; nothing of the API is copied here.

The request is built as a WSGI request (Django's own class, from a WSGI environ) and handed to
the view the URL resolves to; the middleware, which serves the dashboard and the HTTP edge,
is not run, but an exception the view lets out is answered and logged as Django answers it
at the edge (the JSON 500 of `handler500`), so a failing tool is a tool error, never a crash
of the server. Only the methods of `ALLOWED_METHODS` are ever built: nothing here can delete.
"""

import io
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import orjson
from django.core.handlers.exception import convert_exception_to_response
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import SimpleTemplateResponse
from django.urls import Resolver404, resolve

from apps.accounts import history

# No DELETE: the MCP server reads and changes configuration, it never deletes (issue 28).
ALLOWED_METHODS = frozenset({"GET", "POST", "PATCH"})


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return self.status < 400

    @property
    def error(self) -> str:
        """The API's error message (`{"error": ...}`, apps/core/api/errors.py)."""
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), str):
            return self.body["error"]
        return f"HTTP {self.status}"


def api_call(
    key: str,
    tenant: str | None,
    method: str,
    path: str,
    *,
    query: dict[str, Any] | None = None,
    body: Any = None,
) -> Answer:
    """Call the operation `method path` (a full path, "/admin/v1/metrics") with the key."""
    if method not in ALLOWED_METHODS:
        raise ValueError(f"{method} is not an operation the MCP server calls")
    content = b"" if body is None else json.dumps(body).encode()
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": urlencode(query or {}, doseq=True),
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(content)),
        "SERVER_NAME": "mcp.internal",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_ACCEPT": "application/json",
        "HTTP_X_API_KEY": key,
        "wsgi.input": io.BytesIO(content),
        "wsgi.url_scheme": "http",
    }
    if tenant is not None:
        environ["HTTP_TENANT_ID"] = tenant
    try:
        match = resolve(path)
    except Resolver404:
        return Answer(404, {"error": "Not found"})

    def view(request: HttpRequest) -> HttpResponseBase:
        # The change history records the key's writes as made through MCP.
        with history.request_serving(request), history.how("mcp"):
            return match.func(request, *match.args, **match.kwargs)

    response = convert_exception_to_response(view)(WSGIRequest(environ))
    # A synchronous view answers synchronously: every API view is one (DRF's APIView).
    assert isinstance(response, HttpResponse)  # noqa: S101 - and every answer has a body
    if isinstance(response, SimpleTemplateResponse):
        response.render()
    data = orjson.loads(response.content) if response.content else None
    return Answer(response.status_code, data)
