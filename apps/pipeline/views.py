"""POST /metrics/{key}/event (application API) and POST /metrics/events (admin batch); the
routes that complete an achievement or identify a user (POST /users, PUT /users/{id}), which
pay points too, with the user routes that share their paths (GET and PATCH /users/{id})."""

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import ValidationError as DRFValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.errors import validation_message
from apps.core.api.views import AdminApi, AppApi
from apps.core.bulk import bulk_items, validated
from apps.core.errors import ValidationError
from apps.core.openapi import ADMIN_FORBIDDEN, errors, read_errors
from apps.metrics.wire import METRIC_KEY
from apps.pipeline import intake, openapi, serializers, wire
from apps.pipeline.services import EventInput, event_process
from apps.users import wire as users_wire
from apps.users.selectors import user_get
from apps.users.wire import user_fields

MAX_BATCH_EVENTS = 1000


class MetricEventCreateApi(AppApi):
    rate_tier = 1

    @extend_schema(
        operation_id="metrics_event",
        summary="Send a metric event",
        description="Adds value to the user's total of the metric (creating or updating the "
        "user inline) and reports what the event changed.",
        parameters=[METRIC_KEY, openapi.IDEMPOTENCY_KEY],
        request=serializers.MetricEventSerializer,
        responses={
            201: OpenApiResponse(wire.EventResponse, description="Processed."),
            202: OpenApiResponse(
                wire.EventResponse,
                description="Idempotent replay: nothing applied; the current state.",
            ),
            **errors(400, 401, 403, (404, "Metric not found, or unknown Tenant-ID."), 413, 422),
        },
    )
    def post(self, request: Request, key: str) -> Response:
        scope = self.scope(request)
        data = validated(serializers.MetricEventSerializer, request.data)
        scope.ensure_user_access(data["user"]["id"])
        scope.ensure_user_fields_allowed(data["user"])
        idempotency_key = request.headers.get("Idempotency-Key")
        intake.idempotency_key_check(idempotency_key)
        answer = event_process(
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
        return Response(wire.event_response_render(answer), status=202 if answer.replayed else 201)


class BatchEventsApi(AdminApi):
    """Validates the whole batch up front (all or nothing), then queues it (202)."""

    @extend_schema(
        operation_id="admin_metrics_batch_events",
        summary="Send a batch of metric events",
        description=f"A JSON array of 1 to {MAX_BATCH_EVENTS} events, validated as a whole "
        "(one invalid event rejects the batch) and then queued for processing. With an "
        "`Idempotency-Key` header (1 to 255 characters), a batch sent again with the same key "
        "stores nothing and answers the first one's `accepted`.",
        parameters=[openapi.BATCH_IDEMPOTENCY_KEY],
        request=serializers.BatchEventSerializer(many=True),
        responses={
            202: OpenApiResponse(wire.BatchEventsResponse, description="Queued."),
            **errors(
                400,
                401,
                (403, ADMIN_FORBIDDEN),
                (404, "A metric key not found, or unknown Tenant-ID."),
                413,
                422,
            ),
        },
    )
    def post(self, request: Request) -> Response:
        scope = self.scope(request)
        items = bulk_items(request.data, maximum=MAX_BATCH_EVENTS)
        # One serializer for every item: building one (its fields, the user's nested fields)
        # cost more than validating an item.
        shape = serializers.BatchEventSerializer()
        events = [self._event(scope.tenant, index, item, shape) for index, item in enumerate(items)]
        key = request.headers.get("Idempotency-Key")
        accepted = intake.batch_submit(scope.tenant, events, idempotency_key=key)
        return Response(wire.batch_events_response_render(accepted), status=202)

    @staticmethod
    def _event(
        tenant: Any, index: int, item: Any, shape: serializers.BatchEventSerializer
    ) -> EventInput:
        """One event of the batch, its shape validated here (what `is_valid` would do) and its
        rules by the intake, in order: the first invalid event answers for the batch."""
        if not isinstance(item, dict):
            raise ValidationError(f"[{index}]: must be a JSON object")
        try:
            data = shape.run_validation(item)
        except DRFValidationError as exc:
            raise ValidationError(f"[{index}] {validation_message(exc.detail)}") from None
        event = EventInput(
            metric_key=data["key"],
            user_id=data["user"]["id"],
            user_fields=user_fields(data["user"]),
            value=data["value"],
            attributes=data["attributes"],
            idempotency_key=data.get("idempotencyKey"),
        )
        intake.batch_event_check(tenant, index, event)
        return event


class AchievementCompleteApi(AppApi):
    """POST /achievements/{key}/complete: 201 with the new completion; completing again
    answers 200 with the first completion and changes nothing."""

    rate_tier = 1

    @extend_schema(
        operation_id="achievements_complete",
        summary="Complete an achievement",
        description="Completes an api-trigger achievement for the user, creating the user when "
        "unknown and otherwise updating the supplied user fields. Completing it again changes "
        "nothing and answers 200 with the first completion.",
        parameters=[openapi.ACHIEVEMENT_KEY],
        request=serializers.AchievementCompleteSerializer,
        responses={
            201: OpenApiResponse(
                wire.AchievementCompletionResponse,
                description="The user completed the achievement with this request.",
            ),
            200: OpenApiResponse(
                wire.AchievementCompletionResponse,
                description="The user had already completed it: the first completion.",
            ),
            **errors(
                400,
                401,
                403,
                (
                    404,
                    "No active or locked api-trigger achievement has this key, or unknown "
                    "Tenant-ID.",
                ),
                413,
                (
                    422,
                    "Validation failed: an invalid user; or the achievement is locked, or the "
                    "user does not match its user attribute filters.",
                ),
            ),
        },
    )
    def post(self, request: Request, key: str) -> Response:
        scope = self.scope(request)
        data = validated(serializers.AchievementCompleteSerializer, request.data)
        user_id = data["user"]["id"]
        scope.ensure_user_access(user_id)
        scope.ensure_user_fields_allowed(data["user"])
        done = intake.achievement_complete_by_key(
            scope.tenant, key=key, user_id=user_id, user_fields=user_fields(data["user"])
        )
        return Response(
            wire.achievement_completion_response_render(done),
            status=201 if done.result.completion.created else 200,
        )


class UserCreateApi(AppApi):
    """POST /users: creates (201), or updates the supplied fields of an existing user (200)."""

    @extend_schema(
        operation_id="users_create",
        summary="Create a user",
        description="Creates the user (201), or updates the supplied fields of an existing "
        "user with that id (200).",
        request=users_wire.UpsertedUserSerializer,
        responses={
            201: OpenApiResponse(users_wire.User, description="Created."),
            200: OpenApiResponse(users_wire.User, description="The user existed and was updated."),
            **errors(400, 401, 403, 404, 413, 422),
        },
    )
    def post(self, request: Request) -> Response:
        scope = self.scope(request)
        data = validated(users_wire.UpsertedUserSerializer, request.data)
        scope.ensure_user_access(data["id"])
        scope.ensure_user_fields_allowed(data)
        result = intake.user_identify_paying(scope.tenant, data["id"], user_fields(data))
        return Response(
            users_wire.user_render(result.user, scope.tenant),
            status=201 if result.created else 200,
        )


class UserApi(AppApi):
    @extend_schema(
        operation_id="users_get",
        summary="Get a user",
        description="The user's fields and the values of the attributes the tenant defines.",
        parameters=[users_wire.USER_ID],
        responses={
            200: users_wire.User,
            **read_errors("User not found"),
        },
    )
    def get(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user = user_get(scope.tenant, user_id)
        return Response(users_wire.user_render(user, scope.tenant))

    @extend_schema(
        operation_id="users_identify",
        summary="Identify a user",
        description="Creates the user, or updates the supplied fields of an existing one.",
        parameters=[users_wire.USER_ID],
        request=users_wire.UserFieldsSerializer,
        responses={200: users_wire.User, **errors(400, 401, 403, 404, 413, 422)},
    )
    def put(self, request: Request, user_id: str) -> Response:
        """Identify: upsert."""
        return self._write(request, user_id, create=True)

    @extend_schema(
        operation_id="users_update",
        summary="Update a user",
        description="Updates the supplied fields of an existing user; null clears email, name, "
        "tz and deviceTokens, and removes an attribute.",
        parameters=[users_wire.USER_ID],
        request=users_wire.UserFieldsSerializer,
        responses={
            200: users_wire.User,
            **errors(400, 401, 403, (404, "User not found, or unknown Tenant-ID."), 413, 422),
        },
    )
    def patch(self, request: Request, user_id: str) -> Response:
        """Update an existing user; 404 when unknown."""
        return self._write(request, user_id, create=False)

    def _write(self, request: Request, user_id: str, create: bool) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        data = validated(users_wire.UserFieldsSerializer, request.data)
        scope.ensure_user_fields_allowed(data)
        fields = user_fields(data)
        result = intake.user_identify_paying(scope.tenant, user_id, fields, create=create)
        return Response(users_wire.user_render(result.user, scope.tenant))
