"""Admin API of points: the bulk collections of systems and, inside a system, of its levels,
boosts and triggers, each written by the configuration function the dashboard uses too and
rendered by the admin shapes of apps/points/serializers.py."""

from collections.abc import Callable, Sequence
from typing import Any

from apps.core.api.params import is_uuid
from apps.core.bulk import Collection, DeleteAsked
from apps.core.errors import NotFoundError
from apps.core.openapi import CONFIRM, DEACTIVATE_DEPENDANTS
from apps.core.scope import Scope
from apps.points import configuration, selectors, serializers
from apps.points.domain import (
    PointsBoostSettings,
    PointsLevelSettings,
    PointsSystemSettings,
    PointsTriggerSettings,
)
from apps.points.models import PointsBoost, PointsLevel, PointsSystem, PointsTrigger


class SystemCollection(Collection):
    noun = "Points system"
    schema_prefix = "points-systems"
    create_serializer = serializers.SystemCreateSerializer
    update_serializer = serializers.SystemUpdateSerializer
    output_schema = serializers.AdminPointsSystem

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Any]:
        systems = selectors.points_systems_active(scope.tenant).order_by("created", "id")
        return list(systems[skip : skip + limit])

    def get(self, scope: Scope, parent: Any, object_id: str) -> PointsSystem | None:
        return selectors.points_system_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Any:
        kwargs = serializers.SystemCreateSerializer.service_kwargs(data)
        levels, boosts = kwargs.pop("levels", None), kwargs.pop("boosts", None)
        triggers = kwargs.pop("triggers", None)
        return configuration.points_system_create(
            scope.tenant,
            PointsSystemSettings(**kwargs),
            levels=None if levels is None else [PointsLevelSettings(**item) for item in levels],
            boosts=None if boosts is None else [PointsBoostSettings(**item) for item in boosts],
            triggers=None if triggers is None else [PointsTriggerSettings(**t) for t in triggers],
        )

    def update(self, scope: Scope, parent: Any, obj: PointsSystem, data: dict[str, Any]) -> Any:
        kwargs = serializers.SystemUpdateSerializer.service_kwargs(data)
        return configuration.points_system_update(scope.tenant, obj, PointsSystemSettings(**kwargs))

    delete_parameters = (CONFIRM, DEACTIVATE_DEPENDANTS)

    def delete(self, scope: Scope, parent: Any, obj: PointsSystem) -> None:
        self.delete_asked(scope, parent, obj, DeleteAsked())

    def delete_asked(
        self, scope: Scope, parent: Any, obj: PointsSystem, asked: DeleteAsked
    ) -> None:
        configuration.points_system_archive(
            scope.tenant,
            obj,
            confirm=asked.confirmation(obj.key, str(obj.public_id)),
            deactivate_dependants=asked.deactivate_dependants,
        )

    def render(self, obj: Any) -> dict[str, Any]:
        if isinstance(obj, tuple):  # created, with the nested items that were supplied
            system, nested = obj
            return serializers.admin_points_system_render(system, nested)
        return serializers.admin_points_system_render(obj)


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

    # The part's settings, which its create and update functions take (apps/points/domain.py).
    declaration: Any
    # (create, update, delete, render): the configuration functions of this collection.
    writes: tuple[
        Callable[..., Any], Callable[..., Any], Callable[..., Any], Callable[[Any], dict[str, Any]]
    ]

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Any:
        assert self.create_serializer is not None  # noqa: S101 - every nested one has both
        kwargs = self.create_serializer.service_kwargs(data)
        return self.writes[0](scope.tenant, parent, self.declaration(**kwargs))

    def update(self, scope: Scope, parent: Any, obj: Any, data: dict[str, Any]) -> Any:
        assert self.update_serializer is not None  # noqa: S101 - every nested one has both
        kwargs = self.update_serializer.service_kwargs(data)
        return self.writes[1](scope.tenant, obj, self.declaration(**kwargs))

    def delete(self, scope: Scope, parent: Any, obj: Any) -> None:
        self.writes[2](scope.tenant, obj)

    def render(self, obj: Any) -> dict[str, Any]:
        return self.writes[3](obj)


class LevelCollection(_Nested):
    noun = "Level"
    model = PointsLevel
    create_serializer = serializers.LevelCreateSerializer
    update_serializer = serializers.LevelUpdateSerializer
    output_schema = serializers.AdminPointsLevel
    declaration = PointsLevelSettings
    writes = (
        configuration.points_level_create,
        configuration.points_level_update,
        configuration.points_level_delete,
        serializers.admin_points_level_render,
    )


class BoostCollection(_Nested):
    noun = "Points boost"
    model = PointsBoost
    create_serializer = serializers.BoostCreateSerializer
    update_serializer = serializers.BoostUpdateSerializer
    output_schema = serializers.AdminPointsBoost
    declaration = PointsBoostSettings
    writes = (
        configuration.points_boost_create,
        configuration.points_boost_update,
        configuration.points_boost_delete,
        serializers.admin_points_boost_render,
    )


class TriggerCollection(_Nested):
    noun = "Points trigger"
    model = PointsTrigger
    create_serializer = serializers.TriggerCreateSerializer
    update_serializer = serializers.TriggerUpdateSerializer
    output_schema = serializers.AdminPointsTrigger
    declaration = PointsTriggerSettings
    writes = (
        configuration.points_trigger_create,
        configuration.points_trigger_update,
        configuration.points_trigger_delete,
        serializers.admin_points_trigger_render,
    )
