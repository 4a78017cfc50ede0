"""How the services write a user's streak state: the row created when missing, the
settlement of missed periods written (with the loss it found, if any), the due instant
recomputed on save, a period's outcome recorded in one upsert, and the row lock taken before an
admin operation."""

import datetime as dt
from typing import Any

from apps.accounts.models import Tenant
from apps.streaks import domain
from apps.streaks.models import StreakLoss, StreakPeriod, StreakState
from apps.streaks.selectors import StreakConfig, StreakView, streak_state_get, streak_view
from apps.users.domain import local_date, zone
from apps.users.models import EndUser
from apps.users.services import user_lock_pk


def _state_row(
    tenant: Tenant, user: EndUser, row: StreakState | None, config: StreakConfig, now: dt.datetime
) -> StreakState:
    if row is not None:
        return row
    start = config.freeze_start_count if config.freezes_enabled else 0
    return StreakState(
        tenant_id=tenant.pk,
        user_id=user.pk,
        frequency=config.frequency,
        freezes=start,
        freezes_earned_on=local_date(now, user.tz),
        tz=user.tz,
    )


def _period_row(
    tenant: Tenant, user: EndUser, frequency: str, period: dt.date, **outcome: Any
) -> StreakPeriod:
    """The row of the period that starts on `period` (its end follows from the frequency),
    with the outcome's fields (the model's defaults for the others)."""
    return StreakPeriod(
        tenant_id=tenant.pk,
        user_id=user.pk,
        frequency=frequency,
        period_start=period,
        period_end=domain.period_end(period, frequency),
        **outcome,
    )


def _persist_settlement(tenant: Tenant, user: EndUser, row: StreakState, view: StreakView) -> None:
    """Write the periods that settling accounted for (freezes consumed, pauses used) and the
    loss it found."""
    StreakPeriod.objects.bulk_create(_settle(tenant, user, row, view), ignore_conflicts=True)
    loss = _loss_row(tenant, user, view)
    if loss is not None:
        _loss_write(loss)


def _loss_row(tenant: Tenant, user: EndUser, view: StreakView) -> StreakLoss | None:
    """The loss the settlement found (None: the streak survived or was already 0): its length,
    and when the first period that nothing kept ended, in the user's zone."""
    settlement = view.settlement
    missed = settlement.state.settled_through  # a lost settlement stops at the missed period
    if not settlement.lost or missed is None:
        return None
    frequency = view.config.frequency
    return StreakLoss(
        tenant_id=tenant.pk,
        user_id=user.pk,
        frequency=frequency,
        length=settlement.lost,
        missed_period=missed,
        lost_at=domain.period_over_at(missed, frequency, zone(user.tz)),
    )


def _loss_write(loss: StreakLoss) -> None:
    # Settled under the user's lock, so found once; the constraint keeps a replay harmless.
    StreakLoss.objects.bulk_create([loss], ignore_conflicts=True)


def _settle(
    tenant: Tenant, user: EndUser, row: StreakState, view: StreakView
) -> list[StreakPeriod]:
    """Set the settled state on `row`; the periods that settling accounted for (freezes
    consumed, pauses used), to insert where missing."""
    settlement = view.settlement
    frequency = view.config.frequency
    length = view.state.length
    rows = [
        _period_row(
            tenant,
            user,
            frequency,
            period,
            length=length,
            used_freeze=period in settlement.frozen,
            used_pause=period in settlement.paused,
        )
        for period in sorted({*settlement.frozen, *settlement.paused})
    ]
    new = settlement.state
    row.frequency = frequency
    row.tz = user.tz  # the state is now expressed in the user's current time zone
    row.length, row.started = new.length, new.started
    row.settled_through, row.freezes = new.settled_through, new.freezes
    return rows


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
    _period_write(
        _period_row(
            tenant, user, frequency, period, length=length, extended=extended, reset_at=reset_at
        )
    )


def _period_write(row: StreakPeriod) -> None:
    # A reset only marks the period: the length it reached stays recorded, for restore; a
    # restore of the period before it no longer stands.
    fields = ["reset_at", "restored_at"] if row.reset_at else ["length", "extended"]
    StreakPeriod.objects.bulk_create(
        [row],
        update_conflicts=True,
        unique_fields=["user", "frequency", "period_start"],
        update_fields=fields,
    )


def _due_at_set(row: StreakState, user: EndUser) -> None:
    """Recompute the state's due instant (None when there is no live streak)."""
    row.due_at = (
        domain.missed_at(row.settled_through, row.frequency, zone(user.tz))
        if row.length > 0 and row.settled_through is not None
        else None
    )


def _save(row: StreakState, user: EndUser) -> None:
    """Save the state with its due instant recomputed (None when there is no live streak)."""
    _due_at_set(row, user)
    row.save()


def _locked_state(
    tenant: Tenant, user: EndUser, now: dt.datetime
) -> tuple[StreakState, StreakView]:
    """The user's state row (created when missing) and current view, with its settlement
    written, under the user's row lock: admin operations start from a settled streak."""
    user_lock_pk(user.pk)
    stored = streak_state_get(user)
    view = streak_view(tenant, user, stored, now)
    row = _state_row(tenant, user, stored, view.config, now)
    _persist_settlement(tenant, user, row, view)
    return row, view
