"""OpenAPI documentation of webhook endpoints and deliveries (documentation only): the path
parameters. The response shapes and their renders are in apps/webhooks/serializers.py."""

from drf_spectacular.utils import OpenApiParameter

ENDPOINT_ID = OpenApiParameter(
    "object_id", str, OpenApiParameter.PATH, description="The webhook endpoint's id."
)
DELIVERY_ID = OpenApiParameter(
    "delivery_id", str, OpenApiParameter.PATH, description="The delivery's id (webhook-id)."
)
