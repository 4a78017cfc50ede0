"""The streak step of the event pipeline: settle what was missed, then extend the streak
when the event meets the conditions of the current period."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.core.db import CompiledSelect, Load
from apps.streaks import domain
from apps.streaks.choices import PauseStatus
from apps.streaks.models import StreakLoss, StreakPause, StreakPeriod, StreakState
from apps.streaks.selectors import (
    StreakView,
    period_changes,
    streak_config,
    streak_state_get,
    streak_view,
    streaks_configured,
)
from apps.streaks.services.state import (
    _due_at_set,
    _loss_row,
    _loss_write,
    _period_row,
    _period_write,
    _settle,
    _state_row,
)
from apps.users.models import EndUser


@dataclass(frozen=True)
class StreakLoaded:
    """The user's streak rows, read with the other steps' (streak_event_load)."""

    state: StreakState | None
    pauses: tuple[domain.Pause, ...]  # every active pause, by start
    # The net change of each metric in the current period, when the caller knows it (a user
    # created by this event has only this event's); else read when needed.
    changes: dict[int, Decimal] | None = None


_STATE = CompiledSelect(StreakState, "{m[user]} = %s")
_ACTIVE_PAUSES = CompiledSelect(StreakPause, "{m[user]} = %s AND {m[status]} = %s")


def streak_event_load(tenant: Tenant, user: EndUser) -> Load[StreakLoaded | None]:
    """What the streak step reads, for the pipeline to read with the other steps' rows;
    nothing when streaks are not configured."""
    if not streaks_configured(streak_config(tenant)):
        return Load((), _nothing)
    reads = ((_STATE, (user.pk,)), (_ACTIVE_PAUSES, (user.pk, PauseStatus.ACTIVE.value)))
    return Load(reads, _loaded)


_STATES_OF = CompiledSelect(StreakState, "{m[user]} = ANY(%s)")
_ACTIVE_PAUSES_OF = CompiledSelect(StreakPause, "{m[user]} = ANY(%s) AND {m[status]} = %s")


def streaks_load_many(user_pks: list[int]) -> dict[int, StreakLoaded]:
    """streak_event_load for many users at once (PostgreSQL), two statements: each user's
    state and active pauses (users without either get an empty StreakLoaded)."""
    states: dict[int, list[Any]] = {pk: [] for pk in user_pks}
    pauses: dict[int, list[Any]] = {pk: [] for pk in user_pks}
    for state in _STATES_OF.many([user_pks]):
        states[state.user_id].append(state)
    for pause in _ACTIVE_PAUSES_OF.many([user_pks, PauseStatus.ACTIVE.value]):
        pauses[pause.user_id].append(pause)
    return {pk: _loaded([states[pk], pauses[pk]]) for pk in user_pks}


def _nothing(_rows: list[list[Any]]) -> None:
    return None


def _loaded(rows: list[list[Any]]) -> StreakLoaded:
    states, pauses = rows
    found: list[StreakPause] = sorted(pauses, key=lambda p: (p.start, p.pk))
    return StreakLoaded(
        state=states[0] if states else None,
        pauses=tuple(domain.Pause(str(p.public_id), p.start, p.end) for p in found),
    )


@dataclass(frozen=True)
class StreakEventResult:
    """The streak step's outcome for one event."""

    view: StreakView  # the streak after the event
    extended: bool
    started: bool  # this event started a new streak
    lost: int  # length lost in the periods settled now (0 if none)
    freezes_consumed: int


def streak_apply_event(
    tenant: Tenant,
    user: EndUser,
    metric_pk: int,
    now: dt.datetime | None = None,
    loaded: StreakLoaded | None = None,
) -> StreakEventResult:
    """The streak step of the pipeline. The caller holds the user's lock; `loaded` are the
    user's rows when the caller read them (streak_event_load), else they are read here."""
    now = now or timezone.now()
    result, writes = streak_event_compute(tenant, user, metric_pk, now, loaded)
    if writes is not None:
        StreakPeriod.objects.bulk_create(list(writes.settled), ignore_conflicts=True)
        if writes.extended is not None:
            _period_write(writes.extended)
        if writes.lost is not None:
            _loss_write(writes.lost)
        writes.state.save()
    return result


@dataclass(frozen=True)
class StreakWrites:
    """What one event changes in the streak's rows, computed before anything is written:
    `streak_apply_event` writes it at once, a batch (apps/pipeline/bulk.py) with its other
    events'."""

    state: StreakState  # the state row to save (created when missing), its due_at set
    settled: tuple[StreakPeriod, ...]  # periods kept by freezes or pauses (inserted if new)
    extended: StreakPeriod | None  # the period the event extended (length and extended upserted)
    lost: StreakLoss | None = None  # the loss the settlement found (inserted if new)


def streak_event_compute(
    tenant: Tenant,
    user: EndUser,
    metric_pk: int,
    now: dt.datetime,
    loaded: StreakLoaded | None = None,
) -> tuple[StreakEventResult, StreakWrites | None]:
    """The streak step without its writes: its outcome, and the rows it changes (None: none).
    Reads only what `loaded` lacks (the state, the pauses, the period's changes)."""
    config = streak_config(tenant)
    if not streaks_configured(config):
        return StreakEventResult(streak_view(tenant, user, None, now), False, False, 0, 0), None
    stored = loaded.state if loaded is not None else streak_state_get(user)
    known_pauses = loaded.pauses if loaded is not None else None
    view = streak_view(tenant, user, stored, now, pauses=known_pauses)
    rules, current = view.rules, view.current
    settled = view.settlement.state
    relevant = rules.enabled and metric_pk in rules.thresholds
    extended = False
    new_state = settled
    if relevant and (settled.length == 0 or settled.settled_through != current):
        if loaded is not None and loaded.changes is not None:
            changes = {pk: v for pk, v in loaded.changes.items() if pk in rules.thresholds}
        else:
            changes = period_changes(
                user, list(rules.thresholds), current, domain.period_end(current, rules.frequency)
            )
        if domain.conditions_met(rules, changes):
            new_state, extended = domain.extend(settled, current, rules.frequency)
    changed = extended or view.settlement.frozen or view.settlement.paused or view.settlement.lost
    if not changed:
        return StreakEventResult(view, False, False, 0, 0), None
    row = _state_row(tenant, user, stored, view.config, now)
    settled_periods = _settle(tenant, user, row, view)
    started = False
    period = None
    if extended:
        started = new_state.length == 1
        row.length, row.started = new_state.length, new_state.started
        row.settled_through = new_state.settled_through
        row.extended_at, row.tz = now, user.tz
        period = _period_row(
            tenant, user, rules.frequency, current, length=new_state.length, extended=True
        )
    _due_at_set(row, user)
    # A streak that was alive already loaded the pauses that matter from here on.
    if known_pauses is None and view.state.length:
        known_pauses = view.pauses
    after = streak_view(tenant, user, row, now, pauses=known_pauses) if extended else view
    result = StreakEventResult(
        after, extended, started, view.settlement.lost, len(view.settlement.frozen)
    )
    loss = _loss_row(tenant, user, view)
    return result, StreakWrites(row, tuple(settled_periods), period, loss)
