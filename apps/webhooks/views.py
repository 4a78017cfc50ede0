"""Admin API of webhooks (a gamify extension): endpoints with the usual bulk envelopes, secret
rotation, a test event, the delivery log and redelivery."""

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.params import is_uuid, query_limit_skip
from apps.core.api.views import AdminApi
from apps.core.bulk import Collection, validated
from apps.core.errors import NotFoundError
from apps.core.openapi import ADMIN_READ_ERRORS, ADMIN_WRITE_ERRORS, errors
from apps.core.scope import Scope
from apps.webhooks import configuration, delivery, openapi, selectors, serializers, services
from apps.webhooks.domain import WebhookEndpointSettings
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint


class WebhookCollection(Collection):
    noun = "Webhook"
    create_serializer = serializers.EndpointCreateSerializer
    update_serializer = serializers.EndpointUpdateSerializer
    output_schema = serializers.WebhookEndpointSerializer
    schema_prefix = "webhooks"

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[WebhookEndpoint]:
        return selectors.endpoints_list(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> WebhookEndpoint | None:
        return selectors.endpoint_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> WebhookEndpoint:
        kwargs = serializers.EndpointCreateSerializer.service_kwargs(data)
        endpoint, secret = configuration.webhook_endpoint_create(
            scope.tenant, WebhookEndpointSettings(**kwargs)
        )
        # Shown once, in this response: only a ciphertext is kept.
        endpoint.new_secret = secret  # type: ignore[attr-defined]
        return endpoint

    def update(
        self, scope: Scope, parent: Any, obj: WebhookEndpoint, data: dict[str, Any]
    ) -> WebhookEndpoint:
        kwargs = serializers.EndpointUpdateSerializer.service_kwargs(data)
        return configuration.webhook_endpoint_update(
            scope.tenant, obj, WebhookEndpointSettings(**kwargs)
        )

    def delete(self, scope: Scope, parent: Any, obj: WebhookEndpoint) -> None:
        configuration.webhook_endpoint_delete(obj)

    def render(self, obj: WebhookEndpoint) -> dict[str, Any]:
        return serializers.webhook_endpoint_serializer_render(obj)


def _endpoint(scope: Scope, object_id: str) -> WebhookEndpoint:
    return WebhookCollection().get_or_404(scope, None, object_id)


class WebhookRotateSecretApi(AdminApi):
    @extend_schema(
        operation_id="admin_webhooks_rotate_secret",
        summary="Rotate a webhook's signing secret",
        description="Returns the new secret once; the previous one keeps signing for 24 hours.",
        parameters=[openapi.ENDPOINT_ID],
        request=None,
        responses={200: serializers.RotatedSecret, **ADMIN_WRITE_ERRORS},
    )
    def post(self, request: Request, object_id: str) -> Response:
        endpoint = _endpoint(self.scope(request), object_id)
        secret = configuration.webhook_endpoint_rotate_secret(endpoint)
        return Response(serializers.rotated_secret_render(endpoint, secret))


class WebhookTestApi(AdminApi):
    @extend_schema(
        operation_id="admin_webhooks_test",
        summary="Send a test event to a webhook",
        parameters=[openapi.ENDPOINT_ID],
        request=None,
        responses={202: serializers.TestSent, **ADMIN_WRITE_ERRORS},
    )
    def post(self, request: Request, object_id: str) -> Response:
        event = services.webhook_test_send(_endpoint(self.scope(request), object_id))
        return Response(serializers.test_sent_render(event), status=202)


class WebhookDeliveriesApi(AdminApi):
    @extend_schema(
        operation_id="admin_webhooks_deliveries",
        summary="List a webhook's deliveries",
        description="Newest first, with every attempt (kept WEBHOOK_LOG_RETENTION_DAYS).",
        parameters=[openapi.ENDPOINT_ID],
        responses={200: serializers.WebhookDeliverySerializer(many=True), **ADMIN_READ_ERRORS},
    )
    def get(self, request: Request, object_id: str) -> Response:
        endpoint = _endpoint(self.scope(request), object_id)
        limit, skip = query_limit_skip(request.query_params)
        rows = selectors.deliveries_list(endpoint, limit, skip)
        return Response([serializers.webhook_delivery_serializer_render(d) for d in rows])


REDELIVER_ERRORS = {
    **ADMIN_WRITE_ERRORS,
    **errors((422, "Validation failed, or the endpoint is disabled (enable it first).")),
}


class WebhookRedeliverApi(AdminApi):
    @extend_schema(
        operation_id="admin_webhooks_redeliver_failed",
        summary="Redeliver a webhook's failed deliveries since a time",
        parameters=[openapi.ENDPOINT_ID],
        request=serializers.RedeliverSerializer,
        responses={202: serializers.Redelivered, **REDELIVER_ERRORS},
    )
    def post(self, request: Request, object_id: str) -> Response:
        endpoint = _endpoint(self.scope(request), object_id)
        data = validated(serializers.RedeliverSerializer, request.data)
        count = delivery.deliveries_redeliver_failed(endpoint, data["since"])
        return Response(serializers.redelivered_render(count), status=202)


class WebhookDeliveryRedeliverApi(AdminApi):
    @extend_schema(
        operation_id="admin_webhooks_delivery_redeliver",
        summary="Redeliver one delivery",
        parameters=[openapi.ENDPOINT_ID, openapi.DELIVERY_ID],
        request=None,
        responses={202: serializers.Redelivered, **REDELIVER_ERRORS},
    )
    def post(self, request: Request, object_id: str, delivery_id: str) -> Response:
        endpoint = _endpoint(self.scope(request), object_id)
        found = (
            WebhookDelivery.objects.filter(endpoint=endpoint, public_id=delivery_id).first()
            if is_uuid(delivery_id)
            else None
        )
        if found is None:
            raise NotFoundError("Delivery not found by ID")
        delivery.delivery_redeliver(found)
        return Response(serializers.redelivered_render(1), status=202)
