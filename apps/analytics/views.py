"""Application API: a user's year in review."""

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.analytics import openapi, serializers, wrapped
from apps.core.api.params import query_int
from apps.core.api.views import AppApi
from apps.core.openapi import read_errors
from apps.users.domain import local_date
from apps.users.selectors import user_get
from apps.users.wire import USER_ID


class UserWrappedApi(AppApi):
    @extend_schema(
        operation_id="users_wrapped",
        summary="Get a user's wrapped data",
        description="The user's year in review, from their local calendar: active days, weeks "
        "and months; their most active day, week and month and the entire year, each with "
        "their metrics, points, achievements completed and best leaderboard ranks; and their "
        "longest streak of the year.",
        parameters=[USER_ID, openapi.YEAR],
        responses={
            200: serializers.WrappedResponse,
            **read_errors("User not found", "year is not an integer from 1 to the current year."),
        },
    )
    def get(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user = user_get(scope.tenant, user_id)
        # "The current year" is the user's: on 1 January in Tokyo, it is already the new year.
        this_year = local_date(timezone.now(), user.tz).year
        year = query_int(
            request.query_params, "year", default=this_year, minimum=1, maximum=this_year
        )
        report = wrapped.user_wrapped(scope.tenant, user, year)
        return Response(serializers.wrapped_response_render(report, scope.tenant))
