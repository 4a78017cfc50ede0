"""The MCP endpoint as a plain synchronous view (as gunicorn's WSGI workers serve it): one
JSON-RPC message per POST, answered as JSON, and what its document says about it. The SDK's
client drives it in test_http.py; here the messages are written by hand."""

import json
from typing import Any

import pytest

from tests.conftest import Client
from tests.factories import OrganizationWithKey

ENDPOINT = "/admin/ext/v1/mcp"
ACCEPT = "application/json, text/event-stream"


@pytest.fixture
def org(db: Any) -> OrganizationWithKey:
    return OrganizationWithKey("Endpoint")


def rpc(client: Client, method: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        message["params"] = params
    return client.post(
        ENDPOINT,
        json.dumps(message),
        format=None,
        content_type="application/json",
        headers={"Accept": ACCEPT, **headers},
    )


@pytest.fixture
def client(org: OrganizationWithKey) -> Client:
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    return client


def test_initialize_list_and_call_in_stateless_requests(client):
    init = rpc(
        client,
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    )
    assert init.status_code == 200, init.content
    assert init.json()["result"]["serverInfo"]["name"] == "gamify"
    assert "tools" in init.json()["result"]["capabilities"]
    assert "mcp-session-id" not in init.headers  # stateless: any worker answers any request

    listed = rpc(client, "tools/list", {})
    assert listed.status_code == 200
    names = [tool["name"] for tool in listed.json()["result"]["tools"]]
    assert "create_leaderboard" in names

    called = rpc(
        client,
        "tools/call",
        {"name": "create_metric", "arguments": {"key": "words", "name": "Words"}},
    )
    assert called.status_code == 200
    result = called.json()["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["key"] == "words"
    assert [m["key"] for m in client.get("/admin/v1/metrics").json()] == ["words"]


def test_a_refused_call_is_a_result_with_is_error(client):
    called = rpc(client, "tools/call", {"name": "create_metric", "arguments": {"key": "w"}})
    assert called.status_code == 200
    result = called.json()["result"]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == {"error": "name: This field is required."}


def test_an_unknown_tool_is_a_json_rpc_error(client):
    called = rpc(client, "tools/call", {"name": "delete_metric", "arguments": {"id": "x"}})
    assert called.status_code == 200
    assert called.json()["error"]["message"] == "Unknown tool: delete_metric"


def test_what_the_transport_refuses(client):
    notification = client.post(
        ENDPOINT,
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        format=None,
        content_type="application/json",
        headers={"Accept": ACCEPT},
    )
    assert notification.status_code == 202
    garbled = client.post(
        ENDPOINT,
        "{not json",
        format=None,
        content_type="application/json",
        headers={"Accept": ACCEPT},
    )
    assert garbled.status_code == 400
    not_rpc = client.post(
        ENDPOINT,
        json.dumps({"hello": 1}),
        format=None,
        content_type="application/json",
        headers={"Accept": ACCEPT},
    )
    assert not_rpc.status_code == 400
    assert rpc(client, "tools/list", {}, Accept="text/html").status_code == 406
    as_text = client.post(
        ENDPOINT, "{}", format=None, content_type="text/plain", headers={"Accept": ACCEPT}
    )
    assert as_text.status_code == 415
    assert client.get(ENDPOINT).status_code == 405  # no server stream: stateless JSON answers
    assert client.delete(ENDPOINT).status_code == 405


def test_keys_and_tenants(org, anon_client):
    assert rpc(anon_client, "tools/list", {}).status_code == 401
    app = Client()
    app.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    assert rpc(app, "tools/list", {}).status_code == 403
    admin = Client()
    admin.credentials(HTTP_X_API_KEY=org.admin_key, HTTP_TENANT_ID="nobody")
    answer = rpc(admin, "tools/list", {})
    assert answer.status_code == 404
    assert answer.json() == {"error": 'Tenant not found: "nobody"'}


def test_the_extension_admin_document_describes_the_endpoint(anon_client):
    document = anon_client.get("/admin/ext/v1/openapi").json()
    operations = document["paths"]["/mcp"]
    assert set(operations) == {"post"}
    post = operations["post"]
    assert post["operationId"] == "ext_admin_mcp"
    assert post["tags"] == ["mcp"]
    assert {"200", "202", "400", "401", "403", "404", "406"} <= set(post["responses"])
    assert next(p["name"] for p in post["parameters"] if p["in"] == "header") == "Accept"
    # The Trophy-compatible admin document does not change because of it.
    assert "/mcp" not in anon_client.get("/admin/v1/openapi").json()["paths"]
