"""Anniversary achievements: completed by a periodic job on the user's local anniversary date.

The job is registered by apps.pipeline.jobs, which hands the completions to the apps that react
to them (points, leaderboards, notifications, webhooks) through `react`, inside each user's
transaction, under the user's lock (user_job_lock: a user busy with an event is completed on the
next run)."""

import datetime as dt
from collections.abc import Callable

from apps.accounts.models import Tenant
from apps.achievements import domain
from apps.achievements.choices import Status, Trigger
from apps.achievements.models import Achievement
from apps.achievements.services import (
    Completed,
    anniversaries_complete,
)
from apps.users.models import EndUser
from apps.users.services import users_each_locked

BATCH = 500


React = Callable[[EndUser, list[Completed]], None]


def achievements_anniversaries(now: dt.datetime, react: React | None = None) -> list[Completed]:
    """Hourly, so each user's local date turns over within the hour. Only users who have not
    completed an anniversary achievement and signed up long enough ago are read: after the
    first run, just the ones newly due. Idempotent through the completion's unique constraint;
    a late run completes everyone it missed."""
    completed: list[Completed] = []
    # One day of slack for zones ahead of UTC; the exact local-date check is per user.
    horizon = now.date() + dt.timedelta(days=1)
    for achievement in Achievement.objects.filter(
        trigger=Trigger.ANNIVERSARY, status=Status.ACTIVE
    ).select_related("tenant"):
        latest = domain.anniversary_date(horizon, -(achievement.anniversary_years or 0))
        users = EndUser.objects.filter(tenant=achievement.tenant, sign_up_date__lte=latest).exclude(
            achievements__achievement=achievement
        )

        def complete(user: EndUser, tenant: Tenant = achievement.tenant) -> None:
            for locked, done in anniversaries_complete(tenant, [user], now):
                completed.extend(done)
                if react is not None and done:
                    react(locked, done)

        # A user busy with an event is completed on the next run.
        users_each_locked(users, complete, batch=BATCH)
    return completed
