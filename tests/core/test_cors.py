"""Cross-origin requests (README, "Widgets"): the origins of CORS_ALLOWED_ORIGINS may call the
application APIs from a browser (reads with an application key, the streams with a stream
token); the admin APIs and the dashboard answer no other origin; the widgets' modules load from
anywhere."""

import re
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from gamify.env import env_origins
from tests.conftest import Client
from tests.factories import OrganizationWithKey
from tests.openapi_check import undocumented

pytestmark = pytest.mark.django_db

SHOP = "https://shop.example.com"


@pytest.fixture(autouse=True)
def allowed(settings: Any) -> None:
    settings.CORS_ALLOWED_ORIGINS = [SHOP]
    settings.CORS_ALLOW_ALL_ORIGINS = False


def preflight(path: str, origin: str = SHOP, method: str = "GET") -> Any:
    with undocumented("a CORS preflight: the middleware answers it, no route does"):
        return Client().options(
            path,
            HTTP_ORIGIN=origin,
            HTTP_ACCESS_CONTROL_REQUEST_METHOD=method,
            HTTP_ACCESS_CONTROL_REQUEST_HEADERS="x-api-key, tenant-id, content-type",
        )


@pytest.mark.parametrize(
    "path", ["/v1/users/ada/streak", "/api/users/ada/streak", "/ext/v1/users/ada/stream"]
)
def test_an_allowed_origin_may_send_the_api_key_header_to_the_application_apis(path: str) -> None:
    response = preflight(path)
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == SHOP
    allowed = response["Access-Control-Allow-Headers"]
    assert {"x-api-key", "tenant-id", "content-type", "last-event-id"} <= set(allowed.split(", "))
    assert "Access-Control-Allow-Credentials" not in response


def test_an_event_may_be_posted_from_an_allowed_origin() -> None:
    response = preflight("/v1/metrics/lessons/event", method="POST")
    assert response["Access-Control-Allow-Origin"] == SHOP
    assert "POST" in response["Access-Control-Allow-Methods"]


def test_a_stream_token_may_not_be_minted_from_a_browser() -> None:
    response = preflight("/admin/ext/v1/streams/tokens", method="POST")
    assert "Access-Control-Allow-Origin" not in response


def test_reads_and_their_refusals_carry_the_header_the_page_needs_to_read_them() -> None:
    org = OrganizationWithKey("Shop")
    key = org.application_key("ada")
    client = Client()
    response = client.post("/v1/users", {"id": "ada"}, HTTP_X_API_KEY=key, HTTP_ORIGIN=SHOP)
    assert response.status_code == 201
    assert response["Access-Control-Allow-Origin"] == SHOP
    read = client.get("/v1/users/ada/streak", HTTP_X_API_KEY=key, HTTP_ORIGIN=SHOP)
    assert read.status_code == 200
    assert read["Access-Control-Allow-Origin"] == SHOP
    # Another user's data: refused, and the page can read why.
    refused = client.get("/v1/users/bob/streak", HTTP_X_API_KEY=key, HTTP_ORIGIN=SHOP)
    assert refused.status_code == 403
    assert refused["Access-Control-Allow-Origin"] == SHOP


def test_a_stream_refusal_carries_the_header_too(settings: Any) -> None:
    settings.STREAMS_REDIS_URL = ""
    response = Client().get("/ext/v1/users/ada/stream?token=x", HTTP_ORIGIN=SHOP)
    assert response.status_code == 503
    assert response["Access-Control-Allow-Origin"] == SHOP


def test_an_origin_not_listed_gets_no_header() -> None:
    response = preflight("/v1/users/ada/streak", origin="https://elsewhere.example.com")
    assert "Access-Control-Allow-Origin" not in response
    read = Client().get("/v1/users/ada/streak", HTTP_ORIGIN="https://shop.example.com.evil.test")
    assert "Access-Control-Allow-Origin" not in read


@pytest.mark.parametrize("path", ["/admin/v1/metrics", "/admin/ext/v1/stream", "/dashboard/login/"])
def test_the_admin_apis_and_the_dashboard_answer_no_other_origin(path: str) -> None:
    response = preflight(path)
    assert "Access-Control-Allow-Origin" not in response
    read = Client().get(path, HTTP_ORIGIN=SHOP)
    assert "Access-Control-Allow-Origin" not in read


def test_by_default_no_origin_is_allowed(settings: Any) -> None:
    settings.CORS_ALLOWED_ORIGINS = []
    assert "Access-Control-Allow-Origin" not in preflight("/v1/users/ada/streak")


def test_a_star_allows_every_origin(settings: Any) -> None:
    settings.CORS_ALLOWED_ORIGINS = []
    settings.CORS_ALLOW_ALL_ORIGINS = True
    response = preflight("/v1/users/ada/streak", origin="https://anyone.example.org")
    assert response["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize(
    ("raw", "origins"),
    [
        ("", []),
        ("*", ["*"]),
        ("https://shop.example.com", ["https://shop.example.com"]),
        (
            " https://a.example.com , http://localhost:3000,",
            ["https://a.example.com", "http://localhost:3000"],
        ),
        ("http://[::1]:8001", ["http://[::1]:8001"]),
    ],
)
def test_the_setting_reads_origins(
    monkeypatch: pytest.MonkeyPatch, raw: str, origins: list
) -> None:
    monkeypatch.setenv("CORS_ALLOWED_ORIGINS", raw)
    assert env_origins("CORS_ALLOWED_ORIGINS") == origins


@pytest.mark.parametrize(
    "raw",
    [
        "https://shop.example.com/",
        "https://shop.example.com/widgets",
        "shop.example.com",
        "ftp://shop.example.com",
        "https://*.example.com",
        "*,https://shop.example.com",
        "https://",
    ],
)
def test_the_setting_refuses_what_is_not_an_origin(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("CORS_ALLOWED_ORIGINS", raw)
    with pytest.raises(ImproperlyConfigured, match=re.escape("is not an origin such as")):
        env_origins("CORS_ALLOWED_ORIGINS")


def test_the_widgets_modules_are_served_to_every_origin() -> None:
    entry = Client().get("/static/gamify-widgets/gamify-widgets.js", HTTP_ORIGIN=SHOP)
    assert entry.status_code == 200
    assert entry["Content-Type"].startswith("text/javascript")
    assert entry["Access-Control-Allow-Origin"] == "*"
    source = b"".join(entry.streaming_content).decode()
    imported = re.findall(r'from "\./([\w-]+\.js)"', source)
    assert set(imported) >= {"achievements.js", "leaderboard.js", "points.js", "streak.js"}
    for name in imported:
        module = Client().get(f"/static/gamify-widgets/{name}")
        assert module.status_code == 200, name
