"""Periodic notification jobs (registered with apps.core.periodic: beat, cron or `serve`).
Each is idempotent: schedules are deduplicated by unique keys, and delivery claims rows with
conditional updates. The scheduling sweeps (reminders, reactivation, recaps) are registered
by apps.pipeline.jobs, which also tells webhooks what became due."""

import datetime as dt

from django.conf import settings

from apps.core.periodic import periodic_job
from apps.notifications.delivery import messages_stuck_release
from apps.notifications.leagues import league_at_risk_schedule
from apps.notifications.models import ExpoTicket, Message, SlotRun
from apps.notifications.push.receipts import expo_receipts_check
from apps.notifications.quests import quest_reminder_schedule
from apps.notifications.tasks import messages_dispatch_task

# Slots are hours apart; a run every five minutes sends within five minutes of 17:00 local.
SWEEP_EVERY = dt.timedelta(minutes=5)


@periodic_job("notifications-dispatch", every=dt.timedelta(minutes=1))
def notifications_dispatch(now: dt.datetime) -> int:
    """Messages whose send time came (17:00 local, a retry) go to the workers."""
    return messages_dispatch_task()


@periodic_job("notifications-league-at-risk", every=dt.timedelta(minutes=10))
def notifications_league_at_risk(now: dt.datetime) -> int:
    """Members in a demotion zone are warned at 17:00 local on a week's last day (within ten
    minutes). Registered here: no other app hears of it (it has no webhook)."""
    return league_at_risk_schedule(now)


@periodic_job("notifications-quest-reminder", every=dt.timedelta(minutes=10))
def notifications_quest_reminder(now: dt.datetime) -> int:
    """Users with unfinished daily quests are reminded in their evening (19:00 to 23:00
    local, within ten minutes). Registered here: no other app hears of it (it has no
    webhook)."""
    return quest_reminder_schedule(now)


@periodic_job("notifications-recover", every=dt.timedelta(minutes=5))
def notifications_recover(now: dt.datetime) -> int:
    """A message left in "sending" by a worker that died is tried again."""
    return messages_stuck_release(now)


@periodic_job("notifications-purge", every=dt.timedelta(hours=6))
def notifications_purge(now: dt.datetime) -> int:
    """The delivery log is kept NOTIFICATIONS_RETENTION_DAYS; swept slots a week."""
    cutoff = now - dt.timedelta(days=settings.NOTIFICATIONS_RETENTION_DAYS)
    deleted, _ = Message.objects.filter(created__lt=cutoff).delete()
    SlotRun.objects.filter(done_at__lt=now - dt.timedelta(days=7)).delete()
    ExpoTicket.objects.filter(created__lt=now - dt.timedelta(days=2)).delete()
    return deleted


@periodic_job("notifications-expo-receipts", every=dt.timedelta(minutes=5))
def notifications_expo_receipts(now: dt.datetime) -> int:
    """Expo tickets 15 minutes old or more get their receipts (dead tokens are pruned)."""
    return expo_receipts_check(now)
