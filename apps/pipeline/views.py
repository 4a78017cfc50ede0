"""POST /metrics/{key}/event (application API) and POST /metrics/events (admin batch)."""

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.errors import validation_message
from apps.core.api.views import AdminApi, AppApi
from apps.core.bulk import bulk_items, validated
from apps.core.errors import ValidationError
from apps.metrics.selectors import metric_by_key
from apps.pipeline import serializers
from apps.pipeline.services import EventInput, event_process, events_enqueue
from apps.users.serializers import user_fields
from apps.users.services import attribute_values_check

MAX_BATCH_EVENTS = 1000


class MetricEventCreateApi(AppApi):
    def post(self, request: Request, key: str) -> Response:
        scope = self.scope(request)
        data = validated(serializers.MetricEventSerializer, request.data)
        scope.ensure_user_access(data["user"]["id"])
        idempotency_key = request.headers.get("Idempotency-Key")
        if idempotency_key is not None and not 1 <= len(idempotency_key) <= 255:
            raise ValidationError("Idempotency-Key must be 1 to 255 characters")
        result = event_process(
            scope.tenant,
            EventInput(
                metric_key=key,
                user_id=data["user"]["id"],
                user_fields=user_fields(data["user"]),
                value=data["value"],
                attributes=data["attributes"],
                idempotency_key=idempotency_key,
            ),
        )
        return Response(result.body, status=202 if result.replayed else 201)


class BatchEventsApi(AdminApi):
    """Validates the whole batch up front (all or nothing), then queues it (202)."""

    def post(self, request: Request) -> Response:
        scope = self.scope(request)
        items = bulk_items(request.data, maximum=MAX_BATCH_EVENTS)
        inputs = [self._input(scope.tenant, index, item) for index, item in enumerate(items)]
        return Response({"accepted": events_enqueue(scope.tenant, inputs)}, status=202)

    @staticmethod
    def _input(tenant: Any, index: int, item: Any) -> EventInput:
        serializer = serializers.BatchEventSerializer(data=item) if isinstance(item, dict) else None
        if serializer is None:
            raise ValidationError(f"[{index}]: must be a JSON object")
        if not serializer.is_valid():
            raise ValidationError(f"[{index}] {validation_message(serializer.errors)}")
        data = serializer.validated_data
        metric_by_key(tenant, data["key"])  # 404 for an unknown metric
        attribute_values_check(tenant, data["attributes"], "event")
        attribute_values_check(tenant, data["user"].get("attributes"), "user")
        return EventInput(
            metric_key=data["key"],
            user_id=data["user"]["id"],
            user_fields=user_fields(data["user"]),
            value=data["value"],
            attributes=data["attributes"],
            idempotency_key=data.get("idempotencyKey"),
        )
