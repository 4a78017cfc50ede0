"""The dashboard's middleware (sessions, CSRF, the logged-in user, messages) stays off the APIs'
paths, which authenticate with X-API-KEY, and keeps working for the dashboard."""

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory

from apps.core.middleware import (
    DashboardAuthenticationMiddleware,
    DashboardMessageMiddleware,
    DashboardSessionMiddleware,
)

API_PATHS = [
    "/v1/users/u1",
    "/api/users/u1",
    "/admin/v1/metrics",
    "/ext/v1/leagues",
    "/admin/ext/v1/leagues",
]
OTHER_PATHS = ["/dashboard/", "/dashboard/login/", "/notifications/preferences/x", "/healthz"]
PASSWORD = "the-right-password"


def _seen(request: HttpRequest) -> HttpResponse:
    response = HttpResponse()
    response.seen = {  # type: ignore[attr-defined]
        "session": hasattr(request, "session"),
        "user": hasattr(request, "user"),
        "messages": hasattr(request, "_messages"),
    }
    return response


def _chain() -> Any:
    # In MIDDLEWARE's order: sessions first, the user and messages read the session.
    return DashboardSessionMiddleware(
        DashboardAuthenticationMiddleware(DashboardMessageMiddleware(_seen))
    )


@pytest.mark.parametrize("path", API_PATHS)
def test_an_api_request_goes_past_sessions_user_and_messages(path: str) -> None:
    request = RequestFactory().get(path, HTTP_COOKIE=f"{settings.SESSION_COOKIE_NAME}=abc")
    response = _chain()(request)
    assert response.seen == {"session": False, "user": False, "messages": False}
    assert settings.SESSION_COOKIE_NAME not in response.cookies


@pytest.mark.parametrize("path", OTHER_PATHS)
def test_every_other_request_gets_them(path: str) -> None:
    response = _chain()(RequestFactory().get(path))
    assert response.seen == {"session": True, "user": True, "messages": True}


@pytest.mark.django_db
def test_a_tokenless_api_post_passes_csrf_and_a_dashboard_post_does_not(org: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    created = client.post(
        "/admin/v1/metrics",
        [{"name": "Words", "key": "words"}],
        content_type="application/json",
        HTTP_X_API_KEY=org.admin_key,
    )
    assert created.status_code == 201
    assert client.post("/dashboard/login/", {"username": "x"}).status_code == 403


def test_the_settings_use_the_dashboard_only_classes_and_pass_the_system_checks() -> None:
    for name in ("Session", "Authentication", "Message"):
        assert f"apps.core.middleware.Dashboard{name}Middleware" in settings.MIDDLEWARE
    # Django's own, by name: `check --deploy` asks for it (tests/core/test_commands.py).
    assert "django.middleware.csrf.CsrfViewMiddleware" in settings.MIDDLEWARE
    call_command("check", fail_level="WARNING")  # admin.E408-E410, axes.W002 among them


@pytest.mark.django_db
def test_the_dashboard_still_logs_in_with_csrf_enforced() -> None:
    get_user_model().objects.create_superuser("admin", "a@example.com", PASSWORD)
    client = Client(enforce_csrf_checks=True)
    form = client.get("/dashboard/login/")
    token = form.cookies[settings.CSRF_COOKIE_NAME].value
    credentials = {"username": "admin", "password": PASSWORD}
    assert client.post("/dashboard/login/", credentials).status_code == 403  # no token
    response = client.post(
        "/dashboard/login/?next=/dashboard/", {**credentials, "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302
    assert response["Location"] == "/dashboard/"
    assert settings.SESSION_COOKIE_NAME in response.cookies
    assert client.get("/dashboard/").status_code == 200  # the session holds the login


@pytest.mark.django_db
def test_an_api_answer_sets_no_cookie_even_with_a_dashboard_login(org: Any) -> None:
    staff = get_user_model().objects.create_superuser("admin", "a@example.com", PASSWORD)
    client = Client()
    client.force_login(staff)
    response = client.get("/admin/v1/metrics", HTTP_X_API_KEY=org.admin_key)
    assert response.status_code == 200
    assert not response.cookies
    assert "Cookie" not in response.get("Vary", "")
    # The session cookie does not stand in for a key on the APIs.
    assert client.get("/admin/v1/metrics").status_code == 401
