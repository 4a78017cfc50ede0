"""Writes of streak settings and per-user streak state."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.metrics.selectors import metric_definitions
from apps.streaks import domain
from apps.streaks.choices import PauseStatus
from apps.streaks.errors import (
    StreakCustomizationDisabledError,
    StreakPauseInvalidError,
    StreakSettingsInvalidError,
)
from apps.streaks.models import (
    StreakCondition,
    StreakPause,
    StreakPeriod,
    StreakSettings,
    StreakState,
)
from apps.streaks.selectors import (
    StreakConfig,
    StreakView,
    period_changes,
    streak_config,
    streak_state_get,
    streak_view,
    streaks_configured,
)
from apps.users.domain import local_date, zone
from apps.users.models import EndUser


def streak_settings_update(tenant: Tenant, data: dict[str, Any]) -> None:
    """Apply a validated PATCH /streaks/settings body; omitted fields keep their values."""
    definitions = metric_definitions(tenant)
    unknown = sorted(
        item["key"] for item in data.get("metrics", []) if item["key"] not in definitions
    )
    if unknown:  # checked before anything is written
        raise StreakSettingsInvalidError(f"metrics: unknown metric keys: {', '.join(unknown)}")
    settings, _ = StreakSettings.objects.get_or_create(tenant=tenant)
    frequency = data.get("frequency", settings.frequency)
    days_off = data.get("daysOff", settings.days_off if frequency == domain.DAILY else [])
    if frequency != domain.DAILY:
        if data.get("daysOff"):
            raise StreakSettingsInvalidError("daysOff is only allowed with daily frequency")
        days_off = []  # switching away from daily clears days off (reference §4.3)
    settings.frequency = frequency
    settings.days_off = sorted(set(days_off))
    if "evaluationMode" in data:
        settings.evaluation_mode = data["evaluationMode"]
    if "customizationEnabled" in data:
        settings.customization_enabled = data["customizationEnabled"]
    if "freezes" in data:
        freezes = data["freezes"]
        settings.freezes_enabled = freezes is not None
        if freezes is not None:
            settings.freeze_start_count = freezes["startCount"]
            settings.freeze_max_count = freezes["maxCount"]
            settings.freeze_auto_earn_interval = freezes.get("autoEarnInterval")
            settings.freeze_auto_earn_amount = freezes.get("autoEarnAmount")
    settings.save()
    if "metrics" in data:
        StreakCondition.objects.filter(tenant=tenant).delete()
        StreakCondition.objects.bulk_create(
            [
                StreakCondition(
                    tenant=tenant,
                    metric_id=definitions[item["key"]].pk,
                    threshold=item["threshold"],
                )
                for item in data["metrics"]
            ]
        )
    tenant_config_changed(tenant)


@dataclass(frozen=True)
class StreakEventResult:
    """The streak step's outcome for one event."""

    view: StreakView  # the streak after the event
    extended: bool
    started: bool  # this event started a new streak
    lost: int  # length lost in the periods settled now (0 if none)
    freezes_consumed: int


def _state_row(
    tenant: Tenant, user: EndUser, row: StreakState | None, config: StreakConfig, now: dt.datetime
) -> StreakState:
    if row is not None:
        return row
    start = config.freeze_start_count if config.freezes_enabled else 0
    return StreakState(
        tenant=tenant,
        user=user,
        frequency=config.frequency,
        freezes=start,
        freezes_earned_on=local_date(now, user.tz),
        tz=user.tz,
    )


def _persist_settlement(tenant: Tenant, user: EndUser, row: StreakState, view: StreakView) -> None:
    """Write the periods that settling accounted for (freezes consumed, pauses used)."""
    settlement = view.settlement
    frequency = view.config.frequency
    length = view.state.length
    rows = [
        StreakPeriod(
            tenant=tenant,
            user=user,
            frequency=frequency,
            period_start=period,
            period_end=domain.period_end(period, frequency),
            length=length,
            used_freeze=period in settlement.frozen,
            used_pause=period in settlement.paused,
        )
        for period in sorted({*settlement.frozen, *settlement.paused})
    ]
    StreakPeriod.objects.bulk_create(rows, ignore_conflicts=True)
    new = settlement.state
    row.frequency = frequency
    row.tz = user.tz  # the state is now expressed in the user's current time zone
    row.length, row.started = new.length, new.started
    row.settled_through, row.freezes = new.settled_through, new.freezes


def _period_upsert(
    tenant: Tenant,
    user: EndUser,
    frequency: str,
    period: dt.date,
    *,
    length: int,
    extended: bool,
    reset_at: dt.datetime | None = None,
) -> None:
    """Record a period's outcome in one statement (INSERT ... ON CONFLICT DO UPDATE)."""
    # A reset only marks the period: the length it reached stays recorded, for restore.
    fields = ["reset_at"] if reset_at else ["length", "extended"]
    StreakPeriod.objects.bulk_create(
        [
            StreakPeriod(
                tenant=tenant,
                user=user,
                frequency=frequency,
                period_start=period,
                period_end=domain.period_end(period, frequency),
                length=length,
                extended=extended,
                reset_at=reset_at,
            )
        ],
        update_conflicts=True,
        unique_fields=["user", "frequency", "period_start"],
        update_fields=fields,
    )


