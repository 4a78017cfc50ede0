"""Admin API endpoints of accounts: tenants, environments, settings, application API keys."""

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts import selectors, serializers, services
from apps.accounts.models import ApiKey, Tenant
from apps.core.api.views import AdminApi
from apps.core.bulk import Collection, validated
from apps.core.openapi import ADMIN_FORBIDDEN, errors
from apps.core.scope import Scope


class TenantCollection(Collection):
    noun = "Tenant"
    create_serializer = serializers.TenantCreateSerializer
    update_serializer = serializers.TenantUpdateSerializer
    output_schema = serializers.AdminTenant

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Tenant]:
        return selectors.tenants_list(scope.environment, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> Tenant | None:
        return selectors.tenant_get(scope.environment, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Tenant:
        return services.tenant_create(
            scope.environment, **serializers.TenantCreateSerializer.service_kwargs(data)
        )

    def update(self, scope: Scope, parent: Any, obj: Tenant, data: dict[str, Any]) -> Tenant:
        return services.tenant_update(
            obj, **serializers.TenantUpdateSerializer.service_kwargs(data)
        )

    def delete(self, scope: Scope, parent: Any, obj: Tenant) -> None:
        services.tenant_archive(obj)

    def render(self, obj: Tenant) -> dict[str, Any]:
        return serializers.admin_tenant_render(obj)


class ApplicationKeyCollection(Collection):
    """Write-only: the full key is returned once, at creation."""

    noun = "Application API key"
    create_serializer = serializers.ApplicationKeyCreateSerializer
    output_schema = serializers.CreatedApplicationKey

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Any]:
        return []

    def get(self, scope: Scope, parent: Any, object_id: str) -> ApiKey | None:
        return selectors.application_key_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> tuple[ApiKey, str]:
        return services.application_key_create(
            scope.tenant, **serializers.ApplicationKeyCreateSerializer.service_kwargs(data)
        )

    def delete(self, scope: Scope, parent: Any, obj: ApiKey) -> None:
        services.api_key_delete(obj)

    def render(self, obj: tuple[ApiKey, str]) -> dict[str, Any]:
        api_key, full_key = obj
        return serializers.created_application_key_render(api_key, full_key)


class EnvironmentListApi(AdminApi):
    @extend_schema(
        operation_id="admin_environments_list",
        summary="List environments",
        responses={
            200: serializers.AdminEnvironment(many=True),
            **errors(401, (403, ADMIN_FORBIDDEN), 404),
        },
    )
    def get(self, request: Request) -> Response:
        environments = selectors.environments_list(self.scope(request).environment)
        return Response([serializers.admin_environment_render(env) for env in environments])


class SettingsApi(AdminApi):
    @extend_schema(
        operation_id="admin_settings_get",
        summary="Get settings",
        responses={200: serializers.AdminSettings, **errors(401, (403, ADMIN_FORBIDDEN), 404)},
    )
    def get(self, request: Request) -> Response:
        return Response(serializers.admin_settings_render(self.scope(request).tenant))

    @extend_schema(
        operation_id="admin_settings_update",
        summary="Update settings",
        description="Updates the supplied settings; null clears branding.logo and "
        "branding.appIcon.",
        request=serializers.SettingsUpdateSerializer,
        responses={
            200: serializers.AdminSettings,
            **errors(400, 401, (403, ADMIN_FORBIDDEN), 404, 413, 422),
        },
    )
    def patch(self, request: Request) -> Response:
        tenant = self.scope(request).tenant
        data = validated(serializers.SettingsUpdateSerializer, request.data)
        services.settings_update(
            tenant, **serializers.SettingsUpdateSerializer.service_kwargs(data)
        )
        return Response(serializers.admin_settings_render(tenant))
