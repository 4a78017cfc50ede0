"""The streak step of the event pipeline: settle what was missed, then extend the streak
when the event meets the conditions of the current period."""

import datetime as dt
from dataclasses import dataclass

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.streaks import domain
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
class StreakEventResult:
    """The streak step's outcome for one event."""

    view: StreakView  # the streak after the event
    extended: bool
    started: bool  # this event started a new streak
    lost: int  # length lost in the periods settled now (0 if none)
    freezes_consumed: int


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
