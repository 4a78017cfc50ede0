"""Time-triggered points: every `timeInterval` hours or days since the user's first activity
(their creation). Only users who are due are read: new users of the tenant (no mark yet) and
marks whose next interval has completed.

The job is registered by apps.pipeline.jobs, which hands what it paid to the apps that react to
points (leaderboards, notifications, webhooks) through `react`, inside each user's
transaction."""

import datetime as dt
from collections.abc import Callable

from django.db.models import Q

from apps.points.choices import TriggerStatus, TriggerType
from apps.points.ledger import SystemChange
from apps.points.models import PointsTrigger, PointsTriggerMark
from apps.points.selectors import points_config
from apps.points.services import time_trigger_pay
from apps.users.models import EndUser
from apps.users.services import users_each_locked

BATCH = 500


React = Callable[[EndUser, list[SystemChange]], None]


def points_time_triggers(now: dt.datetime, react: React | None = None) -> int:
    """Pays every due user; returns how many were paid."""
    paid = 0
    triggers = PointsTrigger.objects.filter(
        type=TriggerType.TIME, status=TriggerStatus.ACTIVE, system__status="active"
    ).select_related("system")
    for trigger in triggers:
        tenant_id = trigger.system.tenant_id
        due_marks = PointsTriggerMark.objects.filter(trigger=trigger, due_at__lte=now)
        users = EndUser.objects.filter(tenant_id=tenant_id).filter(
            Q(pk__in=due_marks.values("user_id"))
            | ~Q(pk__in=PointsTriggerMark.objects.filter(trigger=trigger).values("user_id"))
        )

        def pay(user: EndUser, trigger: PointsTrigger = trigger) -> None:
            nonlocal paid
            system = points_config(user.tenant).get(trigger.system.key)
            definition = (
                next((t for t in system.triggers if t.pk == trigger.pk), None) if system else None
            )
            if system is None or definition is None:
                return
            changes = time_trigger_pay(user.tenant, user, system, definition, now)
            if changes:
                paid += 1
                if react is not None:
                    react(user, changes)

        # A user busy with an event is paid on the next run.
        users_each_locked(users, pay, batch=BATCH)
    return paid
