"""The dashboard home page: the selected tenant at a glance and the tasks staff come for."""

import dataclasses
import datetime as dt
from typing import Any

from django.db.models import Sum
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.metrics.models import MetricDailyChange
from apps.users.models import EndUser

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
DAYS_SHOWN = 7


@dataclasses.dataclass(frozen=True)
class DayEvents:
    date: dt.date
    events: int
    height: int  # percent of the busiest day, for the bar


@dataclasses.dataclass(frozen=True)
class Overview:
    users: int
    dau: int
    mau: int
    events_today: int
    events_per_day: list[DayEvents]


def overview(tenant: Tenant, today: dt.date) -> Overview:
    """Users, active users (a user is active on a local day with any event) and events per day,
    from the users table and the daily rollup: four indexed queries whatever the tenant's size."""
    users = EndUser.objects.filter(tenant=tenant)
    since = today - dt.timedelta(days=DAYS_SHOWN - 1)
    per_day = dict(
        MetricDailyChange.objects.filter(tenant=tenant, date__gte=since, date__lte=today)
        .values("date")
        .annotate(events=Sum("events"))
        .values_list("date", "events")
    )
    busiest = max(per_day.values(), default=0) or 1
    days = [since + dt.timedelta(days=offset) for offset in range(DAYS_SHOWN)]
    return Overview(
        users=users.count(),
        dau=users.filter(last_active_on=today).count(),
        mau=users.filter(last_active_on__gt=today - dt.timedelta(days=30)).count(),
        events_today=per_day.get(today, 0),
        events_per_day=[
            DayEvents(day, per_day.get(day, 0), round(100 * per_day.get(day, 0) / busiest))
            for day in days
        ],
    )


def home_context(tenant: Tenant) -> dict[str, Any]:
    return {"overview": overview(tenant, timezone.localdate()), "tasks": _tasks()}


def _tasks() -> list[dict[str, str]]:
    tasks = []
    for title, url_name, hint in TASKS:
        try:
            url = reverse(url_name)
        except NoReverseMatch:  # a page not installed in this deployment
            continue
        tasks.append({"title": title, "url": url, "hint": hint})
    return tasks
