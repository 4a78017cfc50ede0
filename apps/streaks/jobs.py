"""Periodic streak jobs: settle streaks at the users' local midnight (consume freezes, lose
streaks) and auto-earn freezes. Both are idempotent: settling a settled streak and earning
freezes already earned change nothing. Reads and events never wait for them. The record of
lost streaks is purged here too.

The jobs are registered by apps.pipeline.jobs, which hands what they did to the apps that
react (webhooks) through `react`, inside each user's transaction."""

import datetime as dt
import logging
from collections.abc import Callable

from django.db.models import F, Q

from apps.core.periodic import periodic_job
from apps.streaks.models import StreakLoss, StreakSettings, StreakState
from apps.streaks.services import (
    StreakJobOutcome,
    streak_freezes_earn_locked,
    streak_settle_locked,
)
from apps.users.models import EndUser
from apps.users.services import user_job_lock

logger = logging.getLogger("gamify.jobs")

BATCH = 500
MAX_PER_RUN = 20_000


React = Callable[[EndUser, list[StreakJobOutcome]], None]


def _for_each_locked(
    user_pks: list[int],
    now: dt.datetime,
    act: Callable[..., list[StreakJobOutcome]],
    react: React | None = None,
) -> list[StreakJobOutcome]:
    outcomes: list[StreakJobOutcome] = []
    for user_pk in user_pks:
        # A user busy with an event is skipped: that event settles the streak itself.
        with user_job_lock(user_pk) as user:
            if user is not None:
                done = act(user.tenant, user, now)
                if react is not None and done:
                    react(user, done)
                outcomes.extend(done)
    return outcomes


def streaks_settle_due(now: dt.datetime, react: React | None = None) -> list[StreakJobOutcome]:
    outcomes: list[StreakJobOutcome] = []
    done = 0
    while done < MAX_PER_RUN:
        user_pks = list(
            StreakState.objects.filter(length__gt=0, due_at__lte=now)
            .order_by("due_at")
            .values_list("user_id", flat=True)[:BATCH]
        )
        if not user_pks:
            break
        outcomes.extend(_for_each_locked(user_pks, now, streak_settle_locked, react))
        done += len(user_pks)
        if len(user_pks) < BATCH:
            break
    if outcomes:
        logger.info("streaks-settle users=%d outcomes=%d", done, len(outcomes))
    return outcomes


def streaks_freezes_earn(now: dt.datetime, react: React | None = None) -> list[StreakJobOutcome]:
    outcomes: list[StreakJobOutcome] = []
    tenants = StreakSettings.objects.filter(
        freezes_enabled=True,
        freeze_auto_earn_interval__isnull=False,
        freeze_auto_earn_amount__isnull=False,
    ).values_list("tenant_id", "freeze_auto_earn_interval")
    for tenant_pk, interval in tenants:
        # A day of slack for time zones ahead of UTC; the service decides in local dates.
        horizon = now.date() - dt.timedelta(days=(interval or 1) - 1)
        candidates = StreakState.objects.filter(
            Q(freezes_earned_on__lte=horizon) | Q(freezes_earned_on__isnull=True),
            tenant_id=tenant_pk,
            freezes__lt=F("tenant__streak_settings__freeze_max_count"),
        )
        user_pks = list(candidates.values_list("user_id", flat=True)[:MAX_PER_RUN])
        outcomes.extend(_for_each_locked(user_pks, now, streak_freezes_earn_locked, react))
    return outcomes


# Lost streaks are kept as long as the longest restore window of a daily streak (the support
# list shows a week of them): the table stays small whatever the number of users.
LOSS_RETENTION = dt.timedelta(days=90)


@periodic_job("streaks-losses-purge", every=dt.timedelta(hours=6))
def streak_losses_purge(now: dt.datetime) -> int:
    deleted, _ = StreakLoss.objects.filter(lost_at__lt=now - LOSS_RETENTION).delete()
    return deleted
