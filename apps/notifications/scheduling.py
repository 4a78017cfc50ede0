"""The scheduled notification types, found by periodic sweeps that read only the users due.

- streak reminders: live streaks about to be missed, by the indexed `StreakState.due_at`;
- reactivation and recaps: per send slot (the instant the zones of one UTC offset reach 17:00,
  or Monday/the 1st at 09:00), the users of those zones selected by their last-active date
  (indexed), each slot swept once (`SlotRun`).

Every sweep records messages with their unique dedupe key, so a second, late or concurrent run
records nothing new; delivery is enqueued after commit. With `hooks` (the pipeline's), what
became due is also told to those who listen for it (Trophy's emails.*_due webhooks), whether
or not a template will send it, inside the same transaction.
"""

import datetime as dt
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet

from apps.accounts.models import Tenant
from apps.core.facts import NotificationDue
from apps.metrics.models import MetricDailyChange
from apps.notifications import domain
from apps.notifications.choices import NotificationType
from apps.notifications.models import SlotRun
from apps.notifications.selectors import (
    NotificationConfig,
    notification_config,
    tenants_with_type,
)
from apps.notifications.services import due_fact, messages_due, messages_save
from apps.streaks import domain as streak_domain
from apps.streaks.models import StreakState
from apps.streaks.selectors import pauses_for, streak_config, streak_view, streaks_configured
from apps.users.domain import zone as streak_zone
from apps.users.models import EndUser

BATCH = 1000


@dataclass(frozen=True)
class Hooks:
    """Who else hears of due notifications of one type: the tenants with a listener, and how
    to tell them (called inside the batch's transaction)."""

    tenants: frozenset[int] = frozenset()
    react: Callable[[EndUser, NotificationDue], None] = lambda user, fact: None


HookFactory = Callable[[str], Hooks]


def _no_hooks(type: str) -> Hooks:
    return Hooks()


@dataclass(frozen=True)
class Due:
    """Something due to one user: what a message and a due fact are made of."""

    user: EndUser
    type: str
    key: str
    send_at: dt.datetime
    payload: dict[str, Any] = field(default_factory=dict)


def _reachable(users: QuerySet[EndUser], everyone: bool = False) -> QuerySet[EndUser]:
    """Users an email or a push notification could reach at all (preferences and templates
    are checked per user); with `everyone` (a listener wants every due notification) all
    users outside the control group."""
    if everyone:
        return users.filter(control=False)
    by_email = Q(subscribe_to_emails=True, email__isnull=False) & ~Q(email="")
    by_push = Q(device_tokens__isnull=False) & ~Q(device_tokens=[])
    return users.filter(by_email | by_push, control=False)


def _tenants(type: str, hooks: Hooks) -> list[Tenant]:
    swept = list(tenants_with_type(type))
    known = {t.pk for t in swept}
    extra = [pk for pk in hooks.tenants if pk not in known]
    if extra:
        swept += list(Tenant.objects.filter(pk__in=extra, status="active"))
    return sorted(swept, key=lambda t: t.pk)


def _record(
    tenant: Tenant, config: NotificationConfig, dues: list[Due], hooks: Hooks, now: dt.datetime
) -> int:
    """Messages for the channels that send this type, and due facts for the listeners, in
    one transaction."""
    messages = [
        m
        for d in dues
        if config.enabled(d.type)
        for m in messages_due(config, d.user, d.type, d.key, d.send_at, d.payload)
    ]
    with transaction.atomic():
        recorded = messages_save(messages, now)
        if tenant.pk in hooks.tenants:
            for d in dues:
                fact = due_fact(d.user, d.type, d.key, d.payload, d.send_at)
                if fact is not None:
                    hooks.react(d.user, fact)
    return recorded


def _batches(rows: QuerySet[Any]) -> Iterator[list[Any]]:
    last_pk = 0
    while True:
        batch = list(rows.filter(pk__gt=last_pk).order_by("pk")[:BATCH])
        if not batch:
            return
        last_pk = batch[-1].pk
        yield batch


# --- streak reminders ----------------------------------------------------------------------


def streak_reminders_schedule(now: dt.datetime, hooks_for: HookFactory = _no_hooks) -> int:
    hooks = hooks_for(NotificationType.STREAK_REMINDER)
    return sum(
        _streak_reminders(tenant, now, hooks)
        for tenant in _tenants(NotificationType.STREAK_REMINDER, hooks)
    )


def _streak_reminders(tenant: Tenant, now: dt.datetime, hooks: Hooks) -> int:
    config = streak_config(tenant)
    if not streaks_configured(config):
        return 0
    notifications = notification_config(tenant)
    frequency = config.frequency
    # A streak due within the lead time has its last chance in the current period.
    states = StreakState.objects.filter(
        tenant=tenant,
        frequency=frequency,
        length__gt=0,
        enabled=True,
        due_at__gt=now,
        due_at__lte=now + domain.REMINDER_LEAD[frequency],
        user__in=_reachable(
            EndUser.objects.filter(tenant=tenant), everyone=tenant.pk in hooks.tenants
        ),
    ).select_related("user")
    recorded = 0
    for batch in _batches(states):
        pauses = pauses_for([s.user for s in batch])
        dues = [d for state in batch if (d := _streak_reminder(tenant, state, pauses, now))]
        recorded += _record(tenant, notifications, dues, hooks, now)
    return recorded


