from django.urls import path

from apps.streaks import views

urlpatterns = [
    path("streaks/settings", views.StreakSettingsApi.as_view(), name="admin-streak-settings"),
    path("streaks/freezes", views.StreakFreezesApi.as_view(), name="admin-streak-freezes"),
    path("streaks/pauses", views.StreakPausesApi.as_view(), name="admin-streak-pauses"),
    path("streaks/restore", views.StreakRestoreApi.as_view(), name="admin-streak-restore"),
    path("streaks/reset", views.StreakResetApi.as_view(), name="admin-streak-reset"),
]
