"""The quests extension routes. Admin API (/admin/ext/v1): quest and pool configuration, each a
`Collection` of the bulk conventions."""

from collections.abc import Sequence
from typing import Any

from apps.core.bulk import Collection
from apps.core.scope import Scope
from apps.quests import configuration, selectors, serializers
from apps.quests.domain import QuestPoolSettings, QuestSettings
from apps.quests.models import Quest, QuestPool


class QuestCollection(Collection):
    noun = "Quest"
    create_serializer = serializers.QuestCreateSerializer
    update_serializer = serializers.QuestUpdateSerializer
    output_schema = serializers.AdminQuest

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Quest]:
        return selectors.quests_list(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> Quest | None:
        return selectors.quest_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Quest:
        kwargs = serializers.QuestCreateSerializer.service_kwargs(data)
        return configuration.quest_create(scope.tenant, QuestSettings(**kwargs))

    def update(self, scope: Scope, parent: Any, obj: Quest, data: dict[str, Any]) -> Quest:
        kwargs = serializers.QuestUpdateSerializer.service_kwargs(data)
        return configuration.quest_update(scope.tenant, obj, QuestSettings(**kwargs))

    def delete(self, scope: Scope, parent: Any, obj: Quest) -> None:
        configuration.quest_delete(scope.tenant, obj)

    def render(self, obj: Quest) -> dict[str, Any]:
        return serializers.admin_quest_render(obj)


class QuestPoolCollection(Collection):
    noun = "Quest pool"
    create_serializer = serializers.PoolCreateSerializer
    update_serializer = serializers.PoolUpdateSerializer
    output_schema = serializers.AdminQuestPool

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[QuestPool]:
        return selectors.pools_list(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> QuestPool | None:
        return selectors.pool_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> QuestPool:
        kwargs = serializers.PoolCreateSerializer.service_kwargs(data)
        return configuration.pool_create(scope.tenant, QuestPoolSettings(**kwargs))

    def update(self, scope: Scope, parent: Any, obj: QuestPool, data: dict[str, Any]) -> QuestPool:
        kwargs = serializers.PoolUpdateSerializer.service_kwargs(data)
        return configuration.pool_update(scope.tenant, obj, QuestPoolSettings(**kwargs))

    def delete(self, scope: Scope, parent: Any, obj: QuestPool) -> None:
        configuration.pool_delete(scope.tenant, obj)

    def render(self, obj: QuestPool) -> dict[str, Any]:
        return serializers.admin_pool_render(obj)