def _streak_reminder(
    tenant: Tenant,
    state: StreakState,
    pauses: dict[int, list[streak_domain.Pause]],
    now: dt.datetime,
) -> Due | None:
    user = state.user
    view = streak_view(tenant, user, state, now, pauses=pauses.get(user.pk, []))
    current, frequency = view.current, view.config.frequency
    if view.length == 0 or view.settlement.state.settled_through == current:
        return None  # no streak left, or already extended in this period
    if view.rules.is_day_off(current) or streak_domain.is_paused(current, frequency, view.pauses):
        return None  # protected: nothing to remind of
    zone = streak_zone(user.tz)
    remind_at = domain.streak_reminder_at(current, frequency, zone)
    ends_at = dt.datetime.combine(
        streak_domain.next_period(current, frequency), dt.time(), tzinfo=zone
    )
    if not remind_at <= now < ends_at:
        return None
    return Due(
        user,
        NotificationType.STREAK_REMINDER,
        domain.streak_reminder_key(frequency, current),
        remind_at,
        {"periodStart": current.isoformat(), "frequency": frequency},
    )


# --- reactivation and recaps: per send slot ------------------------------------------------


def _in_zones(users: QuerySet[EndUser], zones: list[str]) -> QuerySet[EndUser]:
    in_zones = Q(tz__in=zones)
    if domain.DEFAULT_ZONE in zones:
        in_zones |= Q(tz__isnull=True) | Q(tz="")
    return users.filter(in_zones)


def _slot_in(
    slot_of: Callable[[dt.datetime, dt.tzinfo, str], domain.Slot],
    period: str,
    now: dt.datetime,
    zone: dt.tzinfo,
) -> domain.Slot:
    return slot_of(now, zone, period)


def _sweep_slots(
    type: str,
    now: dt.datetime,
    slot_of: Callable[[dt.datetime, dt.tzinfo, str], domain.Slot],
    users_for: Callable[[Tenant, dt.date, list[str]], QuerySet[EndUser]],
    due_for: Callable[[Tenant, EndUser, dt.date], Due],
    hooks: Hooks,
    lateness: dt.timedelta | None = None,
) -> int:
    """Sweep every slot that has come (within `lateness`) and was not swept yet. `slot_of`
    takes the tenant's aggregation period, the only tenant setting a slot depends on."""
    recorded = 0
    slots: dict[str, dict[dt.datetime, tuple[dt.date, list[str]]]] = {}
    for tenant in _tenants(type, hooks):
        period = tenant.aggregation_period
        if period not in slots:
            groups = domain.slots_by_instant(now, functools.partial(_slot_in, slot_of, period))
            if lateness is not None:
                groups = {at: g for at, g in groups.items() if now - at < lateness}
            slots[period] = groups
        groups = slots[period]
        done = set(
            SlotRun.objects.filter(tenant=tenant, type=type, slot_at__in=list(groups)).values_list(
                "slot_at", flat=True
            )
        )
        config = notification_config(tenant)
        for slot_at, (day, zones) in sorted(groups.items()):
            if slot_at in done:
                continue
            everyone = tenant.pk in hooks.tenants
            users = _reachable(_in_zones(users_for(tenant, day, zones), zones), everyone)
            for batch in _batches(users):
                dues = [due_for(tenant, user, day) for user in batch]
                recorded += _record(tenant, config, dues, hooks, now)
            SlotRun.objects.bulk_create(
                [SlotRun(tenant=tenant, type=type, slot_at=slot_at, done_at=now)],
                ignore_conflicts=True,
            )
    return recorded


def reactivations_schedule(now: dt.datetime, hooks_for: HookFactory = _no_hooks) -> int:
    """After 3, 5, 7, 14 and 30 days without an event, at 17:00 local: messages 1 to 5."""

    def users_for(tenant: Tenant, day: dt.date, zones: list[str]) -> QuerySet[EndUser]:
        return EndUser.objects.filter(
            tenant=tenant, last_active_on__in=list(domain.reactivation_targets(day))
        )

    def due_for(tenant: Tenant, user: EndUser, day: dt.date) -> Due:
        assert user.last_active_on is not None  # noqa: S101 - selected by it
        number, days = domain.reactivation_targets(day)[user.last_active_on]
        return Due(
            user,
            NotificationType.REACTIVATION,
            domain.reactivation_key(user.last_active_on, number),
            now,
            {"messageNumber": number, "daysSinceLastActive": days},
        )

    return _sweep_slots(
        NotificationType.REACTIVATION,
        now,
        lambda n, z, _period: domain.latest_daily_slot(n, z, domain.REACTIVATION_TIME),
        users_for,
        due_for,
        hooks_for(NotificationType.REACTIVATION),
    )


def recaps_schedule(now: dt.datetime, hooks_for: HookFactory = _no_hooks) -> int:
    """The tenant's aggregation period (weekly: Monday 09:00 for the week before; monthly: the
    1st at 09:00 for the month before), to users active in that period or the one before."""

    def users_for(tenant: Tenant, day: dt.date, zones: list[str]) -> QuerySet[EndUser]:
        _, end, before = domain.recap_periods(day, tenant.aggregation_period)
        active = MetricDailyChange.objects.filter(
            user=OuterRef("pk"), date__gte=before, date__lte=end
        )
        return EndUser.objects.filter(tenant=tenant, last_active_on__gte=before).filter(
            Exists(active)
        )

    def due_for(tenant: Tenant, user: EndUser, day: dt.date) -> Due:
        period = tenant.aggregation_period
        start, end, _ = domain.recap_periods(day, period)
        return Due(
            user,
            NotificationType.RECAP,
            domain.recap_key(period, start),
            now,
            {"periodStart": start.isoformat(), "periodEnd": end.isoformat(), "period": period},
        )

    return _sweep_slots(
        NotificationType.RECAP,
        now,
        domain.latest_recap_slot,
        users_for,
        due_for,
        hooks_for(NotificationType.RECAP),
        lateness=domain.RECAP_LATENESS,
    )
