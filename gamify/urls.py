from collections.abc import Callable

from django.contrib import admin
from django.http import HttpResponseBase
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularRedocView

from apps.core.api.errors import json_not_found
from apps.core.health import healthz


def _schema(urlconf: str, prefix: str, title: str) -> Callable[..., HttpResponseBase]:
    return SpectacularJSONAPIView.as_view(
        urlconf=urlconf,
        custom_settings={"TITLE": title, "SERVERS": [{"url": prefix}], "SCHEMA_PATH_PREFIX": ""},
    )


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
    path("v1/docs", SpectacularRedocView.as_view(url_name="openapi-app"), name="docs-app"),
    path(
        "admin/v1/docs", SpectacularRedocView.as_view(url_name="openapi-admin"), name="docs-admin"
    ),
    path("docs", RedirectView.as_view(url="/v1/docs"), name="docs"),
    path("v1/", include("gamify.api_urls")),
    path("api/", include("gamify.api_urls")),
    path("admin/v1/", include("gamify.admin_api_urls")),
    path("dashboard/", admin.site.urls),
    # End-user pages linked from emails: manage preferences, one-click unsubscribe.
    path("notifications/", include("apps.notifications.page_urls")),
    path("", RedirectView.as_view(url="/dashboard/")),
    # Unknown API routes answer JSON even with DEBUG on (Django's debug 404 page is HTML).
    # CSRF-exempt: an unknown API route answers the JSON 404 to every method, not Django's
    # HTML CSRF page (API clients send no CSRF token; nothing here reads cookies).
    re_path(r"^(?:v1|api|admin/v1)/", csrf_exempt(json_not_found)),
]

handler400 = "apps.core.api.errors.json_bad_request"
handler403 = "apps.core.api.errors.json_permission_denied"
handler404 = "apps.core.api.errors.json_not_found"
handler500 = "apps.core.api.errors.json_server_error"
