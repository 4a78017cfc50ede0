"""The dashboard's analytics page: the selected tenant's series over a chosen range, drawn with
Chart.js (vendored under static/analytics/vendor/chartjs, no build step). The page reads the
same selectors and renders the same JSON as the analytics admin API, passed via json_script."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from apps.accounts.admin.base import selected_tenant
from apps.accounts.models import Tenant
from apps.analytics import admin_serializers as shapes
from apps.analytics import selectors

RANGE_LABELS = {"7d": "7 days", "30d": "30 days", "90d": "90 days", "all": "All"}
# Cohorts shown in the retention table: the most recent ones (the chart averages them all).
COHORT_ROWS = 12


def charts_data(tenant: Tenant, range_name: str) -> dict[str, Any]:
    today = timezone.localdate()
    period = selectors.date_range_resolve(tenant, range_name, today)
    return {
        "range": {
            "name": range_name,
            "start": period.start.isoformat(),
            "end": period.end.isoformat(),
            "days": period.length,
        },
        "activeUsers": shapes.analytics_active_users_render(
            selectors.active_users(tenant, period), period
        ),
        "newUsers": shapes.analytics_new_users_render(selectors.new_users(tenant, period), period),
        "events": shapes.analytics_events_render(selectors.metric_series(tenant, period), period),
        "retention": shapes.analytics_retention_render(selectors.retention(tenant, period), period),
        "streaks": shapes.analytics_streaks_render(
            shapes.StreakReport(
                selectors.streak_lengths(tenant, timezone.now()),
                selectors.streak_activity(tenant, period),
            ),
            period,
        ),
        "points": shapes.analytics_points_render(selectors.points_summary(tenant, period), period),
        "achievements": shapes.analytics_achievements_render(
            selectors.achievements_summary(tenant, period), period
        ),
        "leaderboards": shapes.analytics_leaderboards_render(
            selectors.leaderboard_participation(tenant, period, today), period
        ),
    }


def _rarest_first(achievements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(achievements, key=lambda a: (a["rarity"], a["name"]))


def cohort_rows(retention: dict[str, Any], group: str) -> list[dict[str, Any]]:
    """The most recent cohorts first, each with one cell per week offset (None: not reached
    yet, or nobody started that week)."""
    rows = []
    for cohort in retention["cohorts"][-COHORT_ROWS:][::-1]:
        weeks = cohort[group]["weeks"]
        cells = [
            weeks[offset]["percent"] if offset < len(weeks) else None
            for offset in range(retention["weeks"] + 1)
        ]
        rows.append({"week": cohort["week"], "users": cohort[group]["users"], "cells": cells})
    return rows


def analytics(request: HttpRequest) -> HttpResponse:
    """GET /dashboard/analytics/?range=7d|30d|90d|all (anything else: the default range)."""
    range_name = request.GET.get("range", "")
    if range_name not in RANGE_LABELS:
        range_name = selectors.DEFAULT_RANGE
    tenant = selected_tenant(request)
    context: dict[str, Any] = {
        **admin.site.each_context(request),
        "title": "Analytics",
        "ranges": [(name, label, name == range_name) for name, label in RANGE_LABELS.items()],
        "charts": None,
    }
    if tenant is not None:
        data = charts_data(tenant, range_name)
        context["charts"] = data
        retention = data["retention"]
        context["cohort_weeks"] = range(retention["weeks"] + 1)
        context["cohort_tables"] = [
            ("Everyone else", cohort_rows(retention, "treatment")),
            *(
                [("Control group", cohort_rows(retention, "control"))]
                if any(c["control"]["users"] for c in retention["cohorts"])
                else []
            ),
        ]
        context["rarity"] = _rarest_first(data["achievements"]["achievements"])
    return TemplateResponse(request, "admin/analytics/index.html", context)
