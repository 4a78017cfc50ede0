"""Admin API: the dashboard's analytics series as JSON (a gamify extension, not in the Trophy
API). Every series reads the tenant's rollups (see apps.analytics.selectors for definitions)."""

import datetime as dt
from typing import Any

from django.http import QueryDict
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.models import Tenant
from apps.analytics import admin_openapi as docs
from apps.analytics import admin_serializers as shapes
from apps.analytics import selectors
from apps.analytics.selectors import DateRange
from apps.core.api.params import query_date_optional
from apps.core.api.views import AdminApi
from apps.core.errors import ValidationError
from apps.core.openapi import ADMIN_READ_ERRORS, errors

_CHOICES = ", ".join([*selectors.RANGES, selectors.RANGE_ALL])


def date_range_parse(params: QueryDict, tenant: Tenant, today: dt.date) -> DateRange:
    """`range` (default 30d), or `start` with an optional `end` (default today)."""
    start = query_date_optional(params, "start")
    end = query_date_optional(params, "end")
    name = params.get("range") or None
    if start is None and end is None:
        name = name or selectors.DEFAULT_RANGE
        if name not in selectors.RANGES and name != selectors.RANGE_ALL:
            raise ValidationError(f"range must be one of {_CHOICES}")
        return selectors.date_range_resolve(tenant, name, today)
    if name is not None:
        raise ValidationError("range cannot be combined with start and end")
    if start is None:
        raise ValidationError("start is required with end (YYYY-MM-DD)")
    period = DateRange(start, end or today)
    if period.start > period.end:
        raise ValidationError("start must not be after end")
    if period.length > selectors.MAX_RANGE_DAYS:
        raise ValidationError(f"start to end may span at most {selectors.MAX_RANGE_DAYS} days")
    return period


def _schema(operation: str, summary: str, response: Any, ranged: bool = True) -> Any:
    return extend_schema(
        operation_id=f"admin_analytics_{operation}",
        summary=summary,
        description=(response.__doc__ or "").strip()
        + " A gamify extension (not part of the Trophy API).",
        parameters=docs.RANGE_PARAMETERS if ranged else [],
        responses={
            200: response,
            **ADMIN_READ_ERRORS,
            **(errors((422, docs.RANGE_ERRORS)) if ranged else {}),
        },
    )


class _RangedApi(AdminApi):
    def tenant_and_range(self, request: Request) -> tuple[Tenant, DateRange]:
        tenant = self.scope(request).tenant
        return tenant, date_range_parse(request.query_params, tenant, timezone.localdate())


class ActiveUsersApi(_RangedApi):
    @_schema("active_users", "Daily and monthly active users", shapes.AnalyticsActiveUsers)
    def get(self, request: Request) -> Response:
        tenant, period = self.tenant_and_range(request)
        days = selectors.active_users(tenant, period)
        return Response(shapes.AnalyticsActiveUsers.render(days, period))


class NewUsersApi(_RangedApi):
    @_schema("new_users", "New users per day", shapes.AnalyticsNewUsers)
    def get(self, request: Request) -> Response:
        tenant, period = self.tenant_and_range(request)
        days = selectors.new_users(tenant, period)
        return Response(shapes.AnalyticsNewUsers.render(days, period))


class EventsApi(_RangedApi):
    @_schema("events", "Events and totals per metric per day", shapes.AnalyticsEvents)
    def get(self, request: Request) -> Response:
        tenant, period = self.tenant_and_range(request)
        series = selectors.metric_series(tenant, period)
        return Response(shapes.AnalyticsEvents.render(series, period))


class RetentionApi(_RangedApi):
    @_schema("retention", "Weekly retention cohorts", shapes.AnalyticsRetention)
    def get(self, request: Request) -> Response:
        tenant, period = self.tenant_and_range(request)
        report = selectors.retention(tenant, period)
        return Response(shapes.AnalyticsRetention.render(report, period))


class StreaksApi(_RangedApi):
    @_schema("streaks", "Streak lengths and active streaks", shapes.AnalyticsStreaks)
    def get(self, request: Request) -> Response:
        tenant, period = self.tenant_and_range(request)
        lengths = selectors.streak_lengths(tenant, timezone.now())
        report = shapes.StreakReport(lengths, selectors.streak_activity(tenant, period))
        return Response(shapes.AnalyticsStreaks.render(report, period))


class PointsApi(_RangedApi):
    @_schema("points", "Points awarded and levels", shapes.AnalyticsPoints)
    def get(self, request: Request) -> Response:
        tenant, period = self.tenant_and_range(request)
        systems = selectors.points_summary(tenant, period)
        return Response(shapes.AnalyticsPoints.render(systems, period))


class AchievementsApi(_RangedApi):
    @_schema("achievements", "Achievement completions and rarity", shapes.AnalyticsAchievements)
    def get(self, request: Request) -> Response:
        tenant, period = self.tenant_and_range(request)
        summary = selectors.achievements_summary(tenant, period)
        return Response(shapes.AnalyticsAchievements.render(summary, period))


class LeaderboardsApi(_RangedApi):
    @_schema("leaderboards", "Leaderboard participation", shapes.AnalyticsLeaderboards)
    def get(self, request: Request) -> Response:
        tenant, period = self.tenant_and_range(request)
        boards = selectors.leaderboard_participation(tenant, period, timezone.localdate())
        return Response(shapes.AnalyticsLeaderboards.render(boards, period))


class OverviewApi(AdminApi):
    @_schema("overview", "The tenant at a glance", shapes.AnalyticsOverview, ranged=False)
    def get(self, request: Request) -> Response:
        tenant = self.scope(request).tenant
        report = selectors.overview(tenant, timezone.localdate())
        return Response(shapes.AnalyticsOverview.render(report))
