"""Reads of streak configuration and of users' streaks. Reads are always current: a missed
period shows as a lost, frozen or paused streak at once, computed from the stored state
without waiting for the freeze job (which later writes the same result)."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import QuerySet

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.metrics.models import MetricDailyChange, MetricEvent
from apps.metrics.selectors import metric_definitions
from apps.streaks import domain
from apps.streaks.choices import PauseStatus
from apps.streaks.models import (
    StreakCondition,
    StreakLoss,
    StreakPause,
    StreakPeriod,
    StreakSettings,
    StreakState,
)
from apps.users.domain import local_date, zone
from apps.users.models import EndUser


@dataclass(frozen=True)
class StreakConfig:
    """A tenant's streak settings, cached per configuration version."""

    frequency: str = domain.DAILY
    mode: str = "AND"
    customization_enabled: bool = False
    days_off: frozenset[int] = frozenset()
    thresholds: dict[int, Decimal] = field(default_factory=dict)  # metric pk -> threshold
    metric_keys: dict[int, str] = field(default_factory=dict)  # condition metric pk -> key
    freezes_enabled: bool = False
    freeze_start_count: int = 0
    freeze_max_count: int = 0
    freeze_auto_earn_interval: int | None = None
    freeze_auto_earn_amount: int | None = None


def streaks_configured(config: StreakConfig) -> bool:
    """Without conditions (and no personalization) nobody can have a streak: callers may skip
    reading any state."""
    return bool(config.thresholds) or config.customization_enabled


def streaking_users(tenant: Tenant) -> int:
    """Users who hold a streak (length above zero as last written): what a streak nobody could
    extend would take from (domain.conditionless_problem)."""
    return StreakState.objects.filter(tenant=tenant, length__gt=0).count()


def streak_config(tenant: Tenant) -> StreakConfig:
    def load() -> StreakConfig:
        settings = StreakSettings.objects.filter(tenant=tenant).first()
        if settings is None:
            return StreakConfig()
        conditions = list(
            StreakCondition.objects.filter(tenant=tenant)
            .select_related("metric")
            .order_by("metric__key")
        )
        return StreakConfig(
            frequency=settings.frequency,
            mode=settings.evaluation_mode,
            customization_enabled=settings.customization_enabled,
            days_off=frozenset(settings.days_off),
            thresholds={c.metric_id: c.threshold for c in conditions},
            metric_keys={c.metric_id: c.metric.key for c in conditions},
            freezes_enabled=settings.freezes_enabled,
            freeze_start_count=settings.freeze_start_count,
            freeze_max_count=settings.freeze_max_count,
            freeze_auto_earn_interval=settings.freeze_auto_earn_interval,
            freeze_auto_earn_amount=settings.freeze_auto_earn_amount,
        )

    return tenant_cached(tenant, "streaks", load)


def user_rules(
    config: StreakConfig, state: StreakState | None, metric_pks_by_key: dict[str, int]
) -> domain.Rules:
    """The tenant's rules with the user's personalization applied (when allowed)."""
    thresholds: dict[int, Decimal] = dict(config.thresholds)
    mode, days_off, enabled = config.mode, config.days_off, True
    if state is not None:
        enabled = state.enabled
        if config.customization_enabled:
            if state.pref_thresholds is not None:
                thresholds = {
                    metric_pks_by_key[key]: Decimal(str(value))
                    for key, value in state.pref_thresholds.items()
                    if key in metric_pks_by_key
                }
            mode = state.pref_mode or mode
            if state.pref_days_off is not None:
                days_off = frozenset(state.pref_days_off)
    if config.frequency != domain.DAILY:
        days_off = frozenset()
    return domain.Rules(
        frequency=config.frequency,
        mode=mode,
        thresholds=thresholds,
        days_off=days_off,
        enabled=enabled,
        freezes_enabled=config.freezes_enabled,
    )


