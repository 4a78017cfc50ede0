"""The writes of the periodic streak jobs (apps/streaks/jobs.py): settle what is due and
auto-earn freezes, for a user whose row lock the caller holds, reporting what changed."""

import datetime as dt
from dataclasses import dataclass

from apps.accounts.models import Tenant
from apps.streaks import domain
from apps.streaks.selectors import streak_config, streak_state_get, streak_view
from apps.streaks.services.state import _persist_settlement, _save
from apps.users.domain import local_date
from apps.users.models import EndUser


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
