"""The leagues extension routes. Application API (/ext/v1): the tenant's leagues, a user's
current week and history, a cohort's standings. Admin API (/admin/ext/v1): league
configuration, a `Collection` of the bulk conventions."""

from collections.abc import Sequence
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.params import MAX_NEIGHBOURS, is_uuid, query_int, query_neighbours
from apps.core.api.views import AppApi
from apps.core.bulk import Collection
from apps.core.openapi import NEIGHBOURS_K, read_errors
from apps.core.scope import Scope
from apps.leagues import configuration, openapi, selectors, serializers
from apps.leagues.domain import LeagueSettings
from apps.leagues.errors import CohortNotFoundError
from apps.leagues.models import League
from apps.users.selectors import user_get
from apps.users.wire import USER_ID


class LeagueListApi(AppApi):
    @extend_schema(
        operation_id="ext_leagues_all",
        summary="Get all leagues",
        description="The tenant's leagues (active and inactive; archived ones are hidden), "
        "oldest first, each with its tiers and the current week's start and end.",
        tags=openapi.TAGS,
        responses={200: serializers.LeagueResponse(many=True), **read_errors()},
    )
    def get(self, request: Request) -> Response:
        tenant = self.scope(request).tenant
        now = timezone.now()
        render = serializers.league_response_render
        return Response(
            [
                render(league, selectors.league_scored(tenant, league), league.week(now))
                for league in selectors.leagues_config(tenant)
            ]
        )


class UserLeagueApi(AppApi):
    @extend_schema(
        operation_id="ext_users_league",
        summary="Get a user's current league week",
        description="The user's week in the league: its start, end and time left, the user's "
        "tier and, once their first qualifying event of the week has joined them, their "
        "cohort's standings (names, scores, live zones) and their own rank and zone.",
        tags=openapi.TAGS,
        parameters=[USER_ID, openapi.LEAGUE_KEY],
        responses={
            200: serializers.UserLeagueResponse,
            **read_errors("User or league not found (or archived)"),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        league = selectors.league_visible(scope.tenant, key)
        user = user_get(scope.tenant, user_id)
        now = timezone.now()
        mine = selectors.user_week(league, user, now)
        return Response(serializers.user_league_response_render(league, mine, now))


class UserLeagueNeighboursApi(AppApi):
    @extend_schema(
        operation_id="ext_users_league_neighbours",
        summary="Get a user's neighbours in their league cohort",
        description="The user's rank in their cohort of the league's current week, with the "
        "members from k places above them to k below, ranked as the cohort's standings are. "
        "Before their first qualifying event of the week joins them: rank null, no standings.",
        tags=["neighbours"],
        parameters=[USER_ID, openapi.LEAGUE_KEY, NEIGHBOURS_K],
        responses={
            200: serializers.UserLeagueNeighboursResponse,
            **read_errors(
                "User or league not found (or archived)",
                f"k not an integer from 1 to {MAX_NEIGHBOURS}.",
            ),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        k = query_neighbours(request.query_params)
        league = selectors.league_visible(scope.tenant, key)
        user = user_get(scope.tenant, user_id)
        mine = selectors.user_week(league, user, timezone.now())
        return Response(serializers.user_league_neighbours_response_render(league, mine, k))


class UserLeagueHistoryApi(AppApi):
    @extend_schema(
        operation_id="ext_users_league_history",
        summary="Get a user's league history",
        description="The user's past weeks in the league (the current one excluded), newest "
        "first: tier, score, and once the week's results are written, placement, zone, the "
        "tier earned and the rewards.",
        tags=openapi.TAGS,
        parameters=[USER_ID, openapi.LEAGUE_KEY, openapi.HISTORY_LIMIT],
        responses={
            200: serializers.LeagueWeek(many=True),
            **read_errors(
                "User or league not found (or archived)",
                f"limit not an integer from 1 to {openapi.MAX_HISTORY}.",
            ),
        },
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        limit = query_int(
            request.query_params, "limit", default=10, minimum=1, maximum=openapi.MAX_HISTORY
        )
        league = selectors.league_visible(scope.tenant, key)
        user = user_get(scope.tenant, user_id)
        before = league.week(timezone.now()).start
        entries = selectors.entries_history(league, user, limit=limit, before=before)
        return Response([serializers.league_week_render(league, e) for e in entries])


class LeagueCohortApi(AppApi):
    @extend_schema(
        operation_id="ext_leagues_cohort",
        summary="Get a cohort's standings",
        description="A cohort of the league: its tier, week and members, best first. While its "
        "week runs the ranks and zones are live; once it is finished they are its results.",
        tags=openapi.TAGS,
        parameters=[openapi.LEAGUE_KEY, openapi.COHORT_ID],
        responses={
            200: serializers.LeagueCohortResponse,
            **read_errors("League (or archived) or cohort not found"),
        },
    )
    def get(self, request: Request, key: str, cohort_id: str) -> Response:
        league = selectors.league_visible(self.scope(request).tenant, key)
        if not is_uuid(cohort_id):
            raise CohortNotFoundError("Cohort not found")
        cohort = selectors.cohort_get(league, cohort_id)
        standings = selectors.cohort_standings(league, cohort)
        return Response(serializers.league_cohort_response_render(league, cohort, standings))


class LeagueCollection(Collection):
    noun = "League"
    create_serializer = serializers.LeagueCreateSerializer
    update_serializer = serializers.LeagueUpdateSerializer
    output_schema = serializers.AdminLeague

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[League]:
        return selectors.leagues_list(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> League | None:
        return selectors.league_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> League:
        kwargs = serializers.LeagueCreateSerializer.service_kwargs(data)
        return configuration.league_create(scope.tenant, LeagueSettings(**kwargs))

    def update(self, scope: Scope, parent: Any, obj: League, data: dict[str, Any]) -> League:
        kwargs = serializers.LeagueUpdateSerializer.service_kwargs(data)
        return configuration.league_update(scope.tenant, obj, LeagueSettings(**kwargs))

    def delete(self, scope: Scope, parent: Any, obj: League) -> None:
        configuration.league_delete(scope.tenant, obj)

    def render(self, obj: League) -> dict[str, Any]:
        return serializers.admin_league_render(obj)