def state_of(state: StreakState | None, config: StreakConfig, user: EndUser) -> domain.State:
    """The stored state as the domain sees it, in the user's current time zone. A state kept
    for another frequency (the tenant changed it) is a streak of 0: every streak starts afresh
    with the new frequency."""
    if state is None:
        return domain.State(freezes=config.freeze_start_count if config.freezes_enabled else 0)
    if state.frequency != config.frequency or not state.enabled:
        return domain.State(freezes=state.freezes)
    settled = state.settled_through
    if settled is not None and state.tz != user.tz:
        settled = domain.remap_settled(settled, state.frequency, zone(state.tz), zone(user.tz))
    return domain.State(
        length=state.length, started=state.started, settled_through=settled, freezes=state.freezes
    )


def current_period_of(user: EndUser, frequency: str, now: dt.datetime) -> dt.date:
    return domain.period_start(local_date(now, user.tz), frequency)


def pauses_of(user: EndUser, from_date: dt.date | None = None) -> list[domain.Pause]:
    pauses = StreakPause.objects.filter(user=user, status=PauseStatus.ACTIVE)
    if from_date is not None:
        pauses = pauses.filter(end__gte=from_date)
    return [
        domain.Pause(id=str(p.public_id), start=p.start, end=p.end)
        for p in pauses.order_by("start")
    ]


def last_activity(
    user: EndUser, metric_pks: Sequence[int], start: dt.date, end: dt.date
) -> dt.datetime | None:
    """The moment of the user's latest event (not undone) of these metrics on their local dates
    start..end: when a period was last extended, once undoing events moved it."""
    moment: dt.datetime | None = (
        MetricEvent.objects.filter(
            user=user,
            metric_id__in=list(metric_pks),
            local_date__gte=start,
            local_date__lte=end,
            undone__isnull=True,
        )
        .order_by("-occurred_at")
        .values_list("occurred_at", flat=True)
        .first()
    )
    return moment


def period_changes(
    user: EndUser, metric_pks: Sequence[int], start: dt.date, end: dt.date
) -> dict[int, Decimal]:
    """The net change of each metric on the user's local dates start..end."""
    rows = MetricDailyChange.objects.filter(
        user=user, metric_id__in=list(metric_pks), date__gte=start, date__lte=end
    ).values_list("metric_id", "change")
    changes: dict[int, Decimal] = {}
    for metric_pk, change in rows:
        changes[metric_pk] = changes.get(metric_pk, Decimal(0)) + change
    return changes


@dataclass(frozen=True)
class StreakView:
    """A user's streak as of now: settled in memory, ready to render."""

    config: StreakConfig
    rules: domain.Rules
    state: domain.State
    settlement: domain.Settlement
    current: dt.date
    expires: dt.date | None
    extended_at: dt.datetime | None
    pauses: tuple[domain.Pause, ...]

    @property
    def length(self) -> int:
        return self.settlement.state.length


def streak_state_get(user: EndUser) -> StreakState | None:
    return StreakState.objects.filter(user=user).first()


def metric_pks_by_key(tenant: Tenant) -> dict[str, int]:
    return {key: metric.pk for key, metric in metric_definitions(tenant).items()}


def streak_view(
    tenant: Tenant,
    user: EndUser,
    state_row: StreakState | None,
    now: dt.datetime,
    pauses: Sequence[domain.Pause] | None = None,
) -> StreakView:
    """The user's streak as of `now`, from its stored state (`streak_state_get`). `pauses`
    are the user's active pauses when the caller loaded them (bulk reads); else read here."""
    config = streak_config(tenant)
    rules = user_rules(config, state_row, metric_pks_by_key(tenant))
    state = state_of(state_row, config, user)
    current = current_period_of(user, config.frequency, now)
    if pauses is None:
        pauses = pauses_of(user, state.settled_through) if state.length else ()
    pauses = tuple(pauses)
    settlement = domain.settle(state, rules, pauses, current)
    live = settlement.state
    alive = live.length > 0
    return StreakView(
        config=config,
        rules=rules,
        state=state,
        settlement=settlement,
        current=current,
        expires=domain.expires(live, rules, pauses) if alive else None,
        extended_at=state_row.extended_at if (alive and state_row is not None) else None,
        pauses=pauses,
    )


@dataclass(frozen=True)
class HistoryItem:
    period_start: dt.date
    period_end: dt.date
    length: int
    used_freeze: bool
    used_pause: bool
    reset_at: dt.datetime | None