def _save(row: StreakState, user: EndUser) -> None:
    """Save the state with its due instant recomputed (None when there is no live streak)."""
    row.due_at = (
        domain.missed_at(row.settled_through, row.frequency, zone(user.tz))
        if row.length > 0 and row.settled_through is not None
        else None
    )
    row.save()


def streak_apply_event(
    tenant: Tenant, user: EndUser, metric_pk: int, now: dt.datetime | None = None
) -> StreakEventResult:
    """The streak step of the pipeline. The caller holds the user's lock."""
    now = now or timezone.now()
    config = streak_config(tenant)
    if not streaks_configured(config):
        return StreakEventResult(streak_view(tenant, user, None, now), False, False, 0, 0)
    stored = streak_state_get(user)
    view = streak_view(tenant, user, stored, now)
    rules, current = view.rules, view.current
    settled = view.settlement.state
    relevant = rules.enabled and metric_pk in rules.thresholds
    extended = False
    new_state = settled
    if relevant and (settled.length == 0 or settled.settled_through != current):
        changes = period_changes(
            user, list(rules.thresholds), current, domain.period_end(current, rules.frequency)
        )
        if domain.conditions_met(rules, changes):
            new_state, extended = domain.extend(settled, current, rules.frequency)
    changed = extended or view.settlement.frozen or view.settlement.paused or view.settlement.lost
    if not changed:
        return StreakEventResult(view, False, False, 0, 0)
    row = _state_row(tenant, user, stored, view.config, now)
    _persist_settlement(tenant, user, row, view)
    started = False
    if extended:
        started = new_state.length == 1
        row.length, row.started = new_state.length, new_state.started
        row.settled_through = new_state.settled_through
        row.extended_at, row.tz = now, user.tz
        _period_upsert(
            tenant, user, rules.frequency, current, length=new_state.length, extended=True
        )
    _save(row, user)
    # A streak that was alive already loaded the pauses that matter from here on.
    after = (
        streak_view(tenant, user, row, now, pauses=view.pauses if view.state.length else None)
        if extended
        else view
    )
    return StreakEventResult(
        after, extended, started, view.settlement.lost, len(view.settlement.frozen)
    )


def _locked_state(
    tenant: Tenant, user: EndUser, now: dt.datetime
) -> tuple[StreakState, StreakView]:
    """The user's state row (created when missing) and current view, with its settlement
    written, under the user's row lock: admin operations start from a settled streak."""
    EndUser.objects.select_for_update().filter(pk=user.pk).first()
    stored = streak_state_get(user)
    view = streak_view(tenant, user, stored, now)
    row = _state_row(tenant, user, stored, view.config, now)
    _persist_settlement(tenant, user, row, view)
    return row, view


def streak_freeze_grant(tenant: Tenant, user: EndUser, now: dt.datetime | None = None) -> bool:
    """Grant one freeze; False (nothing granted) when it would exceed the maximum."""
    now = now or timezone.now()
    if not streak_config(tenant).freezes_enabled:
        raise StreakSettingsInvalidError("Streak freezes are not enabled for this tenant")
    row, view = _locked_state(tenant, user, now)
    if row.freezes + 1 > view.config.freeze_max_count:
        _save(row, user)
        return False
    row.freezes += 1
    _save(row, user)
    return True


def streak_pause_create(
    tenant: Tenant, user: EndUser, start: dt.date, end: dt.date, now: dt.datetime | None = None
) -> StreakPause:
    now = now or timezone.now()
    if start < local_date(now, user.tz):
        raise StreakPauseInvalidError("start must not be before today in the user's time zone")
    return StreakPause.objects.create(tenant=tenant, user=user, start=start, end=end)


def streak_pause_archive(pause: StreakPause) -> None:
    pause.status = PauseStatus.ARCHIVED
    pause.save(update_fields=["status"])


def streak_restore(tenant: Tenant, user: EndUser, now: dt.datetime | None = None) -> bool:
    """Set the streak to the longest length it reached inside the restore window (reference
    §4.3). If that length was reached in the current period, the period stays counted;
    otherwise the streak continues from the previous period and the user extends it by acting
    in the current one. False when there is nothing longer to restore."""
    now = now or timezone.now()
    row, view = _locked_state(tenant, user, now)
    frequency = view.config.frequency
    window = domain.period_start(domain.restore_window_start(view.current, frequency), frequency)
    best = (
        StreakPeriod.objects.filter(user=user, frequency=frequency, period_start__gte=window)
        .order_by("-length", "-period_start")
        .values_list("length", "period_start")
        .first()
    )
    if best is None or best[0] <= view.settlement.state.length:
        _save(row, user)  # keeps what settling wrote
        return False
    length, reached_in = best
    through = (
        view.current
        if reached_in >= view.current
        else domain.previous_period(view.current, frequency)
    )
    row.frequency = frequency
    row.length = length
    row.settled_through = through
    row.started = domain.shift_periods(through, frequency, -(length - 1))
    row.extended_at = now
    _save(row, user)
    return True


