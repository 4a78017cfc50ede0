"""The variables an email template can use, built for one user and one message.

Names are the documented ones (README, "Template variables"); values are plain data (dicts,
lists, strings, numbers), so the sandboxed template can reach nothing else.
"""

import datetime as dt
import functools
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import jinja2
from django.db.models import Sum
from jinja2 import meta as jinja2_meta

from apps.accounts.domain import app_name, brand_color
from apps.accounts.models import Tenant
from apps.achievements.domain import rarity
from apps.achievements.selectors import (
    achievement_definitions,
    achievement_stats,
    user_completions,
)
from apps.leaderboards.choices import Status as BoardStatus
from apps.leaderboards.selectors import boards_listed, run_current, user_standing
from apps.metrics.models import MetricDailyChange
from apps.metrics.selectors import metric_definitions, user_metric_totals
from apps.notifications import domain
from apps.notifications.choices import LEAGUE_TYPES, QUEST_TYPES, NotificationType
from apps.notifications.rendering import LEAGUE_SAMPLE, QUESTS_SAMPLE
from apps.notifications.tokens import preferences_url, unsubscribe_url
from apps.points.models import PointsDailyChange
from apps.points.selectors import points_config, user_totals
from apps.streaks import domain as streak_domain
from apps.streaks.models import StreakState
from apps.streaks.selectors import (
    pauses_for,
    streak_config,
    streak_state_get,
    streak_states_for,
    streak_view,
)
from apps.users.models import EndUser

Period = tuple[dt.date, dt.date]


