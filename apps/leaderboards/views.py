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
from apps.core.bulk import Collection
from apps.core.errors import NotFoundError, ValidationError
from apps.core.openapi import errors
from apps.core.scope import Scope
from apps.leaderboards import openapi, selectors, serializers, services
from apps.leaderboards.choices import Status
from apps.leaderboards.models import Leaderboard
from apps.leaderboards.selectors import BoardDef
from apps.users.models import EndUser
from apps.users.selectors import user_get
from apps.users.wire import USER_ID

VISIBLE = (Status.ACTIVE, Status.SCHEDULED, Status.FINISHED)


def _board(tenant: Any, key: str) -> BoardDef:
    board = selectors.board_definitions(tenant).get(key)
    if board is None or board.status not in VISIBLE:
        raise NotFoundError(f'Leaderboard not found: "{key}"')
    return board


def _run(board: BoardDef, request: Request) -> Any:
    """The run asked for (its start date, or any date inside it), else the current one (by
    today's UTC date; the last run of a finished board)."""
    asked = query_date_optional(request.query_params, "run")
    day = asked or timezone.now().date()
    if board.end is not None and day > board.end and asked is None:
        day = board.end
    run = board.run_for(day)
    if run is None:
        if asked is not None:
            raise ValidationError("run is outside this leaderboard's dates")
        run = board.start
    return run


def _group(board: BoardDef, request: Request) -> str:
    raw = request.query_params.get("userAttributes")
    if not board.breakdown_keys:
        if raw:
            raise ValidationError("userAttributes is only valid on breakdown leaderboards")
        return ""
    filters = parse_attribute_filter(raw)
    if set(filters) != set(board.breakdown_keys):
        raise ValidationError(
            f"userAttributes must give a value for each breakdown attribute: "
            f"{', '.join(board.breakdown_keys)}"
        )
    group = selectors.group_of(board, filters)
    assert group is not None  # noqa: S101 - every key given above
    return group


class LeaderboardListApi(AppApi):
    @extend_schema(
        operation_id="leaderboards_all",
        summary="Get all leaderboards",
        description="The active and scheduled leaderboards (also the finished ones with "
        "includeFinished=true), oldest first. `end` is the end of each one's current run.",
        parameters=[openapi.INCLUDE_FINISHED],
        responses={
            200: openapi.LeaderboardsAllResponseItem(many=True),
            **errors(
                401,
                403,
                (404, "Unknown Tenant-ID."),
                (422, "includeFinished is neither true nor false."),
            ),
        },
    )
    def get(self, request: Request) -> Response:
        include_finished = query_bool(request.query_params, "includeFinished")
        tenant = self.scope(request).tenant
        today = timezone.now().date()
        return Response(
            [
                {**services.board_render(b, b.run_for(today)), "status": b.status}
                for b in selectors.board_definitions(tenant).values()
                if b.status in (Status.ACTIVE, Status.SCHEDULED)
                or (include_finished and b.status == Status.FINISHED)
            ]
        )


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
            200: openapi.LeaderboardResponseWithRankings,
            **errors(
                401,
                403,
                (404, "Leaderboard not found (or inactive), or unknown Tenant-ID."),
                (
                    422,
                    "offset or limit out of range; run not a date or outside the "
                    "leaderboard's dates; userAttributes missing, malformed or not matching "
                    "the breakdown attributes.",
                ),
            ),
        },
    )
    def get(self, request: Request, key: str) -> Response:
        scope = self.scope(request)
        board = _board(scope.tenant, key)
        params = request.query_params
        offset = query_int(
            params, "offset", default=0, minimum=0, maximum=settings.LEADERBOARD_MAX_PARTICIPANTS
        )
        limit = query_int(params, "limit", default=10, minimum=0, maximum=1000)
        run, group = _run(board, request), _group(board, request)
        ordered = selectors.ordered(board.pk, run, group).select_related("user")
        user_id = params.get("userId")
        if user_id:
            # The page is centred on the user: offset counts from their position.
            entry = ordered.filter(user__external_id=user_id).first()
            if entry is None:
                return Response(
                    {**services.board_render(board, run), "status": board.status, "rankings": []}
                )
            offset = max(0, selectors.rank_of(entry) - 1 + offset)
        rankings = selectors.rankings_page(board, run, group, offset, limit)
        return Response(
            {**services.board_render(board, run), "status": board.status, "rankings": rankings}
        )


