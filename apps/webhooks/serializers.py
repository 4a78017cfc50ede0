"""Wire shapes of webhook endpoints and deliveries: input serializers, and the response shapes,
each a `Shape` that documents the body (apps/core/api/shapes.py) with, right below it, the
typed function that renders it."""

from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.core.api.shapes import Shape, renders
from apps.webhooks.choices import DeliveryStatus, EndpointStatus, EventType
from apps.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent


class _EndpointFields(StrictSerializer):
    url = StringField(max_length=2000)
    description = StringField(max_length=1000, required=False, allow_blank=True)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.choices),
        required=False,
        allow_null=True,
        max_length=len(EventType.values),
    )
    status = serializers.ChoiceField(choices=EndpointStatus.choices, required=False)


class EndpointCreateSerializer(_EndpointFields):
    pass


class EndpointUpdateSerializer(_EndpointFields):
    id = serializers.UUIDField()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["url"].required = False


class RedeliverSerializer(StrictSerializer):
    since = serializers.DateTimeField()


# --- responses: each shape documents a body; the function below it renders it -------------
# Component names drop the Serializer suffix (WebhookEndpoint, WebhookDelivery, WebhookAttempt),
# which keeps the classes apart from the models of the same name.


class WebhookEndpointSerializer(Shape):
    id = serializers.UUIDField()
    url = serializers.CharField()
    description = serializers.CharField()
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.choices), help_text="[]: every type."
    )
    status = serializers.ChoiceField(choices=EndpointStatus.choices)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()
    disabledReason = serializers.CharField(required=False, allow_null=True)
    secret = serializers.CharField(
        required=False, help_text="Only in the creation response: whsec_ + base64 (32 bytes)."
    )


@renders(WebhookEndpointSerializer)
def webhook_endpoint_serializer_render(endpoint: WebhookEndpoint) -> dict[str, Any]:
    """The endpoint; its secret only in the creation response (set by the collection as
    `new_secret`: only a ciphertext is kept)."""
    body: dict[str, Any] = {
        "id": str(endpoint.public_id),
        "url": endpoint.url,
        "description": endpoint.description,
        "events": list(endpoint.events),
        "status": endpoint.status,
        "created": endpoint.created,
        "updated": endpoint.updated,
    }
    if endpoint.status == EndpointStatus.DISABLED:
        body["disabledReason"] = endpoint.disabled_reason or None
    secret: str | None = getattr(endpoint, "new_secret", None)
    if secret is not None:
        body["secret"] = secret
    return body


class WebhookAttemptSerializer(Shape):
    at = serializers.DateTimeField()
    statusCode = serializers.IntegerField(allow_null=True)
    durationMs = serializers.IntegerField()
    response = serializers.CharField(help_text="The first 4 KB of the answer.")
    error = serializers.CharField(allow_null=True)


@renders(WebhookAttemptSerializer)
def webhook_attempt_serializer_render(attempt: WebhookAttempt) -> dict[str, Any]:
    return {
        "at": attempt.created,
        "statusCode": attempt.status_code,
        "durationMs": attempt.duration_ms,
        "response": attempt.response_excerpt,
        "error": attempt.error or None,
    }


class WebhookDeliverySerializer(Shape):
    id = serializers.UUIDField(help_text="The webhook-id header, the same on every attempt.")
    eventType = serializers.ChoiceField(choices=EventType.choices)
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    attempts = serializers.IntegerField()
    nextAttemptAt = serializers.DateTimeField(allow_null=True)
    deliveredAt = serializers.DateTimeField(allow_null=True)
    created = serializers.DateTimeField()
    log = WebhookAttemptSerializer(many=True)


@renders(WebhookDeliverySerializer)
def webhook_delivery_serializer_render(delivery: WebhookDelivery) -> dict[str, Any]:
    """The delivery, its attempts prefetched."""
    pending = delivery.status == DeliveryStatus.PENDING
    return {
        "id": str(delivery.public_id),
        "eventType": delivery.event.type,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "nextAttemptAt": delivery.next_attempt_at if pending else None,
        "deliveredAt": delivery.delivered_at,
        "created": delivery.created,
        "log": [webhook_attempt_serializer_render(a) for a in delivery.log.all()],
    }


class RotatedSecret(Shape):
    id = serializers.UUIDField()
    secret = serializers.CharField(help_text="The new secret; the old one signs too for 24 h.")


@renders(RotatedSecret)
def rotated_secret_render(endpoint: WebhookEndpoint, secret: str) -> dict[str, Any]:
    return {"id": str(endpoint.public_id), "secret": secret}


class Redelivered(Shape):
    redelivered = serializers.IntegerField()


@renders(Redelivered)
def redelivered_render(count: int) -> dict[str, Any]:
    """The number of deliveries queued again."""
    return {"redelivered": count}


class TestSent(Shape):
    eventId = serializers.UUIDField()


@renders(TestSent)
def test_sent_render(event: WebhookEvent) -> dict[str, Any]:
    return {"eventId": str(event.public_id)}
