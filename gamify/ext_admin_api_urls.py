"""Administrative API routes of gamify's extensions (features beyond the Trophy API), mounted
under /admin/ext/v1/ and documented apart, at /admin/ext/v1/openapi (docs/architecture.md §4)."""

from django.urls import include, path

urlpatterns = [
    path("", include("apps.leagues.admin_urls")),
    path("", include("apps.quests.admin_urls")),
    path("", include("apps.streams.admin_urls")),
    path("", include("apps.changes.admin_urls")),
    path("", include("apps.analytics.ext_admin_urls")),
    path("", include("apps.social.admin_urls")),
    path("", include("apps.fairplay.admin_urls")),
    path("", include("apps.mcp.admin_urls")),
    path("", include("apps.pipeline.ext_admin_urls")),
]
