"""Application API: leaderboards, rankings, a user's rank with history. Admin API:
leaderboard configuration."""

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.params import (
    parse_attribute_filter,
    query_bool,
    query_date_optional,
    query_int,
)
from apps.core.api.views import AppApi
from apps.core.bulk import Collection, DeleteAsked
from apps.core.errors import ValidationError
from apps.core.openapi import CONFIRM, read_errors
from apps.core.scope import Scope
from apps.leaderboards import configuration, openapi, selectors, serializers
from apps.leaderboards.domain import LeaderboardSettings
from apps.leaderboards.models import Leaderboard
from apps.leaderboards.selectors import BoardDef
from apps.users.models import EndUser
from apps.users.selectors import user_get
from apps.users.wire import USER_ID


def _run(board: BoardDef, request: Request) -> Any:
    """The run asked for, else the current one (by today's UTC date)."""
    asked = query_date_optional(request.query_params, "run")
    return selectors.run_asked(board, asked, timezone.now().date())


def _group(board: BoardDef, request: Request) -> str:
    raw = request.query_params.get("userAttributes")
    if not board.breakdown_keys:
        if raw:
            raise ValidationError("userAttributes is only valid on breakdown leaderboards")
        return ""
    return selectors.breakdown_group(board, parse_attribute_filter(raw))


class LeaderboardListApi(AppApi):
    @extend_schema(
        operation_id="leaderboards_all",
        summary="Get all leaderboards",
        description="The active and scheduled leaderboards (also the finished ones with "
        "includeFinished=true), oldest first. `end` is the end of each one's current run.",
        parameters=[openapi.INCLUDE_FINISHED],
        responses={
            200: serializers.LeaderboardsAllResponseItem(many=True),
            **read_errors(invalid="includeFinished is neither true nor false."),
        },
    )
    def get(self, request: Request) -> Response:
        include_finished = query_bool(request.query_params, "includeFinished")
        tenant = self.scope(request).tenant
        today = timezone.now().date()
        boards = selectors.boards_listed(tenant, include_finished=include_finished)
        render = serializers.leaderboards_all_response_item_render
        return Response([render(b, b.run_for(today)) for b in boards])


class LeaderboardApi(AppApi):
    @extend_schema(
        operation_id="leaderboards_get",
        summary="Get a leaderboard",
        description="The leaderboard with a page of the rankings of one run, best first. On a "
        "breakdown leaderboard, userAttributes selects the group. With userId the page starts "
        "at that user's position.",
        parameters=[
            openapi.LEADERBOARD_KEY,
            openapi.OFFSET,
            openapi.LIMIT,
            openapi.RUN,
            openapi.RANKINGS_USER_ID,
            openapi.USER_ATTRIBUTES,
        ],
        responses={
            200: serializers.LeaderboardResponseWithRankings,
            **read_errors(
                "Leaderboard not found (or inactive)",
                "offset or limit out of range; run not a date or outside the "
                "leaderboard's dates; userAttributes missing, malformed or not matching "
                "the breakdown attributes.",
            ),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        scope = self.scope(request)
        board = selectors.board_visible(scope.tenant, key)
        params = request.query_params
        offset = query_int(
            params, "offset", default=0, minimum=0, maximum=settings.LEADERBOARD_MAX_PARTICIPANTS
        )
        limit = query_int(params, "limit", default=10, minimum=0, maximum=1000)
        run, group = _run(board, request), _group(board, request)
        rankings = selectors.rankings_from(
            board, run, group, offset=offset, limit=limit, user_id=params.get("userId")
        )
        render = serializers.leaderboard_response_with_rankings_render
        return Response(render(board, run, rankings))


class UserLeaderboardApi(AppApi):
    @extend_schema(
        operation_id="users_leaderboard",
        summary="Get a user's leaderboard rank",
        description="The user's rank and value in one run of the leaderboard (in their "
        "breakdown group), with their daily rank history in that run, newest first.",
        parameters=[USER_ID, openapi.LEADERBOARD_KEY, openapi.RUN, openapi.NUM_EVENTS],
        responses={
            200: serializers.UserLeaderboardResponseWithHistory,
            **read_errors(
                "User or leaderboard not found",
                "numEvents not an integer from 0 to 100, or run not a date or outside "
                "the leaderboard's dates.",
            ),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user: EndUser = user_get(scope.tenant, user_id)
        board = selectors.board_visible(scope.tenant, key)
        days = query_int(request.query_params, "numEvents", default=10, minimum=0, maximum=100)
        run = _run(board, request)
        standing = selectors.user_standing(board, run, user)
        history = selectors.history_days(board.pk, run, user.pk, days)
        shown = standing.entry if standing.rank is not None else None
        value = int(shown.value) if shown else None
        user_rank = serializers.UserRank(rank=standing.rank, value=value, history=history)
        render = serializers.user_leaderboard_response_with_history_render
        return Response(render(board, run, user_rank))


class LeaderboardCollection(Collection):
    noun = "Leaderboard"
    create_serializer = serializers.LeaderboardCreateSerializer
    update_serializer = serializers.LeaderboardUpdateSerializer
    output_schema = serializers.AdminLeaderboard

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Leaderboard]:
        return list(
            Leaderboard.objects.filter(tenant=scope.tenant)
            .select_related("metric", "points_system")
            .order_by("created", "id")[skip : skip + limit]
        )

    def get(self, scope: Scope, parent: Any, object_id: str) -> Leaderboard | None:
        return (
            Leaderboard.objects.filter(tenant=scope.tenant, public_id=object_id)
            .select_related("metric", "points_system")
            .first()
        )

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Leaderboard:
        kwargs = serializers.LeaderboardCreateSerializer.service_kwargs(data)
        return configuration.leaderboard_create(scope.tenant, LeaderboardSettings(**kwargs))

    def update(self, scope: Scope, parent: Any, obj: Leaderboard, data: dict[str, Any]) -> Any:
        kwargs = serializers.LeaderboardUpdateSerializer.service_kwargs(data)
        return configuration.leaderboard_update(scope.tenant, obj, LeaderboardSettings(**kwargs))

    delete_parameters = (CONFIRM,)

    def delete(self, scope: Scope, parent: Any, obj: Leaderboard) -> None:
        self.delete_asked(scope, parent, obj, DeleteAsked())

    def delete_asked(self, scope: Scope, parent: Any, obj: Leaderboard, asked: DeleteAsked) -> None:
        confirm = asked.confirmation(obj.key, str(obj.public_id))
        configuration.leaderboard_delete(scope.tenant, obj, confirm=confirm)

    def render(self, b: Leaderboard) -> dict[str, Any]:
        return serializers.admin_leaderboard_render(b)
