"""Administrative API routes, mounted under /admin/v1/."""

from django.urls import include, path

urlpatterns = [
    # Before the metrics collection, whose item route would otherwise claim "metrics/events".
    path("", include("apps.pipeline.admin_urls")),
    path("", include("apps.metrics.admin_urls")),
    path("", include("apps.streaks.admin_urls")),
    path("", include("apps.achievements.admin_urls")),
    path("", include("apps.points.admin_urls")),
    path("", include("apps.leaderboards.admin_urls")),
    path("", include("apps.notifications.admin_urls")),
    path("", include("apps.webhooks.admin_urls")),
    path("", include("apps.users.admin_urls")),
    path("", include("apps.accounts.admin_urls")),
    path("", include("apps.analytics.admin_urls")),
]
