"""Dashboard pages of the configuration, included by the dashboard site under
/dashboard/configuration/."""

from django.contrib import admin
from django.urls import path

from apps.changes import dashboard

urlpatterns = [
    path("history/", admin.site.admin_view(dashboard.history), name="config-history"),
    path(
        "history/<str:change_id>/revert/",
        admin.site.admin_view(dashboard.revert),
        name="config-revert",
    ),
    path("promote/", admin.site.admin_view(dashboard.promote), name="config-promote"),
    path("clone/", admin.site.admin_view(dashboard.clone), name="config-clone"),
]
