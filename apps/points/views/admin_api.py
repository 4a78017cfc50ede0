"""Admin API of points: the bulk collections of systems and, inside a system, of its levels,
boosts and triggers, each written by the configuration function the dashboard uses too, and
the admin renders of those objects."""

from collections.abc import Callable, Sequence
from typing import Any

from django.utils import timezone

from apps.core.api.params import is_uuid
from apps.core.bulk import Collection
from apps.core.errors import NotFoundError
from apps.core.scope import Scope
from apps.points import configuration, openapi, selectors, serializers
from apps.points.models import PointsBoost, PointsLevel, PointsSystem, PointsTrigger


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
        systems = selectors.points_systems_active(scope.tenant).order_by("created", "id")
        return list(systems[skip : skip + limit])

    def get(self, scope: Scope, parent: Any, object_id: str) -> PointsSystem | None:
        return selectors.points_system_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Any:
        kwargs = serializers.SystemCreateSerializer.service_kwargs(data)
        return configuration.points_system_create(scope.tenant, **kwargs)

    def update(self, scope: Scope, parent: Any, obj: PointsSystem, data: dict[str, Any]) -> Any:
        kwargs = serializers.SystemUpdateSerializer.service_kwargs(data)
        return configuration.points_system_update(scope.tenant, obj, **kwargs)

    def delete(self, scope: Scope, parent: Any, obj: PointsSystem) -> None:
        configuration.points_system_archive(scope.tenant, obj)

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
    """A collection inside one active points system (/points/{systemId}/...)."""

    model: Any

    def parent(self, scope: Scope, kwargs: dict[str, Any]) -> PointsSystem:
        system_id = kwargs["system_id"]
        system = None
        if is_uuid(system_id):
            system = selectors.points_system_get(scope.tenant, system_id)
        if system is None:
            raise NotFoundError("Points system not found by ID")
        return system

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Any]:
        return list(self.model.objects.filter(system=parent).order_by("id")[skip : skip + limit])

    def get(self, scope: Scope, parent: Any, object_id: str) -> Any:
        obj = self.model.objects.filter(system=parent, public_id=object_id).first()
        if obj is not None:
            obj.system = parent  # the services read it: no second query
        return obj

    # (create, update, delete, render): the configuration functions of this collection.
    writes: tuple[
        Callable[..., Any], Callable[..., Any], Callable[..., Any], Callable[[Any], dict[str, Any]]
    ]

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Any:
        assert self.create_serializer is not None  # noqa: S101 - every nested one has both
        kwargs = self.create_serializer.service_kwargs(data)
        return self.writes[0](scope.tenant, parent, **kwargs)

    def update(self, scope: Scope, parent: Any, obj: Any, data: dict[str, Any]) -> Any:
        assert self.update_serializer is not None  # noqa: S101 - every nested one has both
        kwargs = self.update_serializer.service_kwargs(data)
        return self.writes[1](scope.tenant, obj, **kwargs)

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
        configuration.points_level_create,
        configuration.points_level_update,
        configuration.points_level_delete,
        level_admin_render,
    )


class BoostCollection(_Nested):
    noun = "Points boost"
    model = PointsBoost
    create_serializer = serializers.BoostCreateSerializer
    update_serializer = serializers.BoostUpdateSerializer
    output_schema = openapi.AdminPointsBoost
    writes = (
        configuration.points_boost_create,
        configuration.points_boost_update,
        configuration.points_boost_delete,
        boost_admin_render,
    )


class TriggerCollection(_Nested):
    noun = "Points trigger"
    model = PointsTrigger
    create_serializer = serializers.TriggerCreateSerializer
    update_serializer = serializers.TriggerUpdateSerializer
    output_schema = openapi.AdminPointsTrigger
    writes = (
        configuration.points_trigger_create,
        configuration.points_trigger_update,
        configuration.points_trigger_delete,
        trigger_admin_render,
    )
