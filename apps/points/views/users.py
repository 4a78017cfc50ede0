"""Application API of one user's points in a system: the total, level and latest awards, the
boosts that apply to the user, and the points summed per day, week or month."""

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.params import query_int
from apps.core.api.views import AppApi
from apps.core.openapi import read_errors
from apps.metrics.wire import AGGREGATION, END_DATE, START_DATE, summary_query, summary_render
from apps.points import domain, openapi, selectors, serializers, wire
from apps.points.errors import PointsSystemNotFoundError
from apps.points.views.systems import _system
from apps.users.domain import local_date
from apps.users.errors import UserNotFoundError
from apps.users.selectors import user_get
from apps.users.wire import USER_ID


class UserPointsApi(AppApi):
    @extend_schema(
        operation_id="users_points",
        summary="Get a user's points",
        description="The user's total and current level in the points system, with their most "
        "recent awards, newest first.",
        parameters=[USER_ID, openapi.POINTS_KEY, openapi.AWARDS],
        responses={
            200: serializers.GetUserPointsResponse,
            **read_errors(
                "User or points system not found", "awards is not an integer from 1 to 100."
            ),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        count = query_int(request.query_params, "awards", default=10, minimum=1, maximum=100)
        system = selectors.system_by_key(scope.tenant, key)  # cached: no query
        found = selectors.user_total_by_external_id(
            scope.tenant, user_id, system.pk if system else 0
        )
        if found is None:
            raise UserNotFoundError(user_id)  # before an unknown system, as always
        if system is None:
            raise PointsSystemNotFoundError(key)
        user_pk, total = found
        reached = domain.level_for(total, system.level_points)
        level = next((lv for lv in system.levels if reached and lv.pk == reached.pk), None)
        awards = selectors.user_awards(user_pk, system.pk, count)
        points = serializers.UserPoints(total=total, level=level, awards=awards)
        return Response(serializers.get_user_points_response_render(system, points))


class UserPointsBoostsApi(AppApi):
    """Active boosts for this user: global ones they qualify for and their own."""

    @extend_schema(
        operation_id="users_points_boosts",
        summary="Get a user's active boosts",
        description="The boosts running today in the user's time zone that apply to the user: "
        "the global ones whose attribute filters the user matches, and the user's own.",
        parameters=[USER_ID, openapi.POINTS_KEY],
        responses={
            200: wire.PointsBoost(many=True),
            **read_errors("User or points system not found"),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user = user_get(scope.tenant, user_id)
        system = _system(scope.tenant, key)
        today = local_date(timezone.now(), user.tz)
        return Response(
            [
                wire.boost_render(b, today)
                for b in selectors.user_boosts(user, system)
                if b.running_on(today)
            ]
        )


class UserPointsEventSummaryApi(AppApi):
    @extend_schema(
        operation_id="users_points_event_summary",
        summary="Summarize a user's points",
        description="The change and the running total of the user's points per day, week or month.",
        parameters=[USER_ID, openapi.POINTS_KEY, AGGREGATION, START_DATE, END_DATE],
        responses={
            200: serializers.UsersPointsEventSummaryResponseItem(many=True),
            **read_errors(
                "User or points system not found",
                "aggregation, startDate or endDate missing or invalid.",
            ),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        aggregation, start, end = summary_query(request.query_params)
        user = user_get(scope.tenant, user_id)
        system = _system(scope.tenant, key)
        buckets = selectors.points_event_summary(user, system.pk, aggregation, start, end)
        return Response(summary_render(buckets))
