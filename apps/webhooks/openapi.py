"""OpenAPI documentation of webhook endpoints and deliveries (documentation only)."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.webhooks.choices import DeliveryStatus, EndpointStatus, EventType


class WebhookEndpoint(serializers.Serializer):
    id = serializers.UUIDField()
    url = serializers.CharField()
    description = serializers.CharField()
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.choices), help_text="[]: every type."
    )
    status = serializers.ChoiceField(choices=EndpointStatus.choices)
    disabledReason = serializers.CharField(required=False, allow_null=True)
    secret = serializers.CharField(
        required=False, help_text="Only in the creation response: whsec_ + base64 (32 bytes)."
    )
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class WebhookAttempt(serializers.Serializer):
    at = serializers.DateTimeField()
    statusCode = serializers.IntegerField(allow_null=True)
    durationMs = serializers.IntegerField()
    response = serializers.CharField(help_text="The first 4 KB of the answer.")
    error = serializers.CharField(allow_null=True)


class WebhookDelivery(serializers.Serializer):
    id = serializers.UUIDField(help_text="The webhook-id header, the same on every attempt.")
    eventType = serializers.ChoiceField(choices=EventType.choices)
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    attempts = serializers.IntegerField()
    nextAttemptAt = serializers.DateTimeField(allow_null=True)
    deliveredAt = serializers.DateTimeField(allow_null=True)
    created = serializers.DateTimeField()
    log = WebhookAttempt(many=True)


class RotatedSecret(serializers.Serializer):
    id = serializers.UUIDField()
    secret = serializers.CharField(help_text="The new secret; the old one signs too for 24 h.")


class Redelivered(serializers.Serializer):
    redelivered = serializers.IntegerField()


class TestSent(serializers.Serializer):
    eventId = serializers.UUIDField()


ENDPOINT_ID = OpenApiParameter(
    "object_id", str, OpenApiParameter.PATH, description="The webhook endpoint's id."
)
DELIVERY_ID = OpenApiParameter(
    "delivery_id", str, OpenApiParameter.PATH, description="The delivery's id (webhook-id)."
)
