"""Application API: users. Admin API: attribute definitions."""

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.views import AppApi
from apps.core.bulk import Collection, validated
from apps.core.openapi import errors, read_errors
from apps.core.scope import Scope
from apps.users import selectors, serializers, services, wire
from apps.users.models import Attribute


class UserCreateApi(AppApi):
    """POST /users: creates (201), or updates the supplied fields of an existing user (200)."""

    @extend_schema(
        operation_id="users_create",
        summary="Create a user",
        description="Creates the user (201), or updates the supplied fields of an existing "
        "user with that id (200).",
        request=wire.UpsertedUserSerializer,
        responses={
            201: OpenApiResponse(wire.User, description="Created."),
            200: OpenApiResponse(wire.User, description="The user existed and was updated."),
            **errors(400, 401, 403, 404, 413, 422),
        },
    )
    def post(self, request: Request) -> Response:
        scope = self.scope(request)
        data = validated(wire.UpsertedUserSerializer, request.data)
        scope.ensure_user_access(data["id"])
        scope.ensure_user_fields_allowed(data)
        with transaction.atomic():
            result = services.user_upsert(scope.tenant, data["id"], wire.user_fields(data))
        return Response(
            wire.user_render(result.user, scope.tenant),
            status=201 if result.created else 200,
        )


class UserApi(AppApi):
    @extend_schema(
        operation_id="users_get",
        summary="Get a user",
        description="The user's fields and the values of the attributes the tenant defines.",
        parameters=[wire.USER_ID],
        responses={
            200: wire.User,
            **read_errors("User not found"),
        },
    )
    def get(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user = selectors.user_get(scope.tenant, user_id)
        return Response(wire.user_render(user, scope.tenant))

    @extend_schema(
        operation_id="users_identify",
        summary="Identify a user",
        description="Creates the user, or updates the supplied fields of an existing one.",
        parameters=[wire.USER_ID],
        request=wire.UserFieldsSerializer,
        responses={200: wire.User, **errors(400, 401, 403, 404, 413, 422)},
    )
    def put(self, request: Request, user_id: str) -> Response:
        """Identify: upsert."""
        return self._write(request, user_id, create=True)

    @extend_schema(
        operation_id="users_update",
        summary="Update a user",
        description="Updates the supplied fields of an existing user; null clears email, name, "
        "tz and deviceTokens, and removes an attribute.",
        parameters=[wire.USER_ID],
        request=wire.UserFieldsSerializer,
        responses={
            200: wire.User,
            **errors(400, 401, 403, (404, "User not found, or unknown Tenant-ID."), 413, 422),
        },
    )
    def patch(self, request: Request, user_id: str) -> Response:
        """Update an existing user; 404 when unknown."""
        return self._write(request, user_id, create=False)

    def _write(self, request: Request, user_id: str, create: bool) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        data = validated(wire.UserFieldsSerializer, request.data)
        scope.ensure_user_fields_allowed(data)
        fields = wire.user_fields(data)
        with transaction.atomic():
            result = services.user_upsert(scope.tenant, user_id, fields, create=create)
        return Response(wire.user_render(result.user, scope.tenant))


class AttributeCollection(Collection):
    noun = "Attribute"
    create_serializer = serializers.AttributeCreateSerializer
    update_serializer = serializers.AttributeUpdateSerializer
    output_schema = serializers.AdminAttribute

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Attribute]:
        return selectors.attributes_list(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> Attribute | None:
        return selectors.attribute_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Attribute:
        return services.attribute_create(
            scope.tenant, name=data["name"], key=data["key"], type=data["type"]
        )

    def update(self, scope: Scope, parent: Any, obj: Attribute, data: dict[str, Any]) -> Attribute:
        return services.attribute_update(obj, name=data.get("name"))

    def delete(self, scope: Scope, parent: Any, obj: Attribute) -> None:
        services.attribute_delete(obj)

    def render(self, obj: Attribute) -> dict[str, Any]:
        return serializers.admin_attribute_render(obj)
