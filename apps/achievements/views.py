"""Application API: achievements, a user's achievements, API completion, and a user's metrics
with their achievements (composed here: metrics sits below achievements). Admin API:
achievement configuration."""

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.achievements import configuration, openapi, selectors, serializers, wire
from apps.achievements.domain import AchievementSettings
from apps.achievements.models import Achievement
from apps.core.api.params import parse_attribute_filter, query_bool
from apps.core.api.views import AppApi
from apps.core.bulk import Collection, DeleteAsked
from apps.core.openapi import CONFIRM, read_errors
from apps.core.scope import Scope
from apps.metrics.selectors import (
    MetricDef,
    metric_by_key,
    metric_definitions,
    user_metric_total,
    user_metric_totals,
)
from apps.metrics.wire import METRIC_KEY
from apps.users.models import EndUser
from apps.users.selectors import user_get
from apps.users.wire import USER_ID


class AchievementListApi(AppApi):
    """GET /achievements?userAttributes=k:v: active achievements (those open to a user with
    these attributes, when given), with completions and rarity."""

    @extend_schema(
        operation_id="achievements_all",
        summary="Get all achievements",
        description="The active achievements with their completions and rarity, oldest first. "
        "With userAttributes, only those open to a user with these attribute values.",
        parameters=[openapi.USER_ATTRIBUTES],
        responses={
            200: serializers.AchievementWithStatsResponse(many=True),
            **read_errors(
                invalid="userAttributes is not a comma-separated list of key:value pairs."
            ),
        },
    )
    def get(self, request: Request) -> Response:
        tenant = self.scope(request).tenant
        raw = request.query_params.get("userAttributes")
        attributes = parse_attribute_filter(raw)
        stats = selectors.achievement_stats(tenant)
        return Response(
            [
                serializers.achievement_with_stats_response_render(d, stats)
                for d in selectors.achievement_definitions(tenant).values()
                if d.completable and (raw is None or d.open_to(attributes))
            ]
        )


class UserAchievementsApi(AppApi):
    @extend_schema(
        operation_id="users_achievements",
        summary="Get a user's achievements",
        description="The achievements the user completed (locked ones included), oldest first, "
        "with their completions and rarity. With includeIncomplete=true, also the active ones "
        "the user has not completed and whose user attribute filters the user matches.",
        parameters=[USER_ID, openapi.INCLUDE_INCOMPLETE],
        responses={
            200: wire.UserAchievementWithStatsResponse(many=True),
            **read_errors("User not found", "includeIncomplete is neither true nor false."),
        },
    )
    def get(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        include_incomplete = query_bool(request.query_params, "includeIncomplete")
        user = user_get(scope.tenant, user_id)
        completed = selectors.user_completions(user)
        stats = selectors.achievement_stats(scope.tenant)
        items = []
        for d in selectors.achievement_definitions(scope.tenant).values():
            done = d.pk in completed
            if not selectors.visible_to(d, done) or not (done or include_incomplete):
                continue
            if not done and not d.open_to(user.attributes):
                continue
            items.append(wire.user_achievement_render(d, completed.get(d.pk), stats))
        return Response(items)


def _metric_achievements(
    tenant: Any, user: EndUser, metric: MetricDef, completed: dict[int, Any]
) -> list[dict[str, Any]]:
    return [
        wire.user_achievement_render(d, completed.get(d.pk))
        for d in selectors.metric_achievements(tenant, metric.pk)
        if selectors.visible_to(d, d.pk in completed)
        and (d.pk in completed or d.open_to(user.attributes))
    ]


class UserMetricListApi(AppApi):
    @extend_schema(
        operation_id="users_all_metrics",
        summary="Get all of a user's metrics",
        parameters=[USER_ID],
        responses={
            200: serializers.MetricResponse(many=True),
            **read_errors("User not found"),
        },
    )
    def get(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user = user_get(scope.tenant, user_id)
        totals = user_metric_totals(user)
        completed = selectors.user_completions(user)
        return Response(
            [
                serializers.metric_response_render(
                    metric,
                    serializers.UserMetric(
                        totals.get(metric.pk, Decimal(0)),
                        _metric_achievements(scope.tenant, user, metric, completed),
                    ),
                )
                for metric in metric_definitions(scope.tenant).values()
            ]
        )


class UserMetricApi(AppApi):
    @extend_schema(
        operation_id="users_single_metric",
        summary="Get one of a user's metrics",
        parameters=[USER_ID, METRIC_KEY],
        responses={
            200: serializers.MetricResponse,
            **read_errors("User or metric not found"),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user = user_get(scope.tenant, user_id)
        metric = metric_by_key(scope.tenant, key)
        completed = selectors.user_completions(user)
        return Response(
            serializers.metric_response_render(
                metric,
                serializers.UserMetric(
                    user_metric_total(user, metric.pk),
                    _metric_achievements(scope.tenant, user, metric, completed),
                ),
            )
        )


class AchievementCollection(Collection):
    noun = "Achievement"
    create_serializer = serializers.AchievementCreateSerializer
    update_serializer = serializers.AchievementUpdateSerializer
    output_schema = serializers.AdminAchievement

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Achievement]:
        return selectors.achievements_list(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> Achievement | None:
        return selectors.achievement_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Achievement:
        kwargs = serializers.AchievementCreateSerializer.service_kwargs(data)
        return configuration.achievement_create(scope.tenant, AchievementSettings(**kwargs))

    def update(
        self, scope: Scope, parent: Any, obj: Achievement, data: dict[str, Any]
    ) -> Achievement:
        kwargs = serializers.AchievementUpdateSerializer.service_kwargs(data)
        return configuration.achievement_update(scope.tenant, obj, AchievementSettings(**kwargs))

    delete_parameters = (CONFIRM,)

    def delete(self, scope: Scope, parent: Any, obj: Achievement) -> None:
        self.delete_asked(scope, parent, obj, DeleteAsked())

    def delete_asked(self, scope: Scope, parent: Any, obj: Achievement, asked: DeleteAsked) -> None:
        confirm = asked.confirmation(obj.key or obj.name, str(obj.public_id))
        configuration.achievement_delete(scope.tenant, obj, confirm=confirm)

    def render(self, obj: Achievement) -> dict[str, Any]:
        return serializers.admin_render(obj)
