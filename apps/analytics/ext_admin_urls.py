"""Admin API routes of analytics under /admin/ext/v1/ (gamify/ext_admin_api_urls.py): the
Impact Score. The older analytics series stay under /admin/v1/ (admin_urls.py)."""

from django.urls import path

from apps.analytics import admin_views as views

urlpatterns = [
    path("analytics/impact", views.ImpactApi.as_view(), name="ext-admin-analytics-impact"),
]
