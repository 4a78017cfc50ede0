"""Base classes of every API view: who may call it, and how its scope is exposed."""

from typing import Any, ClassVar, NoReturn

from django.http.response import HttpResponseBase
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.core.api.fields import user_id_error
from apps.core.api.naming import wire_name
from apps.core.api.ratelimit import TierRateLimit
from apps.core.errors import ValidationError
from apps.core.replicas import lag_tolerant, primary_reads, user_read
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
    # The serializer that reads the body: a service's refusal names its fields as it does
    # (apps/core/api/naming.py).
    input_serializer: ClassVar[type[serializers.Serializer] | None] = None
    # Whether the view's GET may read a replica (apps/core/replicas.py): the application API's
    # reads, the analytics of the admin API. Unless the route's user ({user_id}, or the userId
    # of a query) was written within the stickiness window.
    lag_tolerant: ClassVar[bool] = False

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if self.lag_tolerant and request.method in ("GET", "HEAD"):
            with lag_tolerant():
                return super().dispatch(request, *args, **kwargs)
        return super().dispatch(request, *args, **kwargs)

    def perform_authentication(self, request: Request) -> None:
        # The key and its tenant from the primary: a key revoked a moment ago must fail, one
        # created a moment ago must work.
        with primary_reads():
            super().perform_authentication(request)

    def wire_name(self, field: str) -> str:
        """How this view's answers spell the Python field `field` that an error names."""
        return wire_name(self.input_serializer, field)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        # Every route that names a user in its path ({user_id}) holds the id to the rule of a
        # user id in a body: "x%0Ay" would otherwise create the user "x\ny", whose id then
        # reaches log lines and exports as it is. After authentication, so 401 comes first.
        user_id = kwargs.get("user_id")
        if isinstance(user_id, str) and (problem := user_id_error(user_id)) is not None:
            raise ValidationError(f"id {problem}")
        if self.lag_tolerant and isinstance(request.auth, Scope):
            for concerned in (user_id, request.query_params.get("userId")):
                if isinstance(concerned, str) and concerned:
                    user_read(request.auth.tenant.pk, concerned)

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
    lag_tolerant = True  # its GETs (apps/core/replicas.py)


class AdminApi(ScopedApi):
    """Administrative API: admin keys only."""

    permission_classes = [HasAdminKey]
    rate_tier = 1
