"""What the admin API and the dashboard do to one user's streak: grant a freeze, pause,
restore or reset it, each from a settled streak under the user's row lock."""

import datetime as dt
from collections.abc import Iterable

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.streaks import domain
from apps.streaks.choices import PauseStatus
from apps.streaks.errors import StreakPauseInvalidError, StreakSettingsInvalidError
from apps.streaks.followers import streak_length_set
from apps.streaks.models import StreakLoss, StreakPause, StreakPeriod
from apps.streaks.selectors import (
    StreakView,
    last_activity,
    period_changes,
    streak_config,
    streak_state_get,
    streaks_configured,
)
from apps.streaks.services.state import _locked_state, _period_row, _period_upsert, _save
from apps.users.domain import local_date
from apps.users.models import EndUser


def streak_freezes_check(tenant: Tenant) -> None:
    """Freezes are granted only while the tenant's streaks have them (POST
    /streaks/freezes refuses the whole request; the dashboard refuses each user)."""
    if not streak_config(tenant).freezes_enabled:
        raise StreakSettingsInvalidError("Streak freezes are not enabled for this tenant")


def streak_freeze_grant(tenant: Tenant, user: EndUser, now: dt.datetime | None = None) -> bool:
    """Grant one freeze; False (nothing granted) when it would exceed the maximum."""
    now = now or timezone.now()
    streak_freezes_check(tenant)
    row, view = _locked_state(tenant, user, now)
    if row.freezes + 1 > view.config.freeze_max_count:
        _save(row, user)
        return False
    row.freezes += 1
    _save(row, user)
    return True


def streak_pause_create(
    tenant: Tenant,
    user: EndUser,
    *,
    start: dt.date,
    end: dt.date,
    now: dt.datetime | None = None,
) -> StreakPause:
    """A pause of the user's streak from `start` to `end`, inclusive, in the user's calendar."""
    now = now or timezone.now()
    problem = domain.pause_problem(start, end)
    if problem is not None:
        raise problem
    if start < local_date(now, user.tz):
        raise StreakPauseInvalidError(
            "{start} must not be before today in the user's time zone",
            fields="start",
            code="out_of_range",
        )
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
        # Settling may have found the streak lost: the boards show what the streak is now.
        streak_length_set(tenant, user, view.settlement.state.length, now)
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
    _restored_periods_write(tenant, user, view, length, reached_in, through, now)
    # The losses this length makes good stop showing as open on the support list.
    StreakLoss.objects.filter(
        user=user, frequency=frequency, restored_at__isnull=True, length__lte=length
    ).update(restored_at=now)
    streak_length_set(tenant, user, length, now)
    return True


def _restored_periods_write(
    tenant: Tenant,
    user: EndUser,
    view: StreakView,
    length: int,
    reached_in: dt.date,
    through: dt.date,
    now: dt.datetime,
) -> None:
    """Make the history say what the restore did, so that the calendar and the API's history
    agree with the streak (issue 27 item 4): the periods after the one that reached `length`,
    through the last one the restore settled, were missed or reset and are now carried at
    `length`; a reset of the period that reached it no longer stands; and a row of the current
    period that the restore did not settle (reset, or extended by a streak that restarted) is
    pending again at `length`. At most a restore window of rows (90 days, a year of weeks, two
    years of months)."""
    frequency = view.config.frequency
    gap = []
    period = domain.next_period(reached_in, frequency)
    while period <= through:
        gap.append(_period_row(tenant, user, frequency, period, length=length, restored_at=now))
        period = domain.next_period(period, frequency)
    StreakPeriod.objects.bulk_create(
        gap,
        update_conflicts=True,
        unique_fields=["user", "frequency", "period_start"],
        update_fields=["length", "restored_at"],
    )
    periods = StreakPeriod.objects.filter(user=user, frequency=frequency)
    periods.filter(period_start=reached_in, reset_at__isnull=False).update(restored_at=now)
    if through < view.current:
        periods.filter(period_start=view.current).update(
            length=length, extended=False, restored_at=now
        )


def streak_reset(tenant: Tenant, user: EndUser, now: dt.datetime | None = None) -> None:
    """Set the current streak to 0; the current period's history records the reset."""
    now = now or timezone.now()
    row, view = _locked_state(tenant, user, now)
    frequency = view.config.frequency
    row.length, row.started, row.settled_through, row.extended_at = 0, None, None, None
    _save(row, user)
    _period_upsert(tenant, user, frequency, view.current, length=0, extended=False, reset_at=now)
    streak_length_set(tenant, user, 0, now)


def streak_recount(
    tenant: Tenant,
    user: EndUser,
    days: Iterable[dt.date],
    metric_pks: Iterable[int],
    now: dt.datetime | None = None,
) -> tuple[int, int] | None:
    """Undoing events (apps/pipeline/undo.py), after their values left the daily rollups: the
    current streak as if those events never came. `days` are the undone events' local dates,
    `metric_pks` their metrics. A counted period of the current streak that holds one of those
    days and whose remaining changes no longer meet the user's conditions stops counting (its
    history row says not extended, length 0): the streak restarts with the first counted
    period after the latest such one; when that one was the last counted, the streak is
    settled through the period before it, and the next settlement judges the gap as any missed
    period (a pause, a day off, a freeze, or the loss). Periods of earlier streaks, freezes
    consumed and streak points and achievements are left as they are. Returns (length before,
    length after) when the streak changed, having told the followers (streak boards)."""
    now = now or timezone.now()
    if not streaks_configured(streak_config(tenant)):
        return None
    stored = streak_state_get(user)
    if stored is None or stored.length == 0:
        return None
    row, view = _locked_state(tenant, user, now)
    rules, frequency = view.rules, view.config.frequency
    started, through = row.started, row.settled_through
    if (
        row.length == 0
        or started is None
        or through is None
        or not set(metric_pks) & set(rules.thresholds)
    ):
        _save(row, user)
        return None
    touched = {domain.period_start(day, frequency) for day in days}
    periods = StreakPeriod.objects.filter(
        user=user, frequency=frequency, period_start__gte=started, period_start__lte=through
    )
    counted = set(periods.filter(extended=True).values_list("period_start", flat=True))
    gone = sorted(
        p
        for p in touched & counted
        if not domain.conditions_met(
            rules,
            period_changes(user, list(rules.thresholds), p, domain.period_end(p, frequency)),
        )
    )
    if not gone:
        _save(row, user)
        return None
    before = row.length
    periods.filter(period_start__in=gone).update(extended=False, length=0)
    last = gone[-1]
    if last < through:
        start = domain.next_period(last, frequency)
    else:
        through = domain.previous_period(last, frequency)
        earlier = [p for p in gone if p < last]
        start = domain.next_period(earlier[-1], frequency) if earlier else started
    kept = sorted(p for p in counted if start <= p <= through and p not in gone)
    if not kept:
        row.length, row.started, row.settled_through, row.extended_at = 0, None, None, None
    else:
        if last >= kept[-1]:  # the last counted period changed: its latest remaining event
            row.extended_at = last_activity(
                user, list(rules.thresholds), kept[-1], domain.period_end(kept[-1], frequency)
            )
        row.length, row.started, row.settled_through = len(kept), kept[0], through
        # The history's lengths from the new start: a count of the periods counted so far.
        rows = list(periods.filter(period_start__gte=kept[0], period_start__lte=through))
        for period in rows:
            period.length = sum(1 for p in kept if p <= period.period_start)
        StreakPeriod.objects.bulk_update(rows, ["length"])
    _save(row, user)
    streak_length_set(tenant, user, row.length, now)
    return before, row.length