def current_period(today: dt.date, aggregation: str) -> Period:
    """The tenant's aggregation period holding `today`: the Monday-to-Sunday week or the
    calendar month (the "current period" of metric and points changes outside recaps)."""
    if aggregation == "weekly":
        start = today - dt.timedelta(days=today.weekday())
        return start, start + dt.timedelta(days=6)
    start = today.replace(day=1)
    end = (start + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
    return start, end


def previous_period(period: Period) -> Period:
    start, end = period
    if (end - start).days == 6:
        return start - dt.timedelta(days=7), start - dt.timedelta(days=1)
    before_end = start - dt.timedelta(days=1)
    return before_end.replace(day=1), before_end


def percent_change(change: Decimal, before: Decimal) -> float | None:
    """This period's change against the period before's, in percent; None when there was
    nothing before to compare with."""
    if before == 0:
        return None
    return round(float((change - before) / abs(before) * 100), 1)


def _changes_by_day(rows: Any, period: Period, previous: Period) -> dict[int, list[Decimal]]:
    """{id: [change in period, change in the period before]} from (id, date, change) rows."""
    sums: dict[int, list[Decimal]] = {}
    for key, day, change in rows:
        slot = 0 if period[0] <= day <= period[1] else 1 if previous[0] <= day else None
        if slot is not None:
            sums.setdefault(key, [Decimal(0), Decimal(0)])[slot] += Decimal(change)
    return sums


def metrics_context(tenant: Tenant, user: EndUser, period: Period) -> dict[str, Any]:
    previous = previous_period(period)
    totals = user_metric_totals(user)
    rows = MetricDailyChange.objects.filter(
        user=user, date__gte=previous[0], date__lte=period[1]
    ).values_list("metric_id", "date", "change")
    changes = _changes_by_day(rows, period, previous)
    result = {}
    for key, metric in metric_definitions(tenant).items():
        change, before = changes.get(metric.pk, [Decimal(0), Decimal(0)])
        result[key] = {
            "name": metric.name,
            "units": metric.units or None,
            "total": totals.get(metric.pk, Decimal(0)).normalize(),
            "change": change.normalize(),
            "percentChange": percent_change(change, before),
        }
    return result


def points_context(tenant: Tenant, user: EndUser, period: Period) -> dict[str, Any]:
    systems = points_config(tenant)
    if not systems:
        return {}
    totals = user_totals(user, [s.pk for s in systems.values()])
    rows = (
        PointsDailyChange.objects.filter(
            user=user, date__gte=period[0], date__lte=period[1], system_id__in=totals
        )
        .values("system_id")
        .annotate(change=Sum("change"))
        .values_list("system_id", "change")
    )
    changes = dict(rows)
    result = {}
    for key, system in systems.items():
        total = totals.get(system.pk)
        level = next(
            (lv for lv in system.levels if total is not None and lv.pk == total.level_id), None
        )
        result[key] = {
            "name": system.name,
            "total": total.total if total is not None else 0,
            "change": changes.get(system.pk, 0),
            "level": {"key": level.key, "name": level.name} if level is not None else None,
        }
    return result


class StreakStates:
    """The streak states and pauses of a batch of users, read in two queries the first time
    one of them is needed (a worker sending 100 reminders reads them once, not 100 times)."""

    def __init__(self, users: Sequence[EndUser]) -> None:
        self._users = users
        self._loaded: tuple[dict[int, StreakState], dict[int, list[Any]]] | None = None

    def of(self, user: EndUser) -> tuple[StreakState | None, list[Any]]:
        if self._loaded is None:
            self._loaded = (streak_states_for(self._users), pauses_for(self._users))
        states, pauses = self._loaded
        return states.get(user.pk), pauses.get(user.pk, [])


def streak_context(
    tenant: Tenant, user: EndUser, now: dt.datetime, states: StreakStates | None = None
) -> dict[str, Any]:
    config = streak_config(tenant)
    if states is not None:
        state, pauses = states.of(user)
        view = streak_view(tenant, user, state, now, pauses=pauses)
    else:
        view = streak_view(tenant, user, streak_state_get(user), now)
    live = view.settlement.state
    return {
        "length": view.length,
        "frequency": config.frequency,
        "extended": view.length > 0 and live.settled_through == view.current,
        "expires": view.expires.isoformat() if view.expires else None,
        "periodStart": view.current.isoformat(),
        "periodEnd": streak_domain.period_end(view.current, config.frequency).isoformat(),
    }


def achievement_context(tenant: Tenant, achievement_pk: int) -> dict[str, Any] | None:
    definition = achievement_definitions(tenant).get(achievement_pk)
    if definition is None:
        return None
    stats = achievement_stats(tenant)
    completions = stats.completions.get(achievement_pk, 0)
    return {
        "key": definition.key,
        "name": definition.name,
        "description": definition.description,
        "badgeUrl": definition.badge_url,
        "completions": completions,
        "rarity": rarity(completions, stats.users),
    }


def leaderboards_context(tenant: Tenant, user: EndUser, now: dt.datetime) -> dict[str, Any]:
    """The user's place on each active board, by key: its name, the user's rank in the current
    run (None when not ranked, or below the places the board shows) and value."""
    today = now.astimezone(dt.UTC).date()  # runs are read by UTC date, as the API does
    result = {}
    for board in boards_listed(tenant, include_finished=False):
        if board.status != BoardStatus.ACTIVE:
            continue
        standing = user_standing(board, run_current(board, today), user)
        entry = standing.entry
        result[board.key] = {
            "name": board.name,
            "rank": standing.rank,
            "value": entry.value.normalize() if entry is not None else None,
        }
    return result


def app_context(tenant: Tenant) -> dict[str, Any]:
    branding = tenant.branding or {}
    logo = branding.get("logo") or {}
    return {
        "name": app_name(branding, tenant.name),
        "url": branding.get("appUrl") or "",
        "logoUrl": logo.get("url") if isinstance(logo, dict) else None,
        "brandColor": brand_color(branding),
    }


@functools.lru_cache(maxsize=512)
def variables_used(*sources: str) -> frozenset[str]:
    """The top-level variables these template sources read (parsing only, nothing runs).
    Sending builds only those: a reminder that shows no metrics costs no metrics query."""
    parser = jinja2.Environment(autoescape=False)  # noqa: S701 - parsed, never rendered
    names: set[str] = set()
    for source in sources:
        try:
            names |= jinja2_meta.find_undeclared_variables(parser.parse(source))
        except jinja2.TemplateSyntaxError:
            return frozenset(_COSTLY)  # rendering will report the error
    return frozenset(names)


# The parts that cost queries, built only when a template reads them.
_COSTLY = ("achievement", "leaderboards", "metrics", "points", "streak")


def message_context(
    tenant: Tenant,
    user: EndUser,
    type: str,
    payload: dict[str, Any],
    now: dt.datetime,
    used: frozenset[str] | None = None,
    states: StreakStates | None = None,
) -> dict[str, Any]:
    """Everything a template of `type` may use for this user, as of `now`; with `used` (see
    variables_used), only the costly parts the template reads; `states` shares the streak
    reads of a batch."""

    def wanted(name: str) -> bool:
        return used is None or name in used

    today = now.astimezone(domain.send_zone(user.tz)).date()
    period = current_period(today, tenant.aggregation_period)
    context: dict[str, Any] = {
        "user": {
            "id": user.external_id,
            "name": user.name,
            "email": user.email,
            "attributes": dict(user.attributes),
        },
        "app": app_context(tenant),
        "preferencesUrl": preferences_url(user),
        "unsubscribeUrl": unsubscribe_url(user, type),
    }
    if type == NotificationType.RECAP and "periodStart" in payload:
        period = (
            dt.date.fromisoformat(payload["periodStart"]),
            dt.date.fromisoformat(payload["periodEnd"]),
        )
        context["recap"] = {
            "periodStart": payload["periodStart"],
            "periodEnd": payload["periodEnd"],
        }
    if type == NotificationType.REACTIVATION:
        context["reactivation"] = {
            "messageNumber": payload.get("messageNumber", 1),
            "daysSinceLastActive": payload.get("daysSinceLastActive", 3),
        }
    if type in LEAGUE_TYPES:
        # The week as the job saw it when it made the message due (plain values).
        context["league"] = dict(payload.get("league", {}))
    if type in QUEST_TYPES:
        # Today's quests as the sweep saw them (plain values).
        context["quests"] = dict(payload.get("quests", {}))
    if type == NotificationType.ACHIEVEMENT_COMPLETED and "achievementId" in payload:
        # Always built: a message about an achievement that no longer exists is not sent.
        context["achievement"] = achievement_context(tenant, payload["achievementId"])
    if wanted("metrics"):
        context["metrics"] = metrics_context(tenant, user, period)
    if wanted("points"):
        context["points"] = points_context(tenant, user, period)
    if wanted("streak"):
        context["streak"] = streak_context(tenant, user, now, states)
    if wanted("leaderboards"):
        context["leaderboards"] = leaderboards_context(tenant, user, now)
    return context


def preview_payload(tenant: Tenant, user: EndUser, type: str, now: dt.datetime) -> dict[str, Any]:
    """What a preview shows in place of the thing notified about: the user's latest
    achievement (or the tenant's first), the last whole recap period, a first reactivation."""
    if type == NotificationType.ACHIEVEMENT_COMPLETED:
        completed = user_completions(user)
        definitions = achievement_definitions(tenant)
        latest = max(completed, key=lambda pk: completed[pk], default=None)
        pk = latest if latest in definitions else next(iter(definitions), None)
        return {"achievementId": pk} if pk is not None else {}
    if type == NotificationType.RECAP:
        today = now.astimezone(domain.send_zone(user.tz)).date()
        start, end = previous_period(current_period(today, tenant.aggregation_period))
        return {"periodStart": start.isoformat(), "periodEnd": end.isoformat()}
    if type == NotificationType.REACTIVATION:
        return {"messageNumber": 1, "daysSinceLastActive": 3}
    if type in LEAGUE_TYPES:
        return {"league": {**LEAGUE_SAMPLE, "score": str(LEAGUE_SAMPLE["score"])}}
    if type in QUEST_TYPES:
        return {"quests": dict(QUESTS_SAMPLE)}
    return {}
