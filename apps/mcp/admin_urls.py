"""The MCP endpoint, under /admin/ext/v1/ (gamify/ext_admin_api_urls.py)."""

from django.urls import path

from apps.mcp.views import McpApi

urlpatterns = [path("mcp", McpApi.as_view(), name="ext-admin-mcp")]
