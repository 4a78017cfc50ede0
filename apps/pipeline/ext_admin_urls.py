"""Admin API routes of the pipeline under /admin/ext/v1/ (gamify/ext_admin_api_urls.py):
undoing events."""

from django.urls import path

from apps.pipeline.undo_views import EventsUndoApi

urlpatterns = [
    path("events/undo", EventsUndoApi.as_view(), name="ext-admin-events-undo"),
]
