"""The HTTP surface outside individual features: errors, routing, health and documents."""

import json

import pytest
from django.test import override_settings


def test_unknown_api_route_is_json_404(api_client):
    for path in ["/v1/nope", "/api/nope", "/admin/v1/nope", "/elsewhere"]:
        response = api_client.get(path)
        assert response.status_code == 404, path
        assert set(response.json()) == {"error"}


def test_method_not_allowed_is_json_405(api_client):
    response = api_client.delete("/v1/users/u1")
    assert response.status_code == 405
    assert response.json() == {"error": "Method DELETE not allowed"}


def test_admin_endpoints_need_an_admin_key(org, anon_client):
    anon_client.credentials(HTTP_X_API_KEY=org.application_key("u1"))
    response = anon_client.get("/admin/v1/metrics")
    assert response.status_code == 403
    assert set(response.json()) == {"error"}


def test_admin_key_works_on_both_apis(api_client):
    assert api_client.get("/admin/v1/metrics").status_code == 200
    assert api_client.put("/v1/users/u1", {}).status_code == 200


def test_wrong_content_type_is_415(api_client):
    response = api_client.generic(
        "PUT", "/v1/users/u1", "name=x", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 415
    assert set(response.json()) == {"error"}


def test_non_utf8_body_is_400(api_client):
    response = api_client.generic(
        "PUT", "/v1/users/u1", b"\xff\xfe{}", content_type="application/json"
    )
    assert response.status_code == 400


def test_deeply_nested_json_is_rejected_not_500(api_client):
    body = "[" * 100000 + "]" * 100000
    response = api_client.generic("PUT", "/v1/users/u1", body, content_type="application/json")
    assert response.status_code in (400, 413, 422)


def test_healthz_reports_database(anon_client, db):
    response = anon_client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": True}}


@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0")
def test_healthz_is_503_when_the_broker_is_unreachable(anon_client, db):
    response = anon_client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"] == {"database": True, "broker": False}


def test_openapi_documents_list_both_apis(anon_client, db):
    app = json.loads(anon_client.get("/v1/openapi").content)
    admin = json.loads(anon_client.get("/admin/v1/openapi").content)
    assert "/metrics/{key}/event" in app["paths"]
    assert "/users/{user_id}" in app["paths"]
    assert app["servers"] == [{"url": "/v1"}]
    assert "/metrics/events" in admin["paths"]
    assert "/tenants" in admin["paths"]
    assert admin["servers"] == [{"url": "/admin/v1"}]


def test_request_schemas_declare_what_the_server_refuses(anon_client, db):
    """Unknown fields and control characters are refused (422): the documents say so."""
    import re

    schemas = json.loads(anon_client.get("/v1/openapi").content)["components"]["schemas"]
    user = schemas["UpsertedUserRequest"]
    assert user["additionalProperties"] is False
    name = re.compile(user["properties"]["name"]["pattern"])
    assert name.match("Zoë O'Brien")
    assert not name.match("Ada\nLovelace")
    assert not name.match("esc\u001b[31m")
    admin = json.loads(anon_client.get("/admin/v1/openapi").content)["components"]["schemas"]
    description = re.compile(
        admin["PointsSystemCreateRequest"]["properties"]["description"]["pattern"]
    )
    assert description.match("Line one\nLine two\tok")
    assert not description.match("bell\u0007")
    # Any operation may answer 400 (a NUL in the URL) and 429 (rate limit).
    summary = json.loads(anon_client.get("/v1/openapi").content)["paths"]["/points/{key}/summary"]
    assert {"400", "429"} <= set(summary["get"]["responses"])


def test_docs_pages_render(anon_client, db):
    assert anon_client.get("/v1/docs").status_code == 200
    assert anon_client.get("/admin/v1/docs").status_code == 200


def test_writes_to_unknown_api_routes_are_json_404_not_a_csrf_page(org):
    from django.test import Client

    browser_like = Client(enforce_csrf_checks=True)
    for method in ("post", "patch", "delete", "put"):
        for path in (
            "/v1/nope",
            "/api/nope",
            "/admin/v1/nope",
            "/ext/v1/nope",
            "/admin/ext/v1/nope",
        ):
            response = getattr(browser_like, method)(
                path, "{}", content_type="application/json", HTTP_X_API_KEY=org.admin_key
            )
            assert response.status_code == 404, (method, path)
            assert response["Content-Type"] == "application/json"
            assert set(response.json()) == {"error"}


@pytest.mark.parametrize(
    "path",
    [
        "/v1/users/a%00b",
        "/v1/users/a%00b/metrics",
        "/v1/streaks?userIds=a%00b",
        "/v1/leaderboards/board?userId=a%00b",
        "/admin/v1/metrics?ids=a%00b",
        "/v1/users/u1?x%00=1",
    ],
)
def test_a_nul_byte_in_the_url_is_a_400_everywhere(api_client, path):
    response = api_client.get(path)
    assert response.status_code == 400
    assert response.json() == {"error": "NUL characters are not allowed in URLs"}


def test_the_request_log_escapes_control_characters(api_client, caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="gamify.request"):
        api_client.get("/v1/users/x%0aforged=1%0d", HTTP_TENANT_ID="t\nforged")
    [line] = [r.getMessage() for r in caplog.records if r.name == "gamify.request"]
    assert "\n" not in line
    assert "\r" not in line
    assert "path=/v1/users/x\\x0aforged=1\\x0d" in line
    assert "tenant=t\\x0aforged" in line
