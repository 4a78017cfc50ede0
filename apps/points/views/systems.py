"""Application API of one points system: the system with its triggers, its boosts, its levels,
how many users are at each level, and how the users' totals are distributed."""

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.params import parse_attribute_filter, query_bool
from apps.core.api.views import AppApi
from apps.core.errors import ValidationError
from apps.core.openapi import read_errors
from apps.points import domain, openapi, selectors, serializers, wire
from apps.points.errors import PointsSystemNotFoundError
from apps.users.selectors import attribute_definitions


def _system(tenant: Any, key: str) -> selectors.SystemDef:
    system = selectors.system_by_key(tenant, key)
    if system is None:
        raise PointsSystemNotFoundError(key)
    return system


class PointsSystemApi(AppApi):
    @extend_schema(
        operation_id="points_system",
        summary="Get a points system",
        description="The points system with its active triggers.",
        parameters=[openapi.POINTS_KEY],
        responses={
            200: serializers.PointsSystemResponse,
            **read_errors("Points system not found"),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        system = _system(self.scope(request).tenant, key)
        return Response(serializers.points_system_response_render(system))


class PointsBoostsApi(AppApi):
    """Global boosts (not per-user); finished ones only with includeFinished=true."""

    @extend_schema(
        operation_id="points_boosts",
        summary="Get a points system's boosts",
        description="The system's global boosts (for every user, or for the users with given "
        "attribute values), not the ones of a single user. Finished boosts only with "
        "includeFinished=true.",
        parameters=[openapi.POINTS_KEY, openapi.INCLUDE_FINISHED],
        responses={
            200: wire.PointsBoost(many=True),
            **read_errors("Points system not found", "includeFinished is neither true nor false."),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        system = _system(self.scope(request).tenant, key)
        include_finished = query_bool(request.query_params, "includeFinished")
        today = timezone.now().date()
        return Response(
            [
                wire.boost_render(b, today)
                for b in system.boosts
                if include_finished or b.status_on(today) != "finished"
            ]
        )


class PointsLevelsApi(AppApi):
    @extend_schema(
        operation_id="points_levels",
        summary="Get a points system's levels",
        description="The system's levels, lowest threshold first.",
        parameters=[openapi.POINTS_KEY],
        responses={
            200: wire.PointsLevel(many=True),
            **read_errors("Points system not found"),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        system = _system(self.scope(request).tenant, key)
        return Response([wire.level_render(level) for level in system.levels])


class PointsLevelSummaryApi(AppApi):
    @extend_schema(
        operation_id="points_level_summary",
        summary="Get a points system's level summary",
        description="How many users are at each level, lowest threshold first.",
        parameters=[openapi.POINTS_KEY],
        responses={
            200: serializers.PointsLevelSummaryResponseItem(many=True),
            **read_errors("Points system not found", "The points system has no levels."),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        system = _system(self.scope(request).tenant, key)
        if not system.levels:
            raise ValidationError("This points system has no levels")
        counts = selectors.level_counts(self.scope(request).tenant, system)
        render = serializers.points_level_summary_response_item_render
        return Response([render(level, counts) for level in system.levels])


class PointsSummaryApi(AppApi):
    @extend_schema(
        operation_id="points_summary",
        summary="Get a points system's summary",
        description="How the users' totals are distributed: the range 0 to 0 (which also "
        "counts totals below 0), then up to ten equal ranges up to the highest total. With "
        "userAttributes, only the users with those attribute values are counted.",
        parameters=[openapi.POINTS_KEY, openapi.USER_ATTRIBUTES],
        responses={
            200: serializers.PointsRange(many=True),
            **read_errors(
                "Points system not found",
                "userAttributes is not a comma-separated list of key:value pairs, or names "
                "an unknown user attribute.",
            ),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        tenant = self.scope(request).tenant
        system = _system(tenant, key)
        filters = parse_attribute_filter(request.query_params.get("userAttributes"))
        unknown = sorted(set(filters) - attribute_definitions(tenant).user_keys)
        if unknown:
            raise ValidationError(f"userAttributes: unknown attribute keys: {', '.join(unknown)}")
        totals = selectors.system_totals(tenant, system.pk, filters)
        render = serializers.points_range_render
        return Response([render(b) for b in domain.summary_buckets(totals)])
