"""Application API routes, mounted under both /v1/ and /api/ (docs/architecture.md §4)."""

from django.urls import include, path

urlpatterns = [
    path("", include("apps.pipeline.urls")),
    path("", include("apps.metrics.urls")),
    path("", include("apps.streaks.urls")),
    path("", include("apps.achievements.urls")),
    path("", include("apps.points.urls")),
    path("", include("apps.leaderboards.urls")),
    path("", include("apps.notifications.urls")),
    path("", include("apps.analytics.urls")),
]
