"""Writes of notifications: preferences, and the messages that become due (templates:
configuration.py).

The pipeline hands `notifications_record` the facts of an event inside the event's
transaction; what is due is recorded there as message rows, and delivery is enqueued after
commit. Nothing here touches the network.
"""

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements.facts import AchievementCompleted
from apps.core.errors import ValidationError
from apps.core.facts import Fact, NotificationDue, UserActive
from apps.core.outbox import outbox_enqueue
from apps.notifications import domain
from apps.notifications.choices import Channel, MessageStatus, NotificationType
from apps.notifications.errors import MessageNotFoundError, MessageNotWaitingError
from apps.notifications.models import Message
from apps.notifications.selectors import NotificationConfig, notification_config
from apps.users.models import EndUser
from apps.users.services import user_activity_mark

# --- preferences ---------------------------------------------------------------------------


def notification_preferences_update(user: EndUser, preferences: Mapping[str, list[str]]) -> None:
    """Merge per notification type: types not given keep their channels; [] disables one. The
    API, the manage-preferences page and one-click unsubscribe all write through here."""
    merged = {
        **user.notification_preferences,
        **{kind: list(dict.fromkeys(channels)) for kind, channels in preferences.items()},
    }
    if merged != user.notification_preferences:
        user.notification_preferences = merged
        user.save(update_fields=["notification_preferences", "updated"])


def notification_unsubscribe(user: EndUser, type: str, channel: str = Channel.EMAIL) -> None:
    """Turn one channel of one type off, keeping the type's other channels."""
    current = user.notification_preferences.get(type, list(domain.CHANNELS_ALL))
    notification_preferences_update(user, {type: [c for c in current if c != channel]})


# --- templates -----------------------------------------------------------------------------


# --- what becomes due ----------------------------------------------------------------------


def recipient_of(user: EndUser) -> domain.Recipient:
    return domain.Recipient(
        email=user.email,
        subscribed=user.subscribe_to_emails,
        control=user.control,
        preferences=user.notification_preferences,
        device_tokens=tuple(user.device_tokens or ()),
    )


def email_refusal_for(user: EndUser, type: str) -> str | None:
    return domain.email_refusal(recipient_of(user), type)


def push_refusal_for(user: EndUser, type: str) -> str | None:
    return domain.push_refusal(recipient_of(user), type)


def messages_due(
    config: NotificationConfig,
    user: EndUser,
    type: str,
    dedupe_key: str,
    send_at: dt.datetime,
    payload: dict[str, Any],
) -> list[Message]:
    """The messages (unsaved) for something due to this user: an email and a push
    notification, each when its channel is on for the type, the user may receive it, and a
    template matches them. The key is the same for both: one of each per thing."""
    due: list[Message] = []
    common = {
        "tenant_id": user.tenant_id,
        "user": user,
        "type": type,
        "dedupe_key": dedupe_key,
        "payload": payload,
        "send_at": send_at,
    }
    if config.email_enabled(type) and email_refusal_for(user, type) is None:
        template = config.email_template_for(type, user.attributes)
        if template is not None:
            due.append(
                Message(
                    **common,
                    channel=Channel.EMAIL,
                    template_id=template.pk,
                    recipient=user.email or "",
                )
            )
    if config.push_enabled(type) and push_refusal_for(user, type) is None:
        push_template = config.push_template_for(type, user.attributes)
        if push_template is not None:
            due.append(Message(**common, channel=Channel.PUSH, push_template_id=push_template.pk))
    return due


def messages_save(messages: Sequence[Message], now: dt.datetime) -> int:
    """Insert the messages; one already recorded for the same thing is left alone (the unique
    key decides, also between racing job runs). Delivery of what is due now is enqueued after
    commit. Returns how many were given."""
    if not messages:
        return 0
    Message.objects.bulk_create(messages, ignore_conflicts=True)
    if any(m.send_at <= now for m in messages):
        from apps.notifications.tasks import messages_dispatch_task

        outbox_enqueue(messages_dispatch_task)
    return len(messages)


