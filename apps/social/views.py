"""The neighbours and friends extension routes. Application API (/ext/v1): a user's
neighbours on a leaderboard, a leaderboard restricted to a user and their friends, and the
user's friends list (read, add, remove). Admin API (/admin/ext/v1): the same friends list and
the tenant's friends settings."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.params import (
    MAX_IDS,
    MAX_NEIGHBOURS,
    query_date_optional,
    query_ids,
    query_neighbours,
)
from apps.core.api.views import AdminApi, AppApi
from apps.core.bulk import validated
from apps.core.openapi import (
    ADMIN_FORBIDDEN,
    ADMIN_READ_ERRORS,
    ADMIN_WRITE_ERRORS,
    NEIGHBOURS_K,
    errors,
    read_errors,
)
from apps.core.scope import Scope
from apps.leaderboards import selectors as boards
from apps.leagues.selectors import league_visible
from apps.social import configuration, openapi, selectors, serializers, services
from apps.social.domain import TenantFriendSettings
from apps.users.selectors import user_get
from apps.users.wire import USER_ID


def _run(board: boards.BoardDef, request: Request) -> dt.date:
    """The run asked for (its start or any date in it), else the current one (today, UTC)."""
    asked = query_date_optional(request.query_params, "run")
    return boards.run_asked(board, asked, timezone.now().date())


_BOARD_INVALID = "run not a date or outside the leaderboard's dates"


class UserLeaderboardNeighboursApi(AppApi):
    @extend_schema(
        operation_id="ext_users_leaderboard_neighbours",
        summary="Get a user's neighbours on a leaderboard",
        description="The user's rank and value in one run of the leaderboard (in their "
        "breakdown group, as GET /v1/users/{userId}/leaderboards/{key}), with the rankings "
        "from k places above them to k below, ranked exactly as the leaderboard's rankings "
        "are. A user not on the leaderboard gets rank and value null and no rankings. Read "
        "from the rank store: Redis when it holds the ranks (O(log n)), else one statement.",
        tags=openapi.NEIGHBOURS_TAGS,
        parameters=[USER_ID, openapi.LEADERBOARD_KEY, NEIGHBOURS_K, openapi.RUN],
        responses={
            200: serializers.LeaderboardNeighboursResponse,
            **read_errors(
                "User or leaderboard not found (or inactive)",
                f"k not an integer from 1 to {MAX_NEIGHBOURS}, or {_BOARD_INVALID}.",
            ),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        k = query_neighbours(request.query_params)
        user = user_get(scope.tenant, user_id)
        board = boards.board_visible(scope.tenant, key)
        run = _run(board, request)
        group = boards.group_of(board, user.attributes)
        hood = boards.neighbours(board, run, group, user.pk, k)
        return Response(serializers.leaderboard_neighbours_response_render(board, run, k, hood))


class UserLeaderboardFriendsApi(AppApi):
    @extend_schema(
        operation_id="ext_users_leaderboard_friends",
        summary="Get a leaderboard among a user's friends",
        description="One run of the leaderboard restricted to the user and the users on their "
        "friends list who are on it (in the user's breakdown group), best first, ranked among "
        "themselves in the leaderboard's order: rank and value are the user's among them "
        "(null: the user is not on the leaderboard). One statement, whatever the size of the "
        "leaderboard.",
        tags=openapi.FRIENDS_TAGS,
        parameters=[USER_ID, openapi.LEADERBOARD_KEY, openapi.RUN],
        responses={
            200: serializers.LeaderboardFriendsResponse,
            **read_errors("User or leaderboard not found (or inactive)", f"{_BOARD_INVALID}."),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user = user_get(scope.tenant, user_id)
        board = boards.board_visible(scope.tenant, key)
        run = _run(board, request)
        circle = selectors.friends_rankings(
            board, run, boards.group_of(board, user.attributes), user
        )
        return Response(serializers.leaderboard_friends_response_render(board, run, circle))


class UserLeagueFriendsApi(AppApi):
    @extend_schema(
        operation_id="ext_users_league_friends",
        summary="Get a league's week among a user's friends",
        description="The league's current week restricted to the user and the users on their "
        "friends list who have joined it, whatever their cohorts and tiers, best first by this "
        "week's score (ties as a cohort orders them), ranked among themselves. One query.",
        tags=openapi.FRIENDS_TAGS,
        parameters=[USER_ID, openapi.LEAGUE_KEY],
        responses={
            200: serializers.LeagueFriendsResponse,
            **read_errors("User or league not found (or archived)"),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        league = league_visible(scope.tenant, key)
        user = user_get(scope.tenant, user_id)
        week, entries = selectors.league_friends(league, user, timezone.now())
        return Response(serializers.league_friends_response_render(league, user, week, entries))


# --- friends lists: the same operations on both APIs ------------------------------------------

_LIST = "The user's friends list: the user ids on it, in order of id."
_ADD = (
    "Puts the users on the user's friends list (with mutual friendships, the user on theirs "
    "too). Idempotent: users already on it are left as they are, and `changed` lists those "
    "added. Every user must exist (unknown ids are refused and nothing is written), a user "
    "cannot be their own friend, and a list holds at most 1,000 users."
)
_REPLACE = (
    "Makes the user's friends list exactly the users given (an empty list empties it), with "
    "the rules of adding and removing: for syncing a social graph you keep elsewhere. "
    "Idempotent: the same list again changes nothing; `added` and `removed` say what this "
    "request did."
)
_REMOVE = (
    "Takes the users off the user's friends list (with mutual friendships, the user off "
    "theirs too). Idempotent: ids not on the list change nothing; `changed` lists those taken "
    "off."
)


def _friends_get(scope: Scope, user_id: str) -> Response:
    user = user_get(scope.tenant, user_id)
    return Response(serializers.friends_response_render(user, selectors.friends_of(user)))


def _friends_add(scope: Scope, request: Request, user_id: str) -> Response:
    data = validated(serializers.FriendIdsSerializer, request.data)
    done = services.friends_add(scope.tenant, user_id, data["userIds"])
    friends = selectors.friends_of(done.user)
    return Response(serializers.friends_changed_response_render(done.user, friends, done.added))


def _friends_replace(scope: Scope, request: Request, user_id: str) -> Response:
    data = validated(serializers.FriendListSerializer, request.data)
    done = services.friends_replace(scope.tenant, user_id, data["userIds"])
    friends = selectors.friends_of(done.user)
    render = serializers.friends_replaced_response_render
    return Response(render(done.user, friends, done.added, done.removed))


def _friends_remove(scope: Scope, request: Request, user_id: str) -> Response:
    ids = query_ids(request.query_params, "userIds")
    done = services.friends_remove(scope.tenant, user_id, ids)
    friends = selectors.friends_of(done.user)
    return Response(serializers.friends_changed_response_render(done.user, friends, done.removed))


@dataclass(frozen=True)
class _Operation:
    """One operation on a friends list, documented alike on both APIs."""

    name: str
    summary: str
    description: str
    answer: Any
    parameters: tuple[OpenApiParameter, ...] = ()
    request: Any = None
    invalid: str = ""


_GET = _Operation("get", "Get a user's friends", _LIST, serializers.FriendsResponse)
_POST = _Operation(
    "add",
    "Add friends",
    _ADD,
    serializers.FriendsChangedResponse,
    request=serializers.FriendIdsSerializer,
    invalid="userIds missing, empty, longer than 1,000 or not strings; an unknown user; the "
    "user themself; or a list would pass 1,000 users.",
)
_PUT = _Operation(
    "replace",
    "Replace a user's friends",
    _REPLACE,
    serializers.FriendsReplacedResponse,
    request=serializers.FriendListSerializer,
    invalid="userIds missing, longer than 1,000 or not strings; an unknown user; the user "
    "themself; or a list would pass 1,000 users.",
)
_DELETE = _Operation(
    "remove",
    "Remove friends",
    _REMOVE,
    serializers.FriendsChangedResponse,
    parameters=(openapi.FRIEND_IDS,),
    invalid=f"userIds missing or more than {MAX_IDS}.",
)


def _documented(operation: _Operation, *, admin: bool) -> Any:
    """extend_schema of a friends list operation, on the admin API or the application API."""
    body = (400, 413) if operation.request is not None else ()
    invalid = ((422, operation.invalid),) if operation.invalid else ()
    return extend_schema(
        operation_id=f"{'admin_ext' if admin else 'ext'}_users_friends_{operation.name}",
        summary=operation.summary,
        description=operation.description,
        tags=openapi.FRIENDS_TAGS,
        parameters=[USER_ID, *operation.parameters],
        request=operation.request,
        responses={
            200: operation.answer,
            **errors(
                *body,
                401,
                (403, ADMIN_FORBIDDEN) if admin else 403,
                (404, "User not found, or unknown Tenant-ID."),
                *invalid,
            ),
        },
    )


class UserFriendsApi(AppApi):
    input_serializer = serializers.FriendIdsSerializer

    @_documented(_GET, admin=False)
    def get(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        return _friends_get(scope, user_id)

    @_documented(_POST, admin=False)
    def post(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        return _friends_add(scope, request, user_id)

    @_documented(_PUT, admin=False)
    def put(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        return _friends_replace(scope, request, user_id)

    @_documented(_DELETE, admin=False)
    def delete(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        return _friends_remove(scope, request, user_id)


class AdminUserFriendsApi(AdminApi):
    input_serializer = serializers.FriendIdsSerializer

    @_documented(_GET, admin=True)
    def get(self, request: Request, user_id: str) -> Response:
        return _friends_get(self.scope(request), user_id)

    @_documented(_POST, admin=True)
    def post(self, request: Request, user_id: str) -> Response:
        return _friends_add(self.scope(request), request, user_id)

    @_documented(_PUT, admin=True)
    def put(self, request: Request, user_id: str) -> Response:
        return _friends_replace(self.scope(request), request, user_id)

    @_documented(_DELETE, admin=True)
    def delete(self, request: Request, user_id: str) -> Response:
        return _friends_remove(self.scope(request), request, user_id)


class FriendSettingsApi(AdminApi):
    input_serializer = serializers.FriendSettingsUpdateSerializer

    @extend_schema(
        operation_id="admin_ext_friends_settings_get",
        summary="Get the friends settings",
        tags=openapi.FRIENDS_TAGS,
        responses={200: serializers.FriendSettings, **ADMIN_READ_ERRORS},
    )
    def get(self, request: Request) -> Response:
        config = selectors.friends_config(self.scope(request).tenant)
        return Response(serializers.friend_settings_render(config))

    @extend_schema(
        operation_id="admin_ext_friends_settings_update",
        summary="Update the friends settings",
        description="Sets the supplied fields. Lists already written stay as they are: "
        "switching to mutual adds no other direction, switching to one-way removes none.",
        tags=openapi.FRIENDS_TAGS,
        request=serializers.FriendSettingsUpdateSerializer,
        responses={200: serializers.FriendSettings, **ADMIN_WRITE_ERRORS},
    )
    def patch(self, request: Request) -> Response:
        tenant = self.scope(request).tenant
        data: dict[str, Any] = validated(serializers.FriendSettingsUpdateSerializer, request.data)
        kwargs = serializers.FriendSettingsUpdateSerializer.service_kwargs(data)
        with transaction.atomic():
            configuration.friend_settings_update(tenant, TenantFriendSettings(**kwargs))
        return Response(serializers.friend_settings_render(selectors.friends_config(tenant)))
