"""The cards of the end-user page, composed from every feature app's selectors: the pipeline
sits above them all (ARCHITECTURE.md §2), so it is the one place that may read them together.
Each card is a template under templates/admin/users/enduser/cards/."""

from typing import Any

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils import timezone

from apps.accounts.staff import selected_tenant
from apps.metrics.selectors import user_metric_totals
from apps.notifications.choices import Channel
from apps.notifications.selectors import messages_for_user, push_attempt_counts
from apps.pipeline.dashboard_user import actions
from apps.pipeline.dashboard_user.metrics import (
    BAR_WIDTH,
    CHART_HEIGHT,
    DAYS_CHARTED,
    chart_width,
    metric_rows,
)
from apps.pipeline.dashboard_user.rewards import (
    RECENT_AWARDS,
    achievement_rows,
    board_rows,
    points_rows,
)
from apps.pipeline.dashboard_user.streak import WEEKDAYS, StreakCard, streak_card
from apps.streaks.selectors import (
    CALENDAR_DAY_OFF,
    CALENDAR_EXTENDED,
    CALENDAR_FROZEN,
    CALENDAR_INACTIVE,
    CALENDAR_MISSED,
    CALENDAR_PAUSED,
    CALENDAR_PENDING,
    CALENDAR_RESET,
    CALENDAR_RESTORED,
)
from apps.users.domain import local_date
from apps.users.end_user_page import EndUserCard
from apps.users.models import EndUser

RECENT_MESSAGES = 20
LEGEND = (
    (CALENDAR_EXTENDED, "extended"),
    (CALENDAR_FROZEN, "kept by a freeze"),
    (CALENDAR_PAUSED, "paused"),
    (CALENDAR_DAY_OFF, "day off"),
    (CALENDAR_MISSED, "missed: streak lost"),
    (CALENDAR_RESET, "reset"),
    (CALENDAR_RESTORED, "restored"),
    (CALENDAR_INACTIVE, "no activity"),
    (CALENDAR_PENDING, "in progress"),
)


def _card(
    request: HttpRequest, slug: str, title: str, context: dict[str, Any], wide: bool = False
) -> EndUserCard:
    body = render_to_string(f"admin/users/enduser/cards/{slug}.html", context, request)
    return EndUserCard(slug=slug, title=title, body=body, wide=wide)


def _streak_card(request: HttpRequest, common: dict[str, Any], card: StreakCard) -> EndUserCard:
    user = common["end_user"]
    urls = {
        action.slug: actions.action_url(action, user)
        for action in (
            actions.StreakReset,
            actions.StreakRestore,
            actions.StreakFreezeGrant,
            actions.StreakPauseAdd,
        )
    }
    context = {"card": card, "weekdays": WEEKDAYS, "legend": LEGEND, "urls": urls}
    return _card(request, "streak", "Streak", {**common, **context})


def _achievements_card(
    request: HttpRequest, common: dict[str, Any], completed: list[Any], pending: list[Any]
) -> EndUserCard:
    user = common["end_user"]
    # Each achievement not completed yet, with the page that completes it for the user (api
    # achievements only; the template shows the link to staff who may act).
    rows = [
        (row, actions.action_url(actions.AchievementComplete, user, row.pk))
        if row.completable
        else (row, None)
        for row in pending
    ]
    context = {"completed": completed, "pending": rows}
    return _card(request, "achievements", "Achievements", {**common, **context})


def end_user_cards(request: HttpRequest, user: EndUser) -> list[EndUserCard]:
    """Everything about one user. The number of queries depends on the tenant's configuration
    (metrics charted, boards ranked), never on the user's history."""
    tenant = selected_tenant(request)
    if tenant is None or tenant.pk != user.tenant_id:  # the page's scoped queryset rules it out
        return []
    now = timezone.now()
    # "end_user": the admin's templates call the staff member "user".
    common = {"end_user": user, "can_act": actions.may_act(request)}
    totals = user_metric_totals(user)
    streak = streak_card(tenant, user, now)
    systems, awards = points_rows(tenant, user)
    completed, pending = achievement_rows(tenant, user, totals, streak.view.length)
    metrics = {
        "rows": metric_rows(tenant, user, totals, local_date(now, user.tz)),
        "days": DAYS_CHARTED,
        "chart_width": chart_width(),
        "chart_height": CHART_HEIGHT,
        "bar_width": BAR_WIDTH,
    }
    points = {"systems": systems, "awards": awards, "recent": RECENT_AWARDS}
    # Runs are those the API reports: of today's UTC date.
    boards = {"boards": board_rows(tenant, user, now.date())}
    messages = messages_for_user(user, limit=RECENT_MESSAGES)
    attempts = push_attempt_counts([m.pk for m in messages if m.channel == Channel.PUSH])
    notes = {
        "notes": [
            (m, attempts.get(m.pk, "0") if m.channel == Channel.PUSH else "") for m in messages
        ],
        "recent": RECENT_MESSAGES,
    }
    return [
        _card(request, "metrics", "Metrics", {**common, **metrics}, wide=True),
        _streak_card(request, common, streak),
        _card(request, "points", "Points", {**common, **points}),
        _achievements_card(request, common, completed, pending),
        _card(request, "leaderboards", "Leaderboards", {**common, **boards}),
        _card(request, "notifications", "Notifications", {**common, **notes}, wide=True),
    ]
