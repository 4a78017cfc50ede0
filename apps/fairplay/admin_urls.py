"""Admin API routes of fair play, under /admin/ext/v1/ (gamify/ext_admin_api_urls.py)."""

from django.urls import path

from apps.core.bulk import collection_urls
from apps.fairplay import views

urlpatterns = [
    path(
        "users/<str:user_id>/exclusion",
        views.UserExclusionApi.as_view(),
        name="admin-ext-user-exclusion",
    ),
]
urlpatterns += collection_urls(
    "anomaly-rules", views.AnomalyRuleCollection(), "admin-ext-anomaly-rules"
)
