"""Application API: a user's streak, several users' streaks.
Admin API: streak settings, freezes, pauses, restore and reset."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.fields import StrictSerializer
from apps.core.api.params import is_uuid, query_ids, query_int, query_list
from apps.core.api.shapes import Shape
from apps.core.api.views import AdminApi, AppApi
from apps.core.bulk import Issues, run_item, validated
from apps.core.errors import ValidationError
from apps.core.openapi import (
    ADMIN_FORBIDDEN,
    ADMIN_READ_ERRORS,
    ADMIN_WRITE_ERRORS,
    errors,
    read_errors,
)
from apps.streaks import configuration, openapi, selectors, serializers, services, wire
from apps.streaks.domain import TenantStreakSettings
from apps.users.domain import local_date
from apps.users.selectors import user_get, users_by_external_ids
from apps.users.wire import USER_ID

MAX_HISTORY_PERIODS = 365
MAX_ITEMS = 100


class UserStreakApi(AppApi):
    @extend_schema(
        operation_id="users_streak",
        summary="Get a user's streak",
        description="The user's current streak, its recent history (oldest first) and its "
        "active and upcoming pauses.",
        parameters=[USER_ID, openapi.HISTORY_PERIODS],
        responses={
            200: wire.StreakResponse,
            **read_errors("User not found", "historyPeriods is not an integer from 1 to 365."),
        },
    )
    def get(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        periods = query_int(
            request.query_params,
            "historyPeriods",
            default=7,
            minimum=1,
            maximum=MAX_HISTORY_PERIODS,
        )
        user = user_get(scope.tenant, user_id)
        now = timezone.now()
        view = selectors.streak_view(scope.tenant, user, selectors.streak_state_get(user), now)
        history = selectors.streak_history(user, view, periods)
        upcoming = selectors.pauses_of(user, local_date(now, user.tz))
        return Response(wire.streak_response_render(view, history, upcoming))


class StreakListApi(AppApi):
    """GET /streaks?userIds=a&userIds=b: current lengths, longest first; unknown ids omitted."""

    @extend_schema(
        operation_id="streaks_list",
        summary="Get several users' streaks",
        description="The current streak length of each known user, longest first; unknown "
        "user ids are left out.",
        parameters=[openapi.USER_IDS],
        responses={
            200: serializers.BulkStreakResponseItem(many=True),
            **read_errors(invalid="userIds missing or naming more than 100 users."),
        },
    )
    def get(self, request: Request) -> Response:
        scope = self.scope(request)
        ids = query_list(request.query_params, "userIds")
        if not ids:
            raise ValidationError("userIds is required: give 1 to 100 user ids")
        if len(ids) > MAX_ITEMS:
            raise ValidationError("userIds may name at most 100 users")
        for user_id in ids:
            scope.ensure_user_access(user_id)
        users = list(users_by_external_ids(scope.tenant, ids).values())
        states = selectors.streak_states_for(users)
        pauses = selectors.pauses_for(users)
        now = timezone.now()
        render = serializers.bulk_streak_response_item_render
        items: list[dict[str, Any]] = []
        for user in users:
            view = selectors.streak_view(
                scope.tenant, user, states.get(user.pk), now, pauses=pauses[user.pk]
            )
            items.append(render(view, user.external_id))
        items.sort(key=lambda item: (-item["streakLength"], item["userId"]))
        return Response(items)


class StreakSettingsApi(AdminApi):
    input_serializer = serializers.StreakSettingsUpdateSerializer

    @extend_schema(
        operation_id="admin_streaks_settings_get",
        summary="Get the streak settings",
        responses={200: serializers.StreakSettings, **ADMIN_READ_ERRORS},
    )
    def get(self, request: Request) -> Response:
        return Response(
            serializers.streak_settings_render(selectors.streak_config(self.scope(request).tenant))
        )

    @extend_schema(
        operation_id="admin_streaks_settings_update",
        summary="Update the streak settings",
        description="Sets the supplied fields. metrics replaces the whole list; freezes: null "
        "disables freezes. daysOff needs a daily frequency.",
        request=serializers.StreakSettingsUpdateSerializer,
        responses={200: serializers.StreakSettings, **ADMIN_WRITE_ERRORS},
    )
    def patch(self, request: Request) -> Response:
        tenant = self.scope(request).tenant
        data = validated(serializers.StreakSettingsUpdateSerializer, request.data)
        kwargs = serializers.StreakSettingsUpdateSerializer.service_kwargs(data)
        with transaction.atomic():
            configuration.streak_settings_update(tenant, TenantStreakSettings(**kwargs))
        return Response(serializers.streak_settings_render(selectors.streak_config(tenant)))


@dataclass(frozen=True)
class _UserOperation:
    """A streak operation on users. Its body is {"<key>": [1 to 100 items]} (reference §2.2),
    each item validated by `item` and naming its user in `id_field`; its answer is documented
    by `answer` and rendered by `render` from the items' results with the issues."""

    key: str
    item: type[StrictSerializer]
    id_field: str
    answer: type[Shape]
    render: Callable[[list[Any], Issues], dict[str, Any]]

    def responses(
        self, some: str = "", none: str = "", unprocessable: str = ""
    ) -> dict[int, OpenApiResponse]:
        """The documented answers: 201 when it did something for at least one item, 200 when
        for none, and the errors, whose 422 is a body not of this shape (or `unprocessable`)."""
        invalid = f'The body is not {{"{self.key}": [1 to {MAX_ITEMS} items]}}'
        return {
            201: OpenApiResponse(self.answer, description=some),
            200: OpenApiResponse(self.answer, description=none),
            **errors(
                400,
                401,
                (403, ADMIN_FORBIDDEN),
                404,
                413,
                (422, f"{invalid}, or {unprocessable}." if unprocessable else f"{invalid}."),
            ),
        }

    def run(
        self, request: Request, scope: Any, act: Callable[[Any, dict[str, Any], Issues], Any]
    ) -> Response:
        """Validate each item, find its user and act on it: `act(user, data, issues)` returns
        the item's result, or None when it did nothing (having said why in `issues`). Problems
        become issues, in item order."""
        items = self._items(request.data)
        issues = Issues()
        results: list[Any] = []
        with transaction.atomic():
            for index, item in enumerate(items):
                user_id = item.get(self.id_field) if isinstance(item, dict) else None
                where = {"userId": user_id} if isinstance(user_id, str) else {"index": index}

                def work(item: Any = item) -> Any:
                    data = validated(self.item, item)
                    user = user_get(scope.tenant, data[self.id_field])
                    return act(user, data, issues)

                result = run_item(issues, where, work, self.item)
                if result is not None:
                    results.append(result)
        return Response(self.render(results, issues), status=201 if results else 200)

    def _items(self, data: Any) -> list[Any]:
        key = self.key
        if not isinstance(data, dict) or set(data) != {key}:
            raise ValidationError(f'body must be an object {{"{key}": [...]}}')
        items = data[key]
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_ITEMS:
            raise ValidationError(f"{key} must be an array of 1 to {MAX_ITEMS} items")
        return items