def due_fact(
    user: EndUser,
    type: str,
    key: str,
    payload: dict[str, Any],
    due_at: dt.datetime,
    cause: Fact | None = None,
) -> NotificationDue | None:
    """What the emails.*_due webhooks are told: due whether or not a template will send it,
    but never for the control group or a user who turned this type's emails off."""
    if user.control or not domain.channel_allowed(user.notification_preferences, type, "email"):
        return None
    return NotificationDue(user.pk, type, key, payload, due_at, cause)


def notifications_record(
    tenant: Tenant, user: EndUser, facts: Iterable[Fact], now: dt.datetime | None = None
) -> list[NotificationDue]:
    """React to what an event (or the completion API) did, inside its transaction; returns
    the notifications that became due (for webhooks). Costs no query unless something is due
    or the user's first activity of the day is recorded."""
    now = now or timezone.now()
    config = notification_config(tenant)
    messages: list[Message] = []
    due: list[NotificationDue] = []
    for fact in facts:
        if isinstance(fact, UserActive):
            user_activity_mark(user, fact.at, fact.at.astimezone(domain.send_zone(user.tz)).date())
        elif isinstance(fact, AchievementCompleted) and not fact.backdated:
            type = NotificationType.ACHIEVEMENT_COMPLETED
            key = domain.achievement_key(fact.completion_id)
            send_at = domain.achievement_send_at(fact.completed_at, user.tz)
            payload = {"achievementId": fact.achievement_pk, "completionId": fact.completion_id}
            if (fact_due := due_fact(user, type, key, payload, send_at, fact)) is not None:
                due.append(fact_due)
            if config.enabled(type):
                messages += messages_due(config, user, type, key, send_at, payload)
    messages_save(messages, now)
    return due


# --- what staff do to one message (the delivery log) ----------------------------------------

# The statuses of a message that still waits to be sent: the dispatcher hands these out.
WAITING = (MessageStatus.QUEUED, MessageStatus.RETRYING)
MAX_CANCEL_REASON = 500


def _waiting_update(tenant: Tenant, message: Message, **changes: Any) -> None:
    """Change a message that still waits, in one conditional update: a worker claiming it at
    the same moment either claimed it first (then this refuses, naming its new status) or
    finds it changed (its claim takes waiting messages only, delivery._claim)."""
    theirs = Message.objects.filter(pk=message.pk, tenant=tenant)
    if not theirs.filter(status__in=WAITING).update(**changes):
        current = theirs.values_list("status", flat=True).first()
        if current is None:  # another tenant's message is not found, like a missing one
            raise MessageNotFoundError()
        raise MessageNotWaitingError(current)
    message.refresh_from_db()


def message_cancel(
    tenant: Tenant, message: Message, *, reason: str, now: dt.datetime | None = None
) -> None:
    """Skip a waiting message for good; `reason` is kept as its error, which the delivery log
    shows (as it shows why delivery skipped one)."""
    reason = reason.strip()
    if not reason:
        raise ValidationError("{reason}: say why it is cancelled", fields="reason", code="blank")
    if len(reason) > MAX_CANCEL_REASON:
        raise ValidationError(
            f"{{reason}}: at most {MAX_CANCEL_REASON} characters", fields="reason", code="too_long"
        )
    _waiting_update(
        tenant,
        message,
        status=MessageStatus.SKIPPED,
        error=reason,
        enqueued_at=None,
        updated=now or timezone.now(),
    )


def message_send_now(tenant: Tenant, message: Message, *, now: dt.datetime | None = None) -> None:
    """Make a waiting message due now and have the dispatcher hand it to a worker after
    commit, whatever its send window or retry time said."""
    now = now or timezone.now()
    _waiting_update(tenant, message, send_at=now, enqueued_at=None, updated=now)
    from apps.notifications.tasks import messages_dispatch_task

    outbox_enqueue(messages_dispatch_task)
