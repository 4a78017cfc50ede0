"""The SDK's Streamable HTTP transport, driven from a Django view.

The route is a plain (synchronous) DRF view, so it serves under gunicorn's WSGI workers and
under uvicorn alike (docs/architecture.md §4). Each request runs the SDK's session manager in
stateless, JSON-response mode: one JSON-RPC message in, one JSON answer out (202 with no body
for a notification), no session to keep between requests and no open stream, so any worker
may answer any request. The manager's ASGI application is called once, on an event loop of its
own (asgiref's `async_to_sync`); the tools' synchronous work comes back to the request's
thread (`sync_to_async` in apps/mcp/server.py), where Django keeps its database connection.
"""

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from asgiref.sync import async_to_sync
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

# The body limit of the admin API's other routes applies before this: the view reads the body.
MAX_BODY_BYTES = 1024 * 1024


@dataclass
class Answer:
    status: int = 500
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    @property
    def is_json(self) -> bool:
        return any(
            name.lower() == "content-type" and value.startswith("application/json")
            for name, value in self.headers
        )


def streamable_http_answer(
    server: Server[Any], method: str, path: str, headers: dict[str, str], body: bytes
) -> Answer:
    """The SDK's answer to one HTTP request to the MCP endpoint."""
    return async_to_sync(_serve)(server, method, path, headers, body)


async def _serve(
    server: Server[Any], method: str, path: str, headers: dict[str, str], body: bytes
) -> Answer:
    manager = StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        stateless=True,
        max_request_body_size=MAX_BODY_BYTES,
    )
    answer = Answer()
    answered = anyio.Event()
    sent_body = False

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client stays connected until the answer is written
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = [
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])
            ]
        elif message["type"] == "http.response.body":
            answer.body += message.get("body", b"")
            if not message.get("more_body", False):
                answered.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        "client": None,
        "server": None,
    }
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return answer