class UserLeaderboardApi(AppApi):
    @extend_schema(
        operation_id="users_leaderboard",
        summary="Get a user's leaderboard rank",
        description="The user's rank and value in one run of the leaderboard (in their "
        "breakdown group), with their daily rank history in that run, newest first.",
        parameters=[USER_ID, openapi.LEADERBOARD_KEY, openapi.RUN, openapi.NUM_EVENTS],
        responses={
            200: openapi.UserLeaderboardResponseWithHistory,
            **errors(
                401,
                403,
                (404, "User or leaderboard not found, or unknown Tenant-ID."),
                (
                    422,
                    "numEvents not an integer from 0 to 100, or run not a date or outside "
                    "the leaderboard's dates.",
                ),
            ),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user: EndUser = user_get(scope.tenant, user_id)
        board = _board(scope.tenant, key)
        days = query_int(request.query_params, "numEvents", default=10, minimum=0, maximum=100)
        run = _run(board, request)
        group = selectors.group_of(board, user.attributes)
        entry = (
            selectors.run_entries(board.pk, run, group).filter(user=user).first()
            if group is not None
            else None
        )
        # One more day than shown: the oldest shown day needs the day before it.
        history = selectors.history(board.pk, run, user.pk, days + 1) if days else []
        rank = selectors.rank_of(entry) if entry else None
        if rank is not None and rank > board.max_participants:
            entry, rank = None, None
        return Response(
            {
                **services.board_render(board, run),
                "rank": rank,
                "value": int(entry.value) if entry else None,
                "history": [
                    _history_item(h, history[i + 1] if i + 1 < len(history) else None)
                    for i, h in enumerate(history[:days])
                ],
            }
        )


def _history_item(snapshot: Any, before: Any) -> dict[str, Any]:
    return {
        "date": snapshot.date.isoformat(),
        "timestamp": f"{snapshot.date.isoformat()}T00:00:00Z",
        "previousRank": before.rank if before else None,
        "rank": snapshot.rank,
        "previousValue": int(before.value) if before and before.value is not None else None,
        "value": int(snapshot.value) if snapshot.value is not None else None,
    }


class LeaderboardCollection(Collection):
    noun = "Leaderboard"
    create_serializer = serializers.LeaderboardCreateSerializer
    update_serializer = serializers.LeaderboardUpdateSerializer
    output_schema = openapi.AdminLeaderboard

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
        return services.leaderboard_save(scope.tenant, None, data)

    def update(self, scope: Scope, parent: Any, obj: Leaderboard, data: dict[str, Any]) -> Any:
        return services.leaderboard_save(scope.tenant, obj, data)

    def delete(self, scope: Scope, parent: Any, obj: Leaderboard) -> None:
        services.leaderboard_delete(scope.tenant, obj)

    def render(self, b: Leaderboard) -> dict[str, Any]:
        return {
            "id": str(b.public_id),
            "name": b.name,
            "key": b.key,
            "description": b.description,
            "status": b.status,
            "rankBy": b.rank_by,
            "metricId": str(b.metric.public_id) if b.metric else None,
            "pointsSystemId": str(b.points_system.public_id) if b.points_system else None,
            "maxParticipants": b.max_participants,
            "start": b.start.isoformat(),
            "end": b.end.isoformat() if b.end else None,
            "startTime": b.start_time.strftime("%H:%M") if b.start_time else None,
            "endTime": b.end_time.strftime("%H:%M") if b.end_time else None,
            "breakdownAttributes": list(b.breakdown_attributes),
            "runUnit": b.run_unit,
            "runInterval": b.run_interval,
            "userAttributes": list(b.user_attributes),
        }