GRANT_FREEZES = _UserOperation(
    "freezes",
    serializers.FreezeItemSerializer,
    "userId",
    serializers.CreateStreakFreezesResponse,
    serializers.create_streak_freezes_response_render,
)
CREATE_PAUSES = _UserOperation(
    "pauses",
    serializers.PauseItemSerializer,
    "userId",
    serializers.CreateStreakPausesResponse,
    serializers.create_streak_pauses_response_render,
)
RESTORE = _UserOperation(
    "users",
    serializers.UserRefSerializer,
    "id",
    serializers.RestoreStreaksResponse,
    serializers.restore_streaks_response_render,
)
RESET = _UserOperation(
    "users",
    serializers.UserRefSerializer,
    "id",
    serializers.ResetStreaksResponse,
    serializers.reset_streaks_response_render,
)


class StreakFreezesApi(AdminApi):
    @extend_schema(
        operation_id="admin_streaks_freezes_create",
        summary="Grant streak freezes",
        description="Each item grants one freeze to its user (repeat a user to grant several). "
        "An unknown user is an error issue; a grant beyond the user's maximum is a warning "
        "issue and grants nothing.",
        request=openapi.CreateStreakFreezes,
        responses=GRANT_FREEZES.responses(
            "At least one freeze was granted.",
            "No freeze was granted.",
            unprocessable="freezes are not enabled",
        ),
    )
    def post(self, request: Request) -> Response:
        scope = self.scope(request)
        services.streak_freezes_check(scope.tenant)

        def grant(user: Any, data: dict[str, Any], issues: Issues) -> bool | None:
            if services.streak_freeze_grant(scope.tenant, user):
                return True
            issues.warning("Would exceed maximum freeze limit", userId=user.external_id)
            return None

        return GRANT_FREEZES.run(request, scope, grant)


