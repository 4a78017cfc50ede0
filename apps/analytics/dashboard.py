"""The dashboard's analytics page: the selected tenant's series over a chosen range, drawn with
Chart.js (vendored under static/analytics/vendor/chartjs, no build step). The page reads the
same selectors and renders the same JSON as the analytics admin API, passed via json_script.

The range is in the URL, as the admin API takes it: `?range=7d|30d|90d|all` or
`?start=YYYY-MM-DD&end=YYYY-MM-DD`, ending on the tenant's reporting-zone today by default
(selectors.ranges). Beside each total is the same total over the previous period of the same
length; `&format=csv&chart=<name>` answers a chart's data as CSV (chart_csv.py)."""

import datetime as dt
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from apps.accounts.admin.base import selected_tenant
from apps.accounts.models import Tenant
from apps.analytics import admin_serializers as shapes
from apps.analytics import impact_serializers, selectors
from apps.analytics.chart_csv import CHARTS, chart_csv
from apps.analytics.domain import MIN_GROUP_USERS
from apps.analytics.selectors import Change, DateRange
from apps.core.api.params import query_date_optional
from apps.core.errors import ValidationError
from apps.core.replicas import lag_tolerant_page
from apps.core.shown_time import date_shown
from apps.metrics.selectors import metric_definitions
from apps.points.selectors import points_config

RANGE_LABELS = {"7d": "7 days", "30d": "30 days", "90d": "90 days", "all": "All"}
# Cohorts shown in the retention table: the most recent ones (the chart averages them all).
COHORT_ROWS = 12
# Week and period starts before the range (a cohort's Sunday, a month's first day) are named
# on the charts too.
_LABELS_BEFORE = 31