def _periods_window(
    user: EndUser, view: StreakView, periods: int
) -> tuple[dt.date, dict[dt.date, StreakPeriod], StreakPeriod | None]:
    """The first of the last `periods` periods, the stored ones among them by start, and the
    stored one before them (what the streak stood at when the window opened). Two queries."""
    frequency = view.config.frequency
    first = domain.shift_periods(view.current, frequency, -(periods - 1))
    rows = {
        r.period_start: r
        for r in StreakPeriod.objects.filter(
            user=user, frequency=frequency, period_start__gte=first, period_start__lte=view.current
        )
    }
    before = (
        StreakPeriod.objects.filter(user=user, frequency=frequency, period_start__lt=first)
        .order_by("-period_start")
        .first()
    )
    return first, rows, before


def streak_history(user: EndUser, view: StreakView, periods: int) -> list[HistoryItem]:
    """The last `periods` periods ending with the current one, oldest first. Two queries."""
    frequency = view.config.frequency
    first, rows, before = _periods_window(user, view, periods)
    all_pauses = pauses_of(user, first)
    frozen_now = set(view.settlement.frozen)
    previous = before.length if before is not None else 0
    if before is not None and before.period_start != domain.previous_period(first, frequency):
        previous = 0  # conservatively: a gap before the window is not walked
    items: list[HistoryItem] = []
    period = first
    for _ in range(periods):
        row = rows.get(period)
        paused = domain.is_paused(period, frequency, all_pauses)
        if row is not None:
            # A reset period shows the 0 it was left at.
            length, used_freeze, used_pause, reset_at = (
                0 if row.reset_stands else row.length,
                row.used_freeze,
                row.used_pause or paused,
                row.reset_at,
            )
        elif period in frozen_now:
            length, used_freeze, used_pause, reset_at = previous, True, False, None
        elif period == view.current:
            length, used_freeze, used_pause, reset_at = view.length, False, False, None
        elif previous > 0 and (paused or view.rules.is_day_off(period)):
            length, used_freeze, used_pause, reset_at = previous, False, paused, None
        else:
            length, used_freeze, used_pause, reset_at = 0, False, False, None
        items.append(
            HistoryItem(
                period,
                domain.period_end(period, frequency),
                length,
                used_freeze,
                used_pause,
                reset_at,
            )
        )
        previous = length
        period = domain.next_period(period, frequency)
    return items


def streak_states_for(users: Sequence[EndUser]) -> dict[int, StreakState]:
    return {s.user_id: s for s in StreakState.objects.filter(user__in=list(users))}


def pauses_for(users: Sequence[EndUser]) -> dict[int, list[domain.Pause]]:
    by_user: dict[int, list[domain.Pause]] = {user.pk: [] for user in users}
    for pause in StreakPause.objects.filter(user__in=list(users), status=PauseStatus.ACTIVE):
        by_user[pause.user_id].append(domain.Pause(str(pause.public_id), pause.start, pause.end))
    return by_user


def streak_views_of(
    tenant: Tenant, users: Sequence[EndUser], now: dt.datetime
) -> dict[int, StreakView]:
    """Each user's streak as of `now` (streak_view), for a page of users in two queries: their
    states and their active pauses."""
    if not users:
        return {}
    states, pauses = streak_states_for(users), pauses_for(users)
    return {
        user.pk: streak_view(tenant, user, states.get(user.pk), now, pauses=pauses[user.pk])
        for user in users
    }


def streak_losses_since(tenant: Tenant, since: dt.datetime) -> QuerySet[StreakLoss]:
    """The tenant's streaks lost at `since` or later, newest first, with their users."""
    return (
        StreakLoss.objects.filter(tenant=tenant, lost_at__gte=since)
        .select_related("user")
        .order_by("-lost_at", "-pk")
    )


def pause_get(tenant: Tenant, public_id: str) -> StreakPause | None:
    return (
        StreakPause.objects.select_related("user")
        .filter(tenant=tenant, public_id=public_id, status=PauseStatus.ACTIVE)
        .first()
    )