def streak_reset(tenant: Tenant, user: EndUser, now: dt.datetime | None = None) -> None:
    """Set the current streak to 0; the current period's history records the reset."""
    now = now or timezone.now()
    row, view = _locked_state(tenant, user, now)
    frequency = view.config.frequency
    row.length, row.started, row.settled_through, row.extended_at = 0, None, None, None
    _save(row, user)
    _period_upsert(tenant, user, frequency, view.current, length=0, extended=False, reset_at=now)


def streak_preferences_update(
    tenant: Tenant, user: EndUser, data: dict[str, Any], now: dt.datetime | None = None
) -> None:
    """PATCH /users/{id}/preferences, streak part. `enabled` is always allowed; the rest only
    when the tenant enables customization."""
    now = now or timezone.now()
    config = streak_config(tenant)
    personal = {"evaluationMode", "metrics", "daysOff"} & set(data)
    if personal and not config.customization_enabled:
        raise StreakCustomizationDisabledError()
    if "daysOff" in data and data["daysOff"] and config.frequency != domain.DAILY:
        raise StreakSettingsInvalidError("streak.daysOff: only allowed with daily streaks")
    if "metrics" in data:
        definitions = metric_definitions(tenant)
        unknown = sorted(m["key"] for m in data["metrics"] if m["key"] not in definitions)
        if unknown:
            raise StreakSettingsInvalidError(
                f"streak.metrics: unknown metric keys: {', '.join(unknown)}"
            )
    row, _ = _locked_state(tenant, user, now)
    if "enabled" in data:
        row.enabled = data["enabled"]
        if not row.enabled:
            # A disabled streak stays 0 (reference §3.2); it starts afresh if re-enabled.
            row.length, row.started, row.settled_through, row.extended_at = 0, None, None, None
    if "evaluationMode" in data:
        row.pref_mode = data["evaluationMode"]
    if "metrics" in data:
        row.pref_thresholds = {m["key"]: str(m["threshold"]) for m in data["metrics"]}
    if "daysOff" in data:
        row.pref_days_off = sorted(set(data["daysOff"]))
    _save(row, user)


def streak_preferences_of(config: StreakConfig, row: StreakState | None) -> dict[str, Any] | None:
    """The streak part of GET /users/{id}/preferences: present when customization is enabled
    or the user turned streaks off."""
    enabled = row.enabled if row is not None else True
    if not config.customization_enabled and enabled:
        return None
    prefs: dict[str, Any] = {"enabled": enabled}
    if row is not None and config.customization_enabled:
        if row.pref_mode:
            prefs["evaluationMode"] = row.pref_mode
        if row.pref_thresholds is not None:
            prefs["metrics"] = [
                {"key": k, "threshold": Decimal(v)} for k, v in row.pref_thresholds.items()
            ]
        if row.pref_days_off is not None:
            prefs["daysOff"] = row.pref_days_off
    return prefs


@dataclass(frozen=True)
class StreakJobOutcome:
    """What a periodic job did to one user's streak, for the later webhooks work:
    kind is "lost", "freeze_consumed" or "freeze_earned"."""

    user_id: int
    kind: str
    amount: int  # the length lost, or the freezes consumed or earned
    freezes: int  # freezes left afterwards


def streak_settle_locked(tenant: Tenant, user: EndUser, now: dt.datetime) -> list[StreakJobOutcome]:
    """Write the settlement that is due (consume freezes, lose the streak) for a user whose
    row lock the caller holds. Safe to repeat: a settled state settles to itself."""
    stored = streak_state_get(user)
    if stored is None:
        return []
    view = streak_view(tenant, user, stored, now)
    _persist_settlement(tenant, user, stored, view)
    _save(stored, user)
    settlement = view.settlement
    outcomes = []
    if settlement.frozen:
        outcomes.append(
            StreakJobOutcome(
                user.pk, "freeze_consumed", len(settlement.frozen), settlement.state.freezes
            )
        )
    if settlement.lost:
        outcomes.append(
            StreakJobOutcome(user.pk, "lost", settlement.lost, settlement.state.freezes)
        )
    return outcomes


def streak_freezes_earn_locked(
    tenant: Tenant, user: EndUser, now: dt.datetime
) -> list[StreakJobOutcome]:
    """Auto-earn the freezes due to a user (the caller holds the user's row lock)."""
    config = streak_config(tenant)
    interval, amount = config.freeze_auto_earn_interval, config.freeze_auto_earn_amount
    stored = streak_state_get(user)
    if stored is None or not config.freezes_enabled or not interval or not amount:
        return []
    today = local_date(now, user.tz)
    freezes, earned_on, earned = domain.freezes_auto_earn(
        stored.freezes,
        config.freeze_max_count,
        amount,
        interval,
        stored.freezes_earned_on or today,
        today,
    )
    if earned_on != stored.freezes_earned_on or earned:
        stored.freezes, stored.freezes_earned_on = freezes, earned_on
        stored.save(update_fields=["freezes", "freezes_earned_on", "updated"])
    return [StreakJobOutcome(user.pk, "freeze_earned", earned, freezes)] if earned else []
