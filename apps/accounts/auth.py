"""X-API-KEY authentication and Tenant-ID scoping, the one access chokepoint of both APIs."""

from typing import Any

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from apps.accounts.choices import ApiKeyKind, TenantStatus
from apps.accounts.selectors import api_key_authenticate, tenant_resolve
from apps.core.errors import PermissionDeniedError
from apps.core.scope import KEY_KIND_ADMIN, KEY_KIND_APPLICATION, Scope


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[Any, Scope] | None:
        raw = request.headers.get("X-API-KEY")
        if not raw:
            return None  # the permission check answers 401
        api_key = api_key_authenticate(raw)
        if api_key is None:
            raise AuthenticationFailed("Invalid API key")
        customer_id = request.headers.get("Tenant-ID") or None
        if api_key.kind == ApiKeyKind.APPLICATION:
            tenant = api_key.tenant
            if tenant is None or tenant.status != TenantStatus.ACTIVE:
                raise AuthenticationFailed("Invalid API key")
            if customer_id is not None and customer_id != tenant.customer_id:
                raise PermissionDeniedError("This application API key belongs to another tenant")
            return None, Scope(
                environment=api_key.environment,
                tenant=tenant,
                key_kind=KEY_KIND_APPLICATION,
                key_id=api_key.pk,
                bound_user_id=api_key.user_id,
            )
        default = api_key.environment.default_tenant
        if customer_id is None and default is not None and default.status == TenantStatus.ACTIVE:
            tenant = default  # loaded with the key: the common case costs no extra query
        else:
            tenant = tenant_resolve(api_key.environment, customer_id)
        tenant.environment = api_key.environment
        return None, Scope(
            environment=api_key.environment,
            tenant=tenant,
            key_kind=KEY_KIND_ADMIN,
            key_id=api_key.pk,
        )

    def authenticate_header(self, request: Request) -> str:
        # Any value makes DRF answer 401 rather than 403 for unauthenticated requests.
        return "X-API-KEY"
