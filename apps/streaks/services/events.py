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
from apps.streaks.models import StreakPause, StreakState
from apps.streaks.selectors import (
    StreakView,
    period_changes,
    streak_config,
    streak_state_get,
    streak_view,
    streaks_configured,
)
from apps.streaks.services.state import _period_upsert, _persist_settlement, _save, _state_row
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
    config = streak_config(tenant)
    if not streaks_configured(config):
        return StreakEventResult(streak_view(tenant, user, None, now), False, False, 0, 0)
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
    if known_pauses is None and view.state.length:
        known_pauses = view.pauses
    after = streak_view(tenant, user, row, now, pauses=known_pauses) if extended else view
    return StreakEventResult(
        after, extended, started, view.settlement.lost, len(view.settlement.frozen)
    )
