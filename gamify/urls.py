from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.http import HttpResponseBase
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularRedocView

from apps.core.api.errors import json_not_found
from apps.core.health import healthz


def _schema(
    urlconf: str, prefix: str, title: str, extra: dict[str, Any] | None = None
) -> Callable[..., HttpResponseBase]:
    custom = {
        "TITLE": title,
        "SERVERS": [{"url": prefix}],
        "SCHEMA_PATH_PREFIX": "",
        **(extra or {}),
    }
    return SpectacularJSONAPIView.as_view(urlconf=urlconf, custom_settings=custom)


# Features beyond the Trophy API live under their own prefixes, /ext/v1/ and /admin/ext/v1/,
# with documents of their own: Trophy's routes, bodies and documents never change because of
# them, so every official SDK keeps working (docs/architecture.md §4).
_EXTENSIONS = {
    "DESCRIPTION": "gamify extensions: features beyond the Trophy API, under a prefix of their "
    "own. The Trophy-compatible routes are documented apart and never change because of them.",
    "TAGS": [
        {
            "name": "leagues",
            "description": "Weekly cohorts with tiers, promotion and demotion (a gamify "
            "extension: Trophy has no leagues).",
        },
        {
            "name": "configuration",
            "description": "The change history of the configuration with revert, the "
            "configuration as a file (export, apply), diff and promote between environments or "
            "tenants, and environments cloned from others.",
        },
        {
            "name": "neighbours",
            "description": "A user's rank with the users just above and below them, on any "
            "leaderboard and in a league's cohort (a gamify extension).",
        },
        {
            "name": "friends",
            "description": "Friends lists, and leaderboards restricted to a user and their "
            "friends (a gamify extension).",
        },
        {
            "name": "undo",
            "description": "Undoing recorded events: their totals, points, streak, "
            "achievements, leaderboard and league values set right, recorded with who and why "
            "(a gamify extension).",
        },
        {
            "name": "fair play",
            "description": "Excluding a user from every ranking, with their events still "
            "counted (a gamify extension).",
        },
        {
            "name": "mcp",
            "description": "The Model Context Protocol server, for AI agents that configure "
            "gamify (a gamify extension).",
        },
        {
            "name": "quests",
            "description": "Goals per day, week or month with rewards, chosen per user from "
            "pools (a gamify extension: Trophy has no quests).",
        },
    ],
}


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path(
        "v1/openapi",
        _schema("gamify.api_urls", "/v1", "gamify application API"),
        name="openapi-app",
    ),
    path(
        "admin/v1/openapi",
        _schema("gamify.admin_api_urls", "/admin/v1", "gamify admin API"),
        name="openapi-admin",
    ),
    path(
        "ext/v1/openapi",
        _schema(
            "gamify.ext_api_urls", "/ext/v1", "gamify extensions: application API", _EXTENSIONS
        ),
        name="openapi-ext-app",
    ),
    path(
        "admin/ext/v1/openapi",
        _schema(
            "gamify.ext_admin_api_urls",
            "/admin/ext/v1",
            "gamify extensions: admin API",
            _EXTENSIONS,
        ),
        name="openapi-ext-admin",
    ),
    path("v1/docs", SpectacularRedocView.as_view(url_name="openapi-app"), name="docs-app"),
    path(
        "admin/v1/docs", SpectacularRedocView.as_view(url_name="openapi-admin"), name="docs-admin"
    ),
    path(
        "ext/v1/docs", SpectacularRedocView.as_view(url_name="openapi-ext-app"), name="docs-ext-app"
    ),
    path(
        "admin/ext/v1/docs",
        SpectacularRedocView.as_view(url_name="openapi-ext-admin"),
        name="docs-ext-admin",
    ),
    path("docs", RedirectView.as_view(url="/v1/docs"), name="docs"),
    path("v1/", include("gamify.api_urls")),
    path("api/", include("gamify.api_urls")),
    path("admin/v1/", include("gamify.admin_api_urls")),
    path("ext/v1/", include("gamify.ext_api_urls")),
    path("admin/ext/v1/", include("gamify.ext_admin_api_urls")),
    path("dashboard/", admin.site.urls),
    # End-user pages linked from emails: manage preferences, one-click unsubscribe.
    path("notifications/", include("apps.notifications.page_urls")),
    path("", RedirectView.as_view(url="/dashboard/")),
    # Unknown API routes answer JSON even with DEBUG on (Django's debug 404 page is HTML).
    # CSRF-exempt: an unknown API route answers the JSON 404 to every method, not Django's
    # HTML CSRF page (API clients send no CSRF token; nothing here reads cookies).
    re_path(r"^(?:v1|api|admin/v1|ext/v1|admin/ext/v1)/", csrf_exempt(json_not_found)),
]

handler400 = "apps.core.api.errors.json_bad_request"
handler403 = "apps.core.api.errors.json_permission_denied"
handler404 = "apps.core.api.errors.json_not_found"
handler500 = "apps.core.api.errors.json_server_error"
