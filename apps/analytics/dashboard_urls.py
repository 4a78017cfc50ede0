"""Dashboard pages of analytics, included by the dashboard site under /dashboard/analytics/."""

from django.contrib import admin
from django.urls import path

from apps.analytics.dashboard import analytics

urlpatterns = [
    path("", admin.site.admin_view(analytics), name="analytics"),
]
