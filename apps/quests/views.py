"""The quests extension routes. Application API (/ext/v1): a user's current quests and quest
history. Admin API (/admin/ext/v1): quest and pool configuration, each a `Collection` of the
bulk conventions."""

from collections.abc import Sequence
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.params import query_int
from apps.core.api.views import AppApi
from apps.core.bulk import Collection
from apps.core.openapi import read_errors
from apps.core.scope import Scope
from apps.quests import configuration, openapi, selectors, serializers
from apps.quests.domain import QuestPoolSettings, QuestSettings
from apps.quests.models import Quest, QuestPool
from apps.users.selectors import user_get
from apps.users.wire import USER_ID


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


class UserQuestsApi(AppApi):
    @extend_schema(
        operation_id="ext_users_quests",
        summary="Get a user's current quests",
        description="The active quests the user has now: everyone's quests that their "
        "attributes admit, and those their pools chose for them in the current period (in the "
        "user's time zone), each with its period, the progress in each goal, its reward and "
        "when it was completed. Completions are reported here, by webhooks and notifications; "
        "never in the event's response.",
        tags=openapi.TAGS,
        parameters=[USER_ID],
        responses={200: serializers.UserQuest(many=True), **read_errors("User not found")},
    )
    def get(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user = user_get(scope.tenant, user_id)
        now = timezone.now()
        assigned = selectors.user_quests_at(
            scope.tenant,
            selectors.quests_config(scope.tenant),
            user_id=user.external_id,
            tz_name=user.tz,
            attributes=user.attributes or {},
            now=now,
        )
        rows = selectors.progress_current(user, assigned)
        names = selectors.names(scope.tenant)
        return Response(
            [serializers.user_quest_render(a, rows.get(a.quest.pk), names, now) for a in assigned]
        )


class UserQuestHistoryApi(AppApi):
    @extend_schema(
        operation_id="ext_users_quest_history",
        summary="Get a user's quest history",
        description="The user's quest periods that have ended and in which they made progress, "
        "newest first: each quest's goals as the period left them, whether and when it was "
        "completed, and the points its reward paid.",
        tags=openapi.TAGS,
        parameters=[USER_ID, openapi.HISTORY_LIMIT],
        responses={
            200: serializers.QuestHistoryEntry(many=True),
            **read_errors(
                "User not found", f"limit not an integer from 1 to {openapi.MAX_HISTORY}."
            ),
        },
    )
    def get(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        limit = query_int(
            request.query_params, "limit", default=20, minimum=1, maximum=openapi.MAX_HISTORY
        )
        user = user_get(scope.tenant, user_id)
        rows = selectors.progress_history(scope.tenant, user, limit=limit, before=timezone.now())
        names = selectors.names(scope.tenant)
        return Response([serializers.quest_history_entry_render(r, names) for r in rows])
