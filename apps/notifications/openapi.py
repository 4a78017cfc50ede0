"""OpenAPI documentation of preferences, templates and push channels (documentation only): the
template id parameter. The response shapes render and document themselves
(apps/notifications/serializers.py)."""

from drf_spectacular.utils import OpenApiParameter

TEMPLATE_ID = OpenApiParameter(
    "object_id", str, OpenApiParameter.PATH, description="The email template's id."
)
