"""Application API: points systems, boosts, levels, summaries and a user's points.
Admin API: systems and their levels, boosts and triggers."""

from collections.abc import Callable, Sequence
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.params import parse_attribute_filter, query_bool, query_date, query_int
from apps.core.api.views import AppApi
from apps.core.bulk import Collection
from apps.core.errors import NotFoundError, ValidationError
from apps.core.openapi import errors
from apps.core.scope import Scope
from apps.metrics.choices import Aggregation
from apps.metrics.openapi import AGGREGATION, END_DATE, START_DATE
from apps.metrics.serializers import summary_render
from apps.points import configuration, domain, openapi, selectors, serializers
from apps.points.errors import PointsSystemNotFoundError
from apps.points.ledger import (
    award_render,
    boost_render,
    level_render,
    system_base_render,
    trigger_render,
)
from apps.points.models import PointsBoost, PointsLevel, PointsSystem, PointsTrigger
from apps.users.domain import local_date
from apps.users.errors import UserNotFoundError
from apps.users.openapi import USER_ID
from apps.users.selectors import attribute_definitions, user_get


def _system(tenant: Any, key: str) -> selectors.SystemDef:
    system = selectors.system_by_key(tenant, key)
    if system is None:
        raise PointsSystemNotFoundError(key)
    return system


# --- application API ------------------------------------------------------------------------


