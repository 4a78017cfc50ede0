"""Admin API routes of analytics: the dashboard's series as JSON (a gamify extension)."""

from django.urls import path

from apps.analytics import admin_views as views

urlpatterns = [
    path("analytics/overview", views.OverviewApi.as_view(), name="admin-analytics-overview"),
    path(
        "analytics/active-users",
        views.ActiveUsersApi.as_view(),
        name="admin-analytics-active-users",
    ),
    path("analytics/new-users", views.NewUsersApi.as_view(), name="admin-analytics-new-users"),
    path("analytics/events", views.EventsApi.as_view(), name="admin-analytics-events"),
    path("analytics/retention", views.RetentionApi.as_view(), name="admin-analytics-retention"),
    path("analytics/streaks", views.StreaksApi.as_view(), name="admin-analytics-streaks"),
    path("analytics/points", views.PointsApi.as_view(), name="admin-analytics-points"),
    path(
        "analytics/achievements",
        views.AchievementsApi.as_view(),
        name="admin-analytics-achievements",
    ),
    path(
        "analytics/leaderboards",
        views.LeaderboardsApi.as_view(),
        name="admin-analytics-leaderboards",
    ),
]
