"""Admin API: the dashboard's analytics series as JSON (a gamify extension, not in the Trophy
API). Every series reads the tenant's rollups (see apps.analytics.selectors for definitions)."""

import datetime as dt
from collections.abc import Callable
from typing import Any, TypeVar

from django.http import QueryDict
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.models import Tenant
from apps.analytics import admin_openapi as docs
from apps.analytics import admin_serializers as shapes
from apps.analytics import impact_serializers, selectors
from apps.analytics.selectors import DateRange
from apps.core.api.params import query_date_optional
from apps.core.api.shapes import Shape
from apps.core.api.views import AdminApi
from apps.core.errors import BadRequestError, ValidationError
from apps.core.openapi import ADMIN_FORBIDDEN, ADMIN_READ_ERRORS, errors
from apps.metrics.errors import MetricNotFoundError
from apps.metrics.selectors import MetricDef, metric_definitions

Report = TypeVar("Report")


def date_range_parse(params: QueryDict, tenant: Tenant, today: dt.date) -> DateRange:
    """`range` (default 30d), or `start` with an optional `end` (default today)."""
    return selectors.date_range_choose(
        tenant,
        name=params.get("range") or None,
        start=query_date_optional(params, "start"),
        end=query_date_optional(params, "end"),
        today=today,
    )


def _today(tenant: Tenant) -> dt.date:
    """The tenant's reporting-zone date: the dashboard's "today" too (selectors.ranges)."""
    return selectors.reporting_today(tenant, timezone.now())


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


def _ranged_api(
    name: str,
    operation: str,
    summary: str,
    shape: type[Shape],
    read: Callable[[Tenant, DateRange], Report],
    render: Callable[[Report, DateRange], dict[str, Any]],
) -> type[AdminApi]:
    """The view of one ranged series: `read(tenant, period)` rendered by `render`, the render
    of `shape`."""

    class RangedApi(AdminApi):
        lag_tolerant = True  # a series of rollups (apps/core/replicas.py)

        @_schema(operation, summary, shape)
        def get(self, request: Request) -> Response:
            tenant = self.scope(request).tenant
            period = date_range_parse(request.query_params, tenant, _today(tenant))
            return Response(render(read(tenant, period), period))

    RangedApi.__name__ = RangedApi.__qualname__ = name
    return RangedApi


def _streaks(tenant: Tenant, period: DateRange) -> shapes.StreakReport:
    lengths = selectors.streak_lengths(tenant, timezone.now())
    return shapes.StreakReport(lengths, selectors.streak_activity(tenant, period))


def _participation(tenant: Tenant, period: DateRange) -> list[selectors.BoardParticipation]:
    return selectors.leaderboard_participation(tenant, period, _today(tenant))


ActiveUsersApi = _ranged_api(
    "ActiveUsersApi",
    "active_users",
    "Daily and monthly active users",
    shapes.AnalyticsActiveUsers,
    selectors.active_users,
    shapes.analytics_active_users_render,
)
NewUsersApi = _ranged_api(
    "NewUsersApi",
    "new_users",
    "New users per day",
    shapes.AnalyticsNewUsers,
    selectors.new_users,
    shapes.analytics_new_users_render,
)
EventsApi = _ranged_api(
    "EventsApi",
    "events",
    "Events and totals per metric per day",
    shapes.AnalyticsEvents,
    selectors.metric_series,
    shapes.analytics_events_render,
)
RetentionApi = _ranged_api(
    "RetentionApi",
    "retention",
    "Weekly retention cohorts",
    shapes.AnalyticsRetention,
    selectors.retention,
    shapes.analytics_retention_render,
)
StreaksApi = _ranged_api(
    "StreaksApi",
    "streaks",
    "Streak lengths and active streaks",
    shapes.AnalyticsStreaks,
    _streaks,
    shapes.analytics_streaks_render,
)
PointsApi = _ranged_api(
    "PointsApi",
    "points",
    "Points awarded and levels",
    shapes.AnalyticsPoints,
    selectors.points_summary,
    shapes.analytics_points_render,
)
AchievementsApi = _ranged_api(
    "AchievementsApi",
    "achievements",
    "Achievement completions and rarity",
    shapes.AnalyticsAchievements,
    selectors.achievements_summary,
    shapes.analytics_achievements_render,
)
LeaderboardsApi = _ranged_api(
    "LeaderboardsApi",
    "leaderboards",
    "Leaderboard participation",
    shapes.AnalyticsLeaderboards,
    _participation,
    shapes.analytics_leaderboards_render,
)


class OverviewApi(AdminApi):
    lag_tolerant = True

    @_schema("overview", "The tenant at a glance", shapes.AnalyticsOverview, ranged=False)
    def get(self, request: Request) -> Response:
        tenant = self.scope(request).tenant
        report = selectors.overview(tenant, _today(tenant))
        return Response(shapes.analytics_overview_render(report))


def _query_day(params: QueryDict, name: str) -> dt.date | None:
    """A date parameter; a malformed one is a malformed request (400), whose document says
    it is a date."""
    try:
        return query_date_optional(params, name)
    except ValidationError as exc:
        raise BadRequestError(exc.message) from None


def impact_metric_parse(tenant: Tenant, params: QueryDict) -> MetricDef | None:
    """The `metric` parameter: a metric key of the tenant, or absent (any metric)."""
    key = params.get("metric")
    if not key:
        return None
    metric = metric_definitions(tenant).get(key)
    if metric is None:
        raise MetricNotFoundError(key[:100])
    return metric


class ImpactApi(AdminApi):
    """GET /admin/ext/v1/analytics/impact: the Impact Score (selectors/impact.py)."""

    lag_tolerant = True

    @extend_schema(
        operation_id="admin_analytics_impact",
        summary="Impact Score: day-14 retention of treated users against the control group",
        description=(impact_serializers.AnalyticsImpact.__doc__ or "").strip()
        + " A gamify extension (not part of the Trophy API).",
        parameters=docs.IMPACT_PARAMETERS,
        responses={
            200: impact_serializers.AnalyticsImpact,
            **errors((400, docs.IMPACT_MALFORMED), 401, (403, ADMIN_FORBIDDEN)),
            **errors((404, "No metric of this key in the tenant, or unknown Tenant-ID.")),
            **errors((422, docs.IMPACT_ERRORS)),
        },
    )
    def get(self, request: Request) -> Response:
        tenant = self.scope(request).tenant
        params, now = request.query_params, timezone.now()
        first, last = selectors.impact_weeks_choose(
            tenant,
            from_week=_query_day(params, "fromWeek"),
            to_week=_query_day(params, "toWeek"),
            now=now,
        )
        metric = impact_metric_parse(tenant, params)
        impact = selectors.impact_score(
            tenant, first_week=first, last_week=last, metric=metric, now=now
        )
        return Response(impact_serializers.analytics_impact_render(impact))
