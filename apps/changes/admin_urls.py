"""Admin API routes of the configuration's history, file, diff and promote, and of
environments, under /admin/ext/v1/ (gamify/ext_admin_api_urls.py)."""

from django.urls import path

from apps.changes import views

urlpatterns = [
    path("history", views.HistoryApi.as_view()),
    path("history/<str:change_id>", views.ChangeApi.as_view()),
    path("history/<str:change_id>/revert", views.ChangeRevertApi.as_view()),
    path("config", views.ConfigApi.as_view()),
    path("config/schema", views.ConfigSchemaApi.as_view()),
    path("config/apply", views.ConfigApplyApi.as_view()),
    path("config/diff", views.DiffApi.as_view()),
    path("config/promote", views.PromoteApi.as_view()),
    path("environments", views.EnvironmentsApi.as_view()),
]