class StreakPausesApi(AdminApi):
    @extend_schema(
        operation_id="admin_streaks_pauses_create",
        summary="Create streak pauses",
        description="Creates each pause. A pause may not start before the user's today, and "
        "end may not be before start. Each item succeeds or fails on its own: a failed item "
        "is reported in `issues`.",
        request=openapi.CreateStreakPauses,
        responses=CREATE_PAUSES.responses(
            "At least one pause was created.", "No pause was created."
        ),
    )
    def post(self, request: Request) -> Response:
        scope = self.scope(request)

        def create(user: Any, data: dict[str, Any], issues: Issues) -> tuple[Any, str]:
            pause = services.streak_pause_create(
                scope.tenant, user, start=data["start"], end=data["end"]
            )
            return pause, user.external_id

        return CREATE_PAUSES.run(request, scope, create)

    @extend_schema(
        operation_id="admin_streaks_pauses_delete",
        summary="Delete streak pauses",
        description="Archives each pause. An unknown or malformed id is reported in `issues`, "
        "never as an HTTP error.",
        parameters=[openapi.PAUSE_IDS],
        responses={
            200: serializers.DeleteStreakPausesResponse,
            **ADMIN_READ_ERRORS,
            **errors((422, "ids missing or more than 100.")),
        },
    )
    def delete(self, request: Request) -> Response:
        scope = self.scope(request)
        issues = Issues()
        deleted = []
        with transaction.atomic():
            for pause_id in query_ids(request.query_params):
                pause = selectors.pause_get(scope.tenant, pause_id) if is_uuid(pause_id) else None
                if pause is None:
                    issues.error("Streak pause not found by ID", id=pause_id)
                    continue
                services.streak_pause_archive(pause)
                deleted.append(pause_id)
        return Response(serializers.delete_streak_pauses_response_render(deleted, issues))


class StreakRestoreApi(AdminApi):
    @extend_schema(
        operation_id="admin_streaks_restore",
        summary="Restore streaks",
        description="Sets each user's streak back to the longest length it reached within the "
        "restore window. An unknown user is an error issue; a user with nothing to restore is "
        "a warning issue.",
        request=openapi.RestoreStreaks,
        responses=RESTORE.responses("At least one streak was restored.", "No streak was restored."),
    )
    def post(self, request: Request) -> Response:
        scope = self.scope(request)

        def restore(user: Any, data: dict[str, Any], issues: Issues) -> str | None:
            if services.streak_restore(scope.tenant, user):
                return user.external_id
            issues.warning("No streak to restore", userId=user.external_id)
            return None

        return RESTORE.run(request, scope, restore)


class StreakResetApi(AdminApi):
    @extend_schema(
        operation_id="admin_streaks_reset",
        summary="Reset streaks",
        description="Sets each user's streak to 0; the current history period records "
        "`resetAt`. An unknown user is an error issue.",
        request=openapi.ResetStreaks,
        responses=RESET.responses(),
    )
    def post(self, request: Request) -> Response:
        scope = self.scope(request)

        def reset(user: Any, data: dict[str, Any], issues: Issues) -> str:
            services.streak_reset(scope.tenant, user)
            return user.external_id

        return RESET.run(request, scope, reset)
