"""The quest notification type (README, "Quests"): quest_reminder, in the user's local evening
when today's quests are unfinished and the user was active in the last 3 days (a sweep). Who
may receive it, and on which channel, is decided as for every type (`messages_due`:
templates, the control group, preferences, unsubscribes); the messages' dedupe keys make it
once per user and local day."""

import datetime as dt
from typing import Any

from django.db import transaction

from apps.accounts.models import Tenant
from apps.core.wording import listed
from apps.notifications import domain
from apps.notifications.choices import NotificationType
from apps.notifications.models import Message
from apps.notifications.selectors import notification_config, tenants_with_type
from apps.notifications.services import messages_due, messages_save
from apps.quests.choices import Cadence
from apps.quests.models import QuestProgress
from apps.quests.selectors import QuestsConfig, quests_config, user_quests_at
from apps.users.models import EndUser

USERS_PER_READ = 500


def quest_reminder_schedule(now: dt.datetime) -> int:
    """quest_reminder to each user of the tenants with an active template of the type whose
    local evening it is (domain.quest_reminder_due), who was active in the last 3 days and
    has daily quests not completed today."""
    recorded = 0
    for tenant in tenants_with_type(NotificationType.QUEST_REMINDER):
        config = quests_config(tenant)
        if any(q.cadence == Cadence.DAILY for q in config.active):
            recorded += _tenant_remind(tenant, config, now)
    return recorded


def _tenant_remind(tenant: Tenant, config: QuestsConfig, now: dt.datetime) -> int:
    notify = notification_config(tenant)
    # Every zone's today is within a day of UTC's: the 3 days are checked per user below.
    since = now.date() - dt.timedelta(days=domain.QUEST_REMINDER_ACTIVE_DAYS + 1)
    users = EndUser.objects.filter(tenant=tenant, last_active_on__gte=since).order_by("pk")
    recorded, last_pk = 0, 0
    while True:
        chunk = list(users.filter(pk__gt=last_pk)[:USERS_PER_READ])
        if not chunk:
            return recorded
        last_pk = chunk[-1].pk
        evening = [u for u in chunk if domain.quest_reminder_due(now, u.tz, u.last_active_on)]
        done = set(
            QuestProgress.objects.filter(
                user__in=evening, period_end__gt=now, completed_at__isnull=False
            ).values_list("user_id", "quest_id")
        )
        messages: list[Message] = []
        for user in evening:
            payload = _today(tenant, config, user, done, now)
            if payload is not None:
                key = f"{NotificationType.QUEST_REMINDER}:{payload['quests']['date']}"
                messages += messages_due(
                    notify, user, NotificationType.QUEST_REMINDER, key, now, payload
                )
        with transaction.atomic():
            recorded += messages_save(messages, now)


def _today(
    tenant: Tenant,
    config: QuestsConfig,
    user: EndUser,
    done: set[tuple[int, int]],
    now: dt.datetime,
) -> dict[str, Any] | None:
    """The reminder's payload: the user's daily quests today and which are unfinished; None
    when every one is completed (or the user has none)."""
    daily = [
        a
        for a in user_quests_at(
            tenant,
            config,
            user_id=user.external_id,
            tz_name=user.tz,
            attributes=user.attributes or {},
            now=now,
        )
        if a.quest.cadence == Cadence.DAILY
    ]
    items = [
        {"key": a.quest.key, "name": a.quest.name, "completed": (user.pk, a.quest.pk) in done}
        for a in daily
    ]
    unfinished = [a.quest.name for a in daily if (user.pk, a.quest.pk) not in done]
    if not unfinished:
        return None
    return {
        "quests": {
            "date": daily[0].period.first.isoformat(),
            "total": len(items),
            "unfinished": len(unfinished),
            "names": listed(unfinished),
            "items": items,
        }
    }