def upcoming_pauses(view: StreakView, today: dt.date) -> list[domain.Pause]:
    """Active and upcoming pauses (past ones are omitted), as the streak endpoint lists them."""
    return [p for p in view.pauses if p.end >= today]


# --- dashboard reads: the end-user page ------------------------------------------------------

# What happened in one period of a user's streak calendar (streak_calendar).
CALENDAR_EXTENDED = "extended"  # activity met the conditions
CALENDAR_FROZEN = "frozen"  # missed, kept by a freeze
CALENDAR_PAUSED = "paused"  # kept by a pause
CALENDAR_DAY_OFF = "day off"  # a day off of a daily streak
CALENDAR_RESET = "reset"  # reset by staff or the admin API
CALENDAR_RESTORED = "restored"  # carried by a restore (missed or reset before it)
CALENDAR_MISSED = "missed"  # missed: the streak was lost here
CALENDAR_INACTIVE = "inactive"  # nothing done, and no streak to lose
CALENDAR_PENDING = "pending"  # the current period, not extended yet


@dataclass(frozen=True)
class CalendarPeriod:
    start: dt.date
    end: dt.date
    status: str  # one of the CALENDAR_ values
    length: int  # the streak's length at the period's end


def _stored_status(row: StreakPeriod) -> tuple[str, int]:
    if row.reset_stands:
        return CALENDAR_RESET, 0
    if row.extended:
        return CALENDAR_EXTENDED, row.length
    if row.restored_at is not None:
        return CALENDAR_RESTORED, row.length
    if row.used_freeze:
        return CALENDAR_FROZEN, row.length
    if row.used_pause:
        return CALENDAR_PAUSED, row.length
    return CALENDAR_INACTIVE, row.length


def streak_calendar(
    user: EndUser, view: StreakView, periods: int, pauses: Sequence[domain.Pause] | None = None
) -> list[CalendarPeriod]:
    """The last `periods` periods ending with the current one, oldest first, each with what
    happened in it: stored periods say it directly; the rest are derived like the streak is
    (a day off or a pause keeps it, freezes due now are used, else it was missed). Three
    queries, two when the caller passes the user's active `pauses` (pauses_of)."""
    frequency = view.config.frequency
    first, rows, before = _periods_window(user, view, periods)
    previous = 0
    if before is not None and before.period_start == domain.previous_period(first, frequency):
        previous = _stored_status(before)[1]  # a gap before the window is not walked
    if pauses is None:
        pauses = pauses_of(user, first)
    frozen_now, paused_now = set(view.settlement.frozen), set(view.settlement.paused)
    calendar = []
    period = first
    for _ in range(periods):
        row = rows.get(period)
        if row is not None:
            status, length = _stored_status(row)
        elif period in frozen_now:
            status, length = CALENDAR_FROZEN, previous
        elif period in paused_now:
            status, length = CALENDAR_PAUSED, previous
        elif period == view.current:
            status, length = CALENDAR_PENDING, view.length
        elif view.rules.is_day_off(period):
            status, length = CALENDAR_DAY_OFF, previous
        elif previous > 0 and domain.is_paused(period, frequency, pauses):
            status, length = CALENDAR_PAUSED, previous
        else:
            status, length = (CALENDAR_MISSED if previous > 0 else CALENDAR_INACTIVE), 0
        end = domain.period_end(period, frequency)
        calendar.append(CalendarPeriod(period, end, status, length))
        previous = length
        period = domain.next_period(period, frequency)
    return calendar


def streak_restore_length(user: EndUser, view: StreakView) -> int | None:
    """The length services.streak_restore would set now: the longest one reached inside the
    restore window, when longer than the current streak; None when there is nothing to
    restore. The dashboard says it before staff confirm a restore."""
    frequency = view.config.frequency
    window = domain.period_start(domain.restore_window_start(view.current, frequency), frequency)
    best = (
        StreakPeriod.objects.filter(user=user, frequency=frequency, period_start__gte=window)
        .order_by("-length", "-period_start")
        .values_list("length", flat=True)
        .first()
    )
    if best is None or best <= view.length:
        return None
    return best
