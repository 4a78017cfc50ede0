"""Admin API routes of the streams, under /admin/ext/v1/ (gamify/ext_admin_api_urls.py)."""

from django.urls import path

from apps.streams import api, views

urlpatterns = [
    path("streams/tokens", api.StreamTokenApi.as_view(), name="ext-stream-tokens"),
    path("stream", api.documented(views.tenant_stream, api.TenantStreamDocs), name="ext-stream"),
]
