"""The dashboard home page: the selected tenant at a glance and the tasks staff come for."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.analytics.selectors import overview, reporting_today

# (title, admin URL name, hint): the tasks a new staff member comes for, in the order of setup.
TASKS = [
    ("Add a metric", "admin:metrics_metric_add", "what your users do: words written, lessons"),
    ("Configure streaks", "admin:streaks_streaksettings_changelist", "frequency and conditions"),
    ("Create a points system", "admin:points_pointssystem_add", "triggers, levels and boosts"),
    ("Create an achievement", "admin:achievements_achievement_add", "milestones and badges"),
    ("Create a leaderboard", "admin:leaderboards_leaderboard_add", "rankings with live results"),
    ("Email and push templates", "admin:notifications_emailtemplate_changelist", "what users get"),
    ("Webhooks", "admin:webhooks_webhookendpoint_changelist", "events sent to your backend"),
    ("API keys", "admin:accounts_apikey_changelist", "connect your backend and the SDK"),
    ("Analytics", "admin:analytics", "active users, retention, streaks, points"),
]


@dataclass(frozen=True)
class DayBar:
    date: dt.date
    events: int
    height: int  # percent of the busiest day shown


def home_context(tenant: Tenant) -> dict[str, Any]:
    """The overview of the analytics page's definitions (selectors.overview), with bars, for
    the tenant's reporting-zone today (the analytics page's and the admin API's too)."""
    now = timezone.now()
    numbers = overview(tenant, reporting_today(tenant, now))
    busiest = max((day.count for day in numbers.events), default=0) or 1
    bars = [DayBar(day.date, day.count, round(100 * day.count / busiest)) for day in numbers.events]
    return {
        "overview": numbers,
        "events_today": numbers.events[-1].count if numbers.events else 0,
        "event_bars": bars,
        "as_of": now,
        "reporting_tz": tenant.reporting_tz,
        "tasks": _tasks(),
    }


def _tasks() -> list[dict[str, str]]:
    tasks = []
    for title, url_name, hint in TASKS:
        try:
            url = reverse(url_name)
        except NoReverseMatch:  # a page not installed in this deployment
            continue
        tasks.append({"title": title, "url": url, "hint": hint})
    return tasks
