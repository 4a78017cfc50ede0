"""Base classes of every API view: who may call it, and how its scope is exposed."""

from typing import Any, NoReturn

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.core.api.ratelimit import TierRateLimit
from apps.core.scope import Scope


class HasAnyKey(BasePermission):
    message = "Missing or invalid API key"

    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, Scope)


class HasAdminKey(BasePermission):
    message = "This endpoint requires an admin API key"

    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, Scope) and request.auth.is_admin


class ScopedApi(APIView):
    """An API view whose request carries a Scope in `request.auth` after authentication."""

    throttle_classes = [TierRateLimit]
    # Rate-limit tier (ratelimit.py): 1 for events, completions and the admin API, else 2.
    rate_tier = 2

    def scope(self, request: Request) -> Scope:
        auth = request.auth
        assert isinstance(auth, Scope)  # noqa: S101 - guaranteed by the permission classes
        return auth

    def permission_denied(
        self, request: Request, message: Any = None, code: Any = None
    ) -> NoReturn:
        # Without a key DRF would answer 403; the API contract says 401.
        from rest_framework.exceptions import NotAuthenticated, PermissionDenied

        if not isinstance(request.auth, Scope):
            raise NotAuthenticated("Missing or invalid API key")
        raise PermissionDenied(message or "Forbidden")


class AppApi(ScopedApi):
    """Application API: admin keys, and application keys for their own user's data."""

    permission_classes = [HasAnyKey]


class AdminApi(ScopedApi):
    """Administrative API: admin keys only."""

    permission_classes = [HasAdminKey]
    rate_tier = 1
