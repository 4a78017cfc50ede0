"""Wire shapes of webhook endpoints and deliveries: input serializers, and the response shapes
that render and document themselves (apps/core/api/shapes.py)."""

from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.core.api.shapes import OMIT, Shape, out
from apps.webhooks.choices import DeliveryStatus, EndpointStatus, EventType


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


# --- responses: each shape renders (Shape.render) and documents itself ------------------
# Component names drop the Serializer suffix (WebhookEndpoint, WebhookDelivery, WebhookAttempt),
# which keeps the classes apart from the models of the same name.


def _once(secret: str | None) -> Any:
    return OMIT if secret is None else secret


class WebhookEndpointSerializer(Shape):
    # Renders a WebhookEndpoint; its secret only in the creation response (set by the collection
    # as new_secret: only a ciphertext is kept).
    id = out(serializers.UUIDField(), lambda endpoint, _: str(endpoint.public_id))
    url = serializers.CharField()
    description = serializers.CharField()
    events = out(
        serializers.ListField(
            child=serializers.ChoiceField(choices=EventType.choices), help_text="[]: every type."
        ),
        lambda endpoint, _: list(endpoint.events),
    )
    status = serializers.ChoiceField(choices=EndpointStatus.choices)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()
    disabledReason = out(
        serializers.CharField(required=False, allow_null=True),
        lambda endpoint, _: (
            endpoint.disabled_reason or None if endpoint.status == EndpointStatus.DISABLED else OMIT
        ),
    )
    secret = out(
        serializers.CharField(
            required=False, help_text="Only in the creation response: whsec_ + base64 (32 bytes)."
        ),
        lambda endpoint, _: _once(getattr(endpoint, "new_secret", None)),
    )


class WebhookAttemptSerializer(Shape):
    # Renders a WebhookAttempt.
    at = out(serializers.DateTimeField(), "created")
    statusCode = serializers.IntegerField(allow_null=True)
    durationMs = serializers.IntegerField()
    response = out(
        serializers.CharField(help_text="The first 4 KB of the answer."), "response_excerpt"
    )
    error = out(serializers.CharField(allow_null=True), lambda attempt, _: attempt.error or None)


class WebhookDeliverySerializer(Shape):
    # Renders a WebhookDelivery, its attempts prefetched.
    id = out(
        serializers.UUIDField(help_text="The webhook-id header, the same on every attempt."),
        lambda delivery, _: str(delivery.public_id),
    )
    eventType = out(serializers.ChoiceField(choices=EventType.choices), "event.type")
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    attempts = serializers.IntegerField()
    nextAttemptAt = out(
        serializers.DateTimeField(allow_null=True),
        lambda delivery, _: (
            delivery.next_attempt_at if delivery.status == DeliveryStatus.PENDING else None
        ),
    )
    deliveredAt = serializers.DateTimeField(allow_null=True)
    created = serializers.DateTimeField()
    log = out(
        WebhookAttemptSerializer(many=True),
        lambda delivery, _: [WebhookAttemptSerializer.render(a) for a in delivery.log.all()],
    )


class RotatedSecret(Shape):
    # Renders a WebhookEndpoint with, as context, its new secret.
    id = out(serializers.UUIDField(), lambda endpoint, _: str(endpoint.public_id))
    secret = out(
        serializers.CharField(help_text="The new secret; the old one signs too for 24 h."),
        lambda _, secret: secret,
    )


class Redelivered(Shape):
    # Renders the number of deliveries queued again.
    redelivered = out(serializers.IntegerField(), lambda count, _: count)


class TestSent(Shape):
    # Renders the test event.
    eventId = out(serializers.UUIDField(), lambda event, _: str(event.public_id))
