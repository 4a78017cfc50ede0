"""POST /metrics/{key}/event (application API) and POST /metrics/events (admin batch)."""

from typing import Any

from django.db import transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.achievements.choices import Trigger
from apps.achievements.errors import AchievementNotFoundError
from apps.achievements.selectors import achievement_by_key
from apps.achievements.wire import user_achievement_render
from apps.core.api.errors import validation_message
from apps.core.api.views import AdminApi, AppApi
from apps.core.bulk import bulk_items, validated
from apps.core.errors import ApplicationError, ValidationError
from apps.core.openapi import ADMIN_FORBIDDEN, errors
from apps.core.scope import Scope
from apps.metrics.selectors import metric_by_key
from apps.metrics.wire import METRIC_KEY
from apps.pipeline import openapi, serializers
from apps.pipeline.batches import events_enqueue
from apps.pipeline.services import (
    EventInput,
    achievement_complete,
    event_process,
    user_identify,
)
from apps.users import views as users_views
from apps.users.selectors import users_with_email
from apps.users.services import (
    UserUpsertResult,
    attribute_values_check,
    user_create_or_lock,
    user_lock,
    user_update_fields,
)
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
            201: OpenApiResponse(openapi.EventResponse, description="Processed."),
            202: OpenApiResponse(
                openapi.EventResponse,
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
            202: OpenApiResponse(openapi.BatchEventsResponse, description="Queued."),
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
        inputs = [self._input(scope.tenant, index, item) for index, item in enumerate(items)]
        self._check_email_rule(scope.tenant, inputs)
        key = request.headers.get("Idempotency-Key")
        if key is not None and not 1 <= len(key) <= 255:
            raise ValidationError("Idempotency-Key must be 1 to 255 characters")
        return Response({"accepted": events_enqueue(scope.tenant, inputs, key)}, status=202)

    @staticmethod
    def _check_email_rule(tenant: Any, inputs: list[EventInput]) -> None:
        """subscribeToEmails may be true only for a user with an email, judged as the events
        will be applied: in order, starting from the stored users. Checked now so an accepted
        event is never dropped by the worker later."""
        subscribing = {i.user_id for i in inputs if i.user_fields.get("subscribeToEmails") is True}
        if not subscribing:
            return
        has_email = users_with_email(tenant, subscribing)
        for index, item in enumerate(inputs):
            fields = item.user_fields
            if fields.get("email"):
                has_email.add(item.user_id)
            elif "email" in fields or fields.get("subscribeToEmails") is False:
                has_email.discard(item.user_id)
            if fields.get("subscribeToEmails") is True and item.user_id not in has_email:
                raise ValidationError(
                    f"[{index}] user.subscribeToEmails cannot be true for a user without an email"
                )

    @staticmethod
    def _input(tenant: Any, index: int, item: Any) -> EventInput:
        serializer = serializers.BatchEventSerializer(data=item) if isinstance(item, dict) else None
        if serializer is None:
            raise ValidationError(f"[{index}]: must be a JSON object")
        if not serializer.is_valid():
            raise ValidationError(f"[{index}] {validation_message(serializer.errors)}")
        data = serializer.validated_data
        try:
            metric_by_key(tenant, data["key"])  # 404 for an unknown metric
            attribute_values_check(tenant, data["attributes"], "event")
            attribute_values_check(tenant, data["user"].get("attributes"), "user")
        except ApplicationError as exc:
            # Same status, with the index of the event that caused it.
            error = ApplicationError(f"[{index}] {exc.message}")
            error.status_code = exc.status_code
            raise error from None
        return EventInput(
            metric_key=data["key"],
            user_id=data["user"]["id"],
            user_fields=user_fields(data["user"]),
            value=data["value"],
            attributes=data["attributes"],
            idempotency_key=data.get("idempotencyKey"),
        )


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
                openapi.AchievementCompletionResponse,
                description="The user completed the achievement with this request.",
            ),
            200: OpenApiResponse(
                openapi.AchievementCompletionResponse,
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
        definition = achievement_by_key(scope.tenant, key)
        if definition is None or definition.trigger != Trigger.API:
            raise AchievementNotFoundError(key)
        with transaction.atomic():
            user = user_lock(scope.tenant, user_id)
            fields = user_fields(data["user"])
            if user is None:
                user = user_create_or_lock(scope.tenant, user_id, fields).user
            else:
                user_update_fields(scope.tenant, user, fields)
            done = achievement_complete(scope.tenant, user, definition)
        completion = done.completion
        return Response(
            {
                "completionId": completion.completion_id,
                "achievement": user_achievement_render(definition, completion.completed_at),
                "points": done.points,
            },
            status=201 if completion.created else 200,
        )


class UserWritesWithPoints(users_views.UserWrites):
    """Identify and update through the pipeline: creating a user pays user_creation points."""

    def upsert(
        self, scope: Scope, user_id: str, fields: dict[str, Any], create: bool
    ) -> UserUpsertResult:
        return user_identify(scope.tenant, user_id, fields, create=create)


class UserCreateApi(UserWritesWithPoints, users_views.UserCreateApi):
    """POST /users (apps.users.views), with user_creation points."""


class UserApi(UserWritesWithPoints, users_views.UserApi):
    """GET, PUT, PATCH /users/{id} (apps.users.views), with user_creation points."""
