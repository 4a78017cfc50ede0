"""Application API: a user's metrics and event summaries. Admin API: metric definitions."""

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.views import AppApi
from apps.core.bulk import Collection, DeleteAsked
from apps.core.openapi import CONFIRM, read_errors
from apps.core.scope import Scope
from apps.metrics import configuration, selectors, serializers, wire
from apps.metrics.domain import MetricSettings
from apps.metrics.models import Metric
from apps.users.selectors import user_get
from apps.users.wire import USER_ID


class UserMetricEventSummaryApi(AppApi):
    @extend_schema(
        operation_id="users_metric_event_summary",
        summary="Summarize a user's metric events",
        description="The change and the running total of the metric per day, week or month.",
        parameters=[
            USER_ID,
            wire.METRIC_KEY,
            wire.AGGREGATION,
            wire.START_DATE,
            wire.END_DATE,
        ],
        responses={
            200: wire.UsersMetricEventSummaryResponseItem(many=True),
            **read_errors(
                "User or metric not found", "aggregation, startDate or endDate missing or invalid."
            ),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        aggregation, start, end = wire.summary_query(request.query_params)
        user = user_get(scope.tenant, user_id)
        metric = selectors.metric_by_key(scope.tenant, key)
        buckets = selectors.metric_event_summary(user, metric.pk, aggregation, start, end)
        return Response(wire.summary_render(buckets))


class MetricCollection(Collection):
    noun = "Metric"
    create_serializer = serializers.MetricCreateSerializer
    update_serializer = serializers.MetricUpdateSerializer
    output_schema = serializers.CreatedMetric

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Metric]:
        return selectors.metrics_list(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> Metric | None:
        return selectors.metric_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Metric:
        kwargs = serializers.MetricCreateSerializer.service_kwargs(data)
        return configuration.metric_create(scope.tenant, MetricSettings(**kwargs))

    def update(self, scope: Scope, parent: Any, obj: Metric, data: dict[str, Any]) -> Metric:
        kwargs = serializers.MetricUpdateSerializer.service_kwargs(data)
        return configuration.metric_update(scope.tenant, obj, MetricSettings(**kwargs))

    delete_parameters = (CONFIRM,)

    def delete(self, scope: Scope, parent: Any, obj: Metric) -> None:
        self.delete_asked(scope, parent, obj, DeleteAsked())

    def delete_asked(self, scope: Scope, parent: Any, obj: Metric, asked: DeleteAsked) -> None:
        confirm = asked.confirmation(obj.key, str(obj.public_id))
        configuration.metric_delete(scope.tenant, obj, confirm=confirm)

    def render(self, obj: Metric) -> dict[str, Any]:
        return serializers.created_metric_render(obj)
