"""The scheduled notification types, found by periodic sweeps that read only the users due.

- streak reminders: live streaks about to be missed, by the indexed `StreakState.due_at`;
- reactivation and recaps: per send slot (the instant the zones of one UTC offset reach 17:00,
  or Monday/the 1st at 09:00), the users of those zones selected by their last-active date
  (indexed), each slot swept once (`SlotRun`).

Every sweep records messages with their unique dedupe key, so a second, late or concurrent run
records nothing new; delivery is enqueued after commit.
"""

import datetime as dt
import functools
from collections.abc import Callable, Iterator
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet

from apps.accounts.models import Tenant
from apps.metrics.models import MetricDailyChange
from apps.notifications import domain
from apps.notifications.choices import NotificationType
from apps.notifications.models import Message, SlotRun
from apps.notifications.selectors import (
    NotificationConfig,
    notification_config,
    tenants_with_type,
)
from apps.notifications.services import messages_due, messages_save
from apps.streaks import domain as streak_domain
from apps.streaks.models import StreakState
from apps.streaks.selectors import pauses_for, streak_config, streak_view, streaks_configured
from apps.users.domain import zone as streak_zone
from apps.users.models import EndUser

BATCH = 1000


def _reachable(users: QuerySet[EndUser]) -> QuerySet[EndUser]:
    """Users an email or a push notification could reach at all (preferences and templates
    are checked per user)."""
    by_email = Q(subscribe_to_emails=True, email__isnull=False) & ~Q(email="")
    by_push = Q(device_tokens__isnull=False) & ~Q(device_tokens=[])
    return users.filter(by_email | by_push, control=False)


def _batches(rows: QuerySet[Any]) -> Iterator[list[Any]]:
    last_pk = 0
    while True:
        batch = list(rows.filter(pk__gt=last_pk).order_by("pk")[:BATCH])
        if not batch:
            return
        last_pk = batch[-1].pk
        yield batch


# --- streak reminders ----------------------------------------------------------------------


def streak_reminders_schedule(now: dt.datetime) -> int:
    return sum(
        _streak_reminders(tenant, now)
        for tenant in tenants_with_type(NotificationType.STREAK_REMINDER)
    )


def _streak_reminders(tenant: Tenant, now: dt.datetime) -> int:
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
        user__in=_reachable(EndUser.objects.filter(tenant=tenant)),
    ).select_related("user")
    recorded = 0
    for batch in _batches(states):
        pauses = pauses_for([s.user for s in batch])
        due = [
            message
            for state in batch
            for message in _streak_reminder(tenant, notifications, state, pauses, now)
        ]
        with transaction.atomic():
            recorded += messages_save(due, now)
    return recorded


def _streak_reminder(
    tenant: Tenant,
    notifications: NotificationConfig,
    state: StreakState,
    pauses: dict[int, list[streak_domain.Pause]],
    now: dt.datetime,
) -> list[Message]:
    user = state.user
    view = streak_view(tenant, user, state, now, pauses=pauses.get(user.pk, []))
    current, frequency = view.current, view.config.frequency
    if view.length == 0 or view.settlement.state.settled_through == current:
        return []  # no streak left, or already extended in this period
    if view.rules.is_day_off(current) or streak_domain.is_paused(current, frequency, view.pauses):
        return []  # protected: nothing to remind of
    zone = streak_zone(user.tz)
    remind_at = domain.streak_reminder_at(current, frequency, zone)
    ends_at = dt.datetime.combine(
        streak_domain.next_period(current, frequency), dt.time(), tzinfo=zone
    )
    if not remind_at <= now < ends_at:
        return []
    return messages_due(
        notifications,
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
    message_for: Callable[[Tenant, NotificationConfig, EndUser, dt.date], list[Message]],
    lateness: dt.timedelta | None = None,
) -> int:
    """Sweep every slot that has come (within `lateness`) and was not swept yet. `slot_of`
    takes the tenant's aggregation period, the only tenant setting a slot depends on."""
    recorded = 0
    slots: dict[str, dict[dt.datetime, tuple[dt.date, list[str]]]] = {}
    for tenant in tenants_with_type(type):
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
            users = _reachable(_in_zones(users_for(tenant, day, zones), zones))
            for batch in _batches(users):
                due = [m for user in batch for m in message_for(tenant, config, user, day)]
                with transaction.atomic():
                    recorded += messages_save(due, now)
            SlotRun.objects.bulk_create(
                [SlotRun(tenant=tenant, type=type, slot_at=slot_at, done_at=now)],
                ignore_conflicts=True,
            )
    return recorded


def reactivations_schedule(now: dt.datetime) -> int:
    """After 3, 5, 7, 14 and 30 days without an event, at 17:00 local: messages 1 to 5."""

    def users_for(tenant: Tenant, day: dt.date, zones: list[str]) -> QuerySet[EndUser]:
        return EndUser.objects.filter(
            tenant=tenant, last_active_on__in=list(domain.reactivation_targets(day))
        )

    def message_for(
        tenant: Tenant, config: NotificationConfig, user: EndUser, day: dt.date
    ) -> list[Message]:
        assert user.last_active_on is not None  # noqa: S101 - selected by it
        number, days = domain.reactivation_targets(day)[user.last_active_on]
        return messages_due(
            config,
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
        message_for,
    )


def recaps_schedule(now: dt.datetime) -> int:
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

    def message_for(
        tenant: Tenant, config: NotificationConfig, user: EndUser, day: dt.date
    ) -> list[Message]:
        period = tenant.aggregation_period
        start, end, _ = domain.recap_periods(day, period)
        return messages_due(
            config,
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
        message_for,
        lateness=domain.RECAP_LATENESS,
    )
