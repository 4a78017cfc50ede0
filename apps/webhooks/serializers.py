"""Wire shapes of webhook endpoints and deliveries."""

from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.webhooks.choices import EndpointStatus, EventType
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint


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


def endpoint_render(endpoint: WebhookEndpoint) -> dict[str, Any]:
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
    return body


def delivery_render(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "id": str(delivery.public_id),
        "eventType": delivery.event.type,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "nextAttemptAt": delivery.next_attempt_at if delivery.status == "pending" else None,
        "deliveredAt": delivery.delivered_at,
        "created": delivery.created,
        "log": [
            {
                "at": attempt.created,
                "statusCode": attempt.status_code,
                "durationMs": attempt.duration_ms,
                "response": attempt.response_excerpt,
                "error": attempt.error or None,
            }
            for attempt in delivery.log.all()
        ],
    }
