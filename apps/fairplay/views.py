"""Fair play's admin routes (/admin/ext/v1): a user's exclusion from the rankings, read, made
and lifted; the anomaly rules, a Collection of the admin bulk conventions."""

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.views import AdminApi
from apps.core.bulk import Collection, validated
from apps.core.openapi import ADMIN_FORBIDDEN, errors
from apps.core.scope import Scope
from apps.fairplay import configuration, openapi, selectors, serializers, services
from apps.fairplay.domain import AnomalyRuleSettings
from apps.fairplay.models import AnomalyRule
from apps.users.selectors import user_get
from apps.users.wire import USER_ID

_NOT_FOUND = (404, "User not found, or unknown Tenant-ID.")


class UserExclusionApi(AdminApi):
    input_serializer = serializers.ExclusionSerializer

    @extend_schema(
        operation_id="admin_ext_users_exclusion_get",
        summary="Get a user's exclusion",
        tags=openapi.FAIRPLAY_TAGS,
        parameters=[USER_ID],
        responses={
            200: serializers.ExclusionResponse,
            **errors(401, (403, ADMIN_FORBIDDEN), _NOT_FOUND),
        },
    )
    def get(self, request: Request, user_id: str) -> Response:
        user = user_get(self.scope(request).tenant, user_id)
        return Response(serializers.exclusion_response_render(user, changed=False))

    @extend_schema(
        operation_id="admin_ext_users_exclusion_create",
        summary="Exclude a user from the rankings",
        description=openapi.EXCLUDE,
        tags=openapi.FAIRPLAY_TAGS,
        parameters=[USER_ID],
        request=serializers.ExclusionSerializer,
        responses={
            200: serializers.ExclusionResponse,
            **errors(
                400,
                401,
                (403, ADMIN_FORBIDDEN),
                _NOT_FOUND,
                413,
                (422, "reason missing, empty, not a string or longer than 500 characters."),
            ),
        },
    )
    def post(self, request: Request, user_id: str) -> Response:
        tenant = self.scope(request).tenant
        data = validated(serializers.ExclusionSerializer, request.data)
        done = services.user_exclude(tenant, user_id, data["reason"])
        return Response(serializers.exclusion_response_render(done.user, done.changed))

    @extend_schema(
        operation_id="admin_ext_users_exclusion_delete",
        summary="Reinstate an excluded user",
        description=openapi.REINSTATE,
        tags=openapi.FAIRPLAY_TAGS,
        parameters=[USER_ID],
        responses={
            200: serializers.ExclusionResponse,
            **errors(401, (403, ADMIN_FORBIDDEN), _NOT_FOUND),
        },
    )
    def delete(self, request: Request, user_id: str) -> Response:
        done = services.user_reinstate(self.scope(request).tenant, user_id)
        return Response(serializers.exclusion_response_render(done.user, done.changed))


class AnomalyRuleCollection(Collection):
    noun = "Anomaly rule"
    create_serializer = serializers.AnomalyRuleCreateSerializer
    update_serializer = serializers.AnomalyRuleUpdateSerializer
    output_schema = serializers.AdminAnomalyRule

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[AnomalyRule]:
        return selectors.rules_list(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> AnomalyRule | None:
        return selectors.rule_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> AnomalyRule:
        kwargs = serializers.AnomalyRuleCreateSerializer.service_kwargs(data)
        return configuration.anomaly_rule_create(scope.tenant, AnomalyRuleSettings(**kwargs))

    def update(
        self, scope: Scope, parent: Any, obj: AnomalyRule, data: dict[str, Any]
    ) -> AnomalyRule:
        kwargs = serializers.AnomalyRuleUpdateSerializer.service_kwargs(data)
        return configuration.anomaly_rule_update(scope.tenant, obj, AnomalyRuleSettings(**kwargs))

    def delete(self, scope: Scope, parent: Any, obj: AnomalyRule) -> None:
        configuration.anomaly_rule_delete(scope.tenant, obj)

    def render(self, obj: AnomalyRule) -> dict[str, Any]:
        return serializers.admin_anomaly_rule_render(obj)