def charts_data(
    tenant: Tenant, period: DateRange, range_name: str | None, now: dt.datetime
) -> dict[str, Any]:
    today = selectors.reporting_today(tenant, now)
    return {
        "range": {
            "name": range_name or "custom",
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
        "impact": impact_serializers.analytics_impact_render(_impact(tenant, now)),
        "streaks": shapes.analytics_streaks_render(
            shapes.StreakReport(
                selectors.streak_lengths(tenant, now),
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


def _impact(tenant: Tenant, now: dt.datetime) -> selectors.Impact:
    """The Impact Score of the default cohort weeks (the admin API's without parameters): the
    most recent ones whose users can have reached day 14, whatever the page's range."""
    first, last = selectors.impact_weeks_default(tenant, now)
    return selectors.impact_score(tenant, first_week=first, last_week=last, metric=None, now=now)


def _signed(points: float) -> str:
    return f"{points:+.1f}" if round(points, 1) else "0.0"


def _impact_shown(score: dict[str, Any]) -> dict[str, Any]:
    """One rendered ImpactScore as the Impact Score card writes it."""

    def group(part: dict[str, Any]) -> str:
        if not part["users"]:
            return "no users"
        return f"{part['percent']:.1f} % of {part['users']}"

    interval = None
    if score["low"] is not None:
        interval = f"{_signed(score['low'])} to {_signed(score['high'])}"
    difference = score["difference"]
    return {
        "difference": "-" if difference is None else _signed(difference),
        "interval": interval,
        "treated": group(score["treated"]),
        "control": group(score["control"]),
        "significant": score["significant"],
        "summary": score["summary"],
    }


def impact_context(impact: dict[str, Any]) -> dict[str, Any]:
    """The card's figures: the overall score and one row per metric, written for people."""
    return {
        "from_week": dt.date.fromisoformat(impact["fromWeek"]),
        "to_week": dt.date.fromisoformat(impact["toWeek"]),
        "min_group": MIN_GROUP_USERS,
        "overall": _impact_shown(impact["overall"]),
        "metrics": [
            {"name": row["name"], **_impact_shown(row["score"])} for row in impact["metrics"]
        ],
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


@dataclass(frozen=True)
class Chosen:
    period: DateRange
    name: str | None  # a named range, or None for start and end
    error: str | None  # why the URL's range was not taken (the default is shown instead)


def range_chosen(request: HttpRequest, tenant: Tenant, today: dt.date) -> Chosen:
    """The URL's range, by the admin API's rules (selectors.date_range_choose); a refused one
    falls back to the default range, with the reason."""
    params = request.GET
    try:
        name = params.get("range") or None
        start = query_date_optional(params, "start")
        end = query_date_optional(params, "end")
        period = selectors.date_range_choose(tenant, name=name, start=start, end=end, today=today)
    except ValidationError as exc:
        default = selectors.date_range_resolve(tenant, selectors.DEFAULT_RANGE, today)
        return Chosen(default, selectors.DEFAULT_RANGE, exc.message)
    named = name or (selectors.DEFAULT_RANGE if start is None and end is None else None)
    return Chosen(period, named, None)


def _query(chosen: Chosen, **extra: str) -> str:
    """The query string of the chosen range (links keep it), with `extra`."""
    if chosen.name is not None:
        params = {"range": chosen.name}
    else:
        params = {"start": chosen.period.start.isoformat(), "end": chosen.period.end.isoformat()}
    return "?" + urlencode({**params, **extra})


def comparisons(tenant: Tenant, period: DateRange) -> dict[str, Any]:
    """Each total of the range beside the same total over the previous period."""
    now, before = (
        selectors.range_totals(tenant, period),
        selectors.range_totals(tenant, period.previous()),
    )
    return {
        "previous": before.period,
        "summary": [
            ("events", "Events", Change(now.events, before.events)),
            ("active-users", "Active users", Change(now.active_users, before.active_users)),
            ("new-users", "New users", Change(now.new_users, before.new_users)),
            ("points", "Points awarded", Change(now.points, before.points)),
            ("completions", "Achievements completed", Change(now.completions, before.completions)),
        ],
        "events_by_metric": {
            metric.key: Change(
                now.events_by_metric.get(metric.pk, 0), before.events_by_metric.get(metric.pk, 0)
            )
            for metric in metric_definitions(tenant).values()
        },
        "points_by_system": {
            system.key: Change(
                now.points_by_system.get(system.pk, 0), before.points_by_system.get(system.pk, 0)
            )
            for system in points_config(tenant).values()
        },
        "new_users": Change(now.new_users, before.new_users),
        "completions": Change(now.completions, before.completions),
    }


def _date_labels(period: DateRange, impact: dict[str, Any]) -> dict[str, str]:
    """How the charts name each date: the page's one date format (apps/core/shown_time.py).
    The Impact Score's cohort weeks are named too: they do not follow the range."""
    shown = DateRange(period.start - dt.timedelta(days=_LABELS_BEFORE), period.end)
    weeks = [dt.date.fromisoformat(week["week"]) for week in impact["weeks"]]
    return {day.isoformat(): date_shown(day) for day in [*shown.days(), *weeks]}


@lag_tolerant_page  # rollups and counts (apps/core/replicas.py)
def analytics(request: HttpRequest) -> HttpResponse:
    """GET /dashboard/analytics/?range=7d|30d|90d|all or ?start=YYYY-MM-DD&end=YYYY-MM-DD;
    with format=csv&chart=<name>, that chart's data as CSV."""
    tenant = selected_tenant(request)
    now = timezone.now()
    context: dict[str, Any] = {
        **admin.site.each_context(request),
        "title": "Analytics",
        "charts": None,
    }
    if tenant is None:
        return TemplateResponse(request, "admin/analytics/index.html", context)
    today = selectors.reporting_today(tenant, now)
    chosen = range_chosen(request, tenant, today)
    data = charts_data(tenant, chosen.period, chosen.name, now)
    if request.GET.get("format") == "csv":
        return _csv_response(data, request.GET.get("chart", ""), chosen.period)
    retention = data["retention"]
    context.update(
        {
            "ranges": [(name, label, name == chosen.name) for name, label in RANGE_LABELS.items()],
            "charts": data,
            "period": chosen.period,
            "range_error": chosen.error,
            "today": today,
            "as_of": now,
            "reporting_tz": tenant.reporting_tz,
            "compare": comparisons(tenant, chosen.period),
            # By the chart's name with "_" for "-", which templates can look up.
            "csv": {
                chart.replace("-", "_"): _query(chosen, format="csv", chart=chart)
                for chart in CHARTS
            },
            "date_labels": _date_labels(chosen.period, data["impact"]),
            "cohort_weeks": range(retention["weeks"] + 1),
            "cohort_tables": [
                ("Everyone else", cohort_rows(retention, "treatment")),
                *(
                    [("Control group", cohort_rows(retention, "control"))]
                    if any(c["control"]["users"] for c in retention["cohorts"])
                    else []
                ),
            ],
            "rarity": _rarest_first(data["achievements"]["achievements"]),
            "impact": impact_context(data["impact"]),
        }
    )
    compare = context["compare"]
    context.update(
        {
            "metric_rows": [
                (metric, compare["events_by_metric"].get(metric["key"]))
                for metric in data["events"]["metrics"]
            ],
            "point_systems": [
                (system, compare["points_by_system"].get(system["key"]))
                for system in data["points"]["systems"]
            ],
        }
    )
    return TemplateResponse(request, "admin/analytics/index.html", context)


def _csv_response(data: dict[str, Any], chart: str, period: DateRange) -> HttpResponse:
    if chart not in CHARTS:
        raise Http404(f"No chart named {chart!r}; the charts: {', '.join(CHARTS)}")
    response = HttpResponse(chart_csv(data, chart), content_type="text/csv; charset=utf-8")
    filename = f"{chart}-{period.start.isoformat()}-to-{period.end.isoformat()}.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