class PointsSystemApi(AppApi):
    @extend_schema(
        operation_id="points_system",
        summary="Get a points system",
        description="The points system with its active triggers.",
        parameters=[openapi.POINTS_KEY],
        responses={
            200: openapi.PointsSystemResponse,
            **errors(401, 403, (404, "Points system not found, or unknown Tenant-ID.")),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        system = _system(self.scope(request).tenant, key)
        body = system_base_render(system)
        body.pop("key")  # PointsSystemResponse has no key (reference §3.6)
        return Response({**body, "triggers": [trigger_render(t) for t in system.triggers]})


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
            200: openapi.PointsBoost(many=True),
            **errors(
                401,
                403,
                (404, "Points system not found, or unknown Tenant-ID."),
                (422, "includeFinished is neither true nor false."),
            ),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        system = _system(self.scope(request).tenant, key)
        include_finished = query_bool(request.query_params, "includeFinished")
        today = timezone.now().date()
        return Response(
            [
                boost_render(b, today)
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
            200: openapi.PointsLevel(many=True),
            **errors(401, 403, (404, "Points system not found, or unknown Tenant-ID.")),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        system = _system(self.scope(request).tenant, key)
        return Response([level_render(level) for level in system.levels])


class PointsLevelSummaryApi(AppApi):
    @extend_schema(
        operation_id="points_level_summary",
        summary="Get a points system's level summary",
        description="How many users are at each level, lowest threshold first.",
        parameters=[openapi.POINTS_KEY],
        responses={
            200: openapi.PointsLevelSummaryResponseItem(many=True),
            **errors(
                401,
                403,
                (404, "Points system not found, or unknown Tenant-ID."),
                (422, "The points system has no levels."),
            ),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        system = _system(self.scope(request).tenant, key)
        if not system.levels:
            raise ValidationError("This points system has no levels")
        counts = selectors.level_counts(self.scope(request).tenant, system)
        return Response(
            [
                {"level": level_render(level), "users": counts.get(level.pk, 0)}
                for level in system.levels
            ]
        )


class PointsSummaryApi(AppApi):
    @extend_schema(
        operation_id="points_summary",
        summary="Get a points system's summary",
        description="How the users' totals are distributed: the range 0 to 0 (which also "
        "counts totals below 0), then up to ten equal ranges up to the highest total. With "
        "userAttributes, only the users with those attribute values are counted.",
        parameters=[openapi.POINTS_KEY, openapi.USER_ATTRIBUTES],
        responses={
            200: openapi.PointsRange(many=True),
            **errors(
                401,
                403,
                (404, "Points system not found, or unknown Tenant-ID."),
                (
                    422,
                    "userAttributes is not a comma-separated list of key:value pairs, or names "
                    "an unknown user attribute.",
                ),
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
        return Response(
            [
                {"from": b.low, "to": b.high, "users": b.users}
                for b in domain.summary_buckets(totals)
            ]
        )


class UserPointsApi(AppApi):
    @extend_schema(
        operation_id="users_points",
        summary="Get a user's points",
        description="The user's total and current level in the points system, with their most "
        "recent awards, newest first.",
        parameters=[USER_ID, openapi.POINTS_KEY, openapi.AWARDS],
        responses={
            200: openapi.GetUserPointsResponse,
            **errors(
                401,
                403,
                (404, "User or points system not found, or unknown Tenant-ID."),
                (422, "awards is not an integer from 1 to 100."),
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
        return Response(
            {
                **system_base_render(system),
                "total": total,
                "level": level_render(level) if level else None,
                "awards": [
                    award_render(a) for a in selectors.user_awards(user_pk, system.pk, count)
                ],
            }
        )


class UserPointsBoostsApi(AppApi):
    """Active boosts for this user: global ones they qualify for and their own."""

    @extend_schema(
        operation_id="users_points_boosts",
        summary="Get a user's active boosts",
        description="The boosts running today in the user's time zone that apply to the user: "
        "the global ones whose attribute filters the user matches, and the user's own.",
        parameters=[USER_ID, openapi.POINTS_KEY],
        responses={
            200: openapi.PointsBoost(many=True),
            **errors(401, 403, (404, "User or points system not found, or unknown Tenant-ID.")),
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
                boost_render(b, today)
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
            200: openapi.UsersPointsEventSummaryResponseItem(many=True),
            **errors(
                401,
                403,
                (404, "User or points system not found, or unknown Tenant-ID."),
                (422, "aggregation, startDate or endDate missing or invalid."),
            ),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        params = request.query_params
        aggregation = params.get("aggregation")
        if aggregation not in Aggregation.values:
            raise ValidationError("aggregation must be one of daily, weekly, monthly")
        start, end = query_date(params, "startDate"), query_date(params, "endDate")
        user = user_get(scope.tenant, user_id)
        system = _system(scope.tenant, key)
        buckets = selectors.points_event_summary(user, system.pk, aggregation, start, end)
        return Response(summary_render(buckets))


# --- admin API ------------------------------------------------------------------------------


def _badge(url: str | None) -> dict[str, str] | None:
    return {"url": url} if url else None


def system_admin_render(s: PointsSystem) -> dict[str, Any]:
    return {
        "id": str(s.public_id),
        "name": s.name,
        "key": s.key,
        "description": s.description,
        "status": s.status,
        "badge": _badge(s.badge_url),
        "maxPoints": s.max_points,
    }


def level_admin_render(lv: PointsLevel) -> dict[str, Any]:
    return {
        "id": str(lv.public_id),
        "name": lv.name,
        "key": lv.key,
        "points": lv.points,
        "description": lv.description,
        "badge": _badge(lv.badge_url),
    }


def boost_admin_render(b: PointsBoost) -> dict[str, Any]:
    return {
        "id": str(b.public_id),
        "name": b.name,
        "status": selectors.boost_def(b, None).status_on(timezone.now().date()),
        "start": b.start.isoformat(),
        "end": b.end.isoformat() if b.end else None,
        "multiplier": b.multiplier,
        "rounding": b.rounding,
        "userId": b.user.external_id if b.user is not None else None,
        "userAttributes": list(b.user_attributes),
    }


def trigger_admin_render(t: PointsTrigger) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": str(t.public_id),
        "type": t.type,
        "points": t.points,
        "status": t.status,
        "userAttributes": list(t.user_attributes),
        "blockIfOutOfPoints": t.block_if_out_of_points,
    }
    if t.type == "metric":
        body.update(
            metricId=str(t.metric.public_id) if t.metric else None,
            metricThreshold=t.metric_threshold,
            eventAttributes=list(t.event_attributes),
        )
    elif t.type == "achievement":
        body["achievementId"] = str(t.achievement.public_id) if t.achievement else None
    elif t.type == "streak":
        body["streakLength"] = t.streak_length
    elif t.type == "time":
        body.update(timeUnit=t.time_unit, timeInterval=t.time_interval)
    return body


class SystemCollection(Collection):
    noun = "Points system"
    schema_prefix = "points-systems"
    create_serializer = serializers.SystemCreateSerializer
    update_serializer = serializers.SystemUpdateSerializer
    output_schema = openapi.AdminPointsSystem

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Any]:
        return list(
            PointsSystem.objects.filter(tenant=scope.tenant, status="active").order_by(
                "created", "id"
            )[skip : skip + limit]
        )

    def get(self, scope: Scope, parent: Any, object_id: str) -> PointsSystem | None:
        return PointsSystem.objects.filter(
            tenant=scope.tenant, public_id=object_id, status="active"
        ).first()

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Any:
        return configuration.system_create(scope.tenant, data)

    def update(self, scope: Scope, parent: Any, obj: PointsSystem, data: dict[str, Any]) -> Any:
        return configuration.system_update(scope.tenant, obj, data)

    def delete(self, scope: Scope, parent: Any, obj: PointsSystem) -> None:
        configuration.system_archive(scope.tenant, obj)

    def render(self, obj: Any) -> dict[str, Any]:
        if isinstance(obj, tuple):  # created, with the nested items that were supplied
            system, nested = obj
            body = system_admin_render(system)
            renders: dict[str, Callable[[Any], dict[str, Any]]] = {
                "levels": level_admin_render,
                "boosts": boost_admin_render,
                "triggers": trigger_admin_render,
            }
            for name, items in nested.items():
                body[name] = [renders[name](item) for item in items]
            return body
        return system_admin_render(obj)


class _Nested(Collection):
    """A collection inside one points system (/points/{systemId}/...)."""

    model: Any

    def parent(self, scope: Scope, kwargs: dict[str, Any]) -> PointsSystem:
        from apps.core.api.params import is_uuid

        system_id = kwargs["system_id"]
        system = (
            PointsSystem.objects.filter(
                tenant=scope.tenant, public_id=system_id, status="active"
            ).first()
            if is_uuid(system_id)
            else None
        )
        if system is None:
            raise NotFoundError("Points system not found by ID")
        return system

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Any]:
        return list(self.model.objects.filter(system=parent).order_by("id")[skip : skip + limit])

    def get(self, scope: Scope, parent: Any, object_id: str) -> Any:
        return self.model.objects.filter(system=parent, public_id=object_id).first()

    # (create, update, delete, render): the configuration functions of this collection.
    writes: tuple[
        Callable[..., Any], Callable[..., Any], Callable[..., Any], Callable[[Any], dict[str, Any]]
    ]

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Any:
        return self.writes[0](scope.tenant, parent, data)

    def update(self, scope: Scope, parent: Any, obj: Any, data: dict[str, Any]) -> Any:
        return self.writes[1](scope.tenant, obj, data)

    def delete(self, scope: Scope, parent: Any, obj: Any) -> None:
        self.writes[2](scope.tenant, obj)

    def render(self, obj: Any) -> dict[str, Any]:
        return self.writes[3](obj)


class LevelCollection(_Nested):
    noun = "Level"
    model = PointsLevel
    create_serializer = serializers.LevelCreateSerializer
    update_serializer = serializers.LevelUpdateSerializer
    output_schema = openapi.AdminPointsLevel
    writes = (
        configuration.level_create,
        configuration.level_update,
        configuration.level_delete,
        level_admin_render,
    )


class BoostCollection(_Nested):
    noun = "Points boost"
    model = PointsBoost
    create_serializer = serializers.BoostCreateSerializer
    update_serializer = serializers.BoostUpdateSerializer
    output_schema = openapi.AdminPointsBoost
    writes = (
        configuration.boost_create,
        configuration.boost_update,
        configuration.boost_delete,
        boost_admin_render,
    )


class TriggerCollection(_Nested):
    noun = "Points trigger"
    model = PointsTrigger
    create_serializer = serializers.TriggerCreateSerializer
    update_serializer = serializers.TriggerUpdateSerializer
    output_schema = openapi.AdminPointsTrigger
    writes = (
        configuration.trigger_create,
        configuration.trigger_update,
        configuration.trigger_delete,
        trigger_admin_render,
    )
