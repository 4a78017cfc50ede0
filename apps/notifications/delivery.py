"""Delivery: hand due messages to workers, and send them.

A message row moves queued -> sending -> sent, or to retrying (a temporary failure, tried
again later with backoff), failed (permanent, or out of attempts) or skipped (no longer wanted
when its time came). Each transition is a conditional update, so two workers handed the same
message never both send it. No transaction is held open while talking to the mail server.
"""

import copy
import datetime as dt
import logging
import smtplib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from email.headerregistry import Address
from email.utils import parseaddr
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db.models import F, Q
from django.utils import timezone

from apps.accounts.domain import app_name
from apps.core.dispatch import due_rows_enqueue
from apps.core.wording import counted
from apps.notifications import domain
from apps.notifications.choices import Channel, MessageStatus, NotificationType
from apps.notifications.context import StreakStates, message_context, variables_used
from apps.notifications.errors import TemplateRenderError
from apps.notifications.models import EmailTemplate, Message
from apps.notifications.previews import links_hidden, template_preview
from apps.notifications.push.delivery import (
    PushBatch,
    payload_with_pending,
    push_message_render,
    push_message_send,
)
from apps.notifications.rendering import (
    RenderedEmail,
    RenderedPush,
    email_render,
    with_preferences_link,
)
from apps.notifications.selectors import notification_config, template_to_send
from apps.notifications.services import email_refusal_for
from apps.notifications.tokens import unsubscribe_url
from apps.users.models import EndUser

logger = logging.getLogger("gamify.notifications")

# One worker task sends at most this many messages over one SMTP connection.
SEND_CHUNK = 100
# A message handed to a worker is not handed over again before this (the queue may be long).
REENQUEUE_AFTER = dt.timedelta(minutes=10)
# A claim older than this lost its worker (SMTP timeouts are far shorter).
STUCK_AFTER = dt.timedelta(minutes=15)
# Achievement emails are transactional; reminders, recaps and reactivation are sent in bulk
# runs. Separate queues keep a tenant's recap run from delaying anyone's achievement email.
QUEUE = "notifications"
BULK_QUEUE = "notifications-bulk"

_PENDING = (MessageStatus.QUEUED, MessageStatus.RETRYING)


def queue_for(type: str) -> str:
    return QUEUE if type == NotificationType.ACHIEVEMENT_COMPLETED else BULK_QUEUE


def messages_due_claim(now: dt.datetime, limit: int = 5000) -> dict[str, list[list[int]]]:
    """Mark due messages as handed to workers and group them into per-tenant chunks by queue:
    {queue: [[ids], ...]}. The conditional update is the claim between racing dispatchers."""
    rows = due_rows_enqueue(
        Message,
        Q(status__in=_PENDING, send_at__lte=now),
        now,
        reenqueue_after=REENQUEUE_AFTER,
        order_by=("send_at", "id"),
        fields=("tenant_id", "type"),
        limit=limit,
    )
    groups: dict[tuple[str, int], list[int]] = {}
    for pk, tenant_id, type in rows:
        groups.setdefault((queue_for(type), tenant_id), []).append(pk)
    chunks: dict[str, list[list[int]]] = {}
    for (queue, _), ids in groups.items():
        for start in range(0, len(ids), SEND_CHUNK):
            chunks.setdefault(queue, []).append(ids[start : start + SEND_CHUNK])
    return chunks


def messages_stuck_release(now: dt.datetime) -> int:
    """Messages whose worker died mid-send go back to retrying (the attempt counts)."""
    return Message.objects.filter(
        status=MessageStatus.SENDING, claimed_at__lt=now - STUCK_AFTER
    ).update(status=MessageStatus.RETRYING, send_at=now, enqueued_at=None, claim=None)


def _claim(ids: Sequence[int], now: dt.datetime) -> list[Message]:
    """Claim those of `ids` that are still due, in one conditional update, and load them. A
    message claimed by another worker (or no longer due) is not among them."""
    token = uuid.uuid4()
    Message.objects.filter(pk__in=list(ids), status__in=_PENDING, send_at__lte=now).update(
        status=MessageStatus.SENDING, claimed_at=now, claim=token, attempts=F("attempts") + 1
    )
    return list(
        Message.objects.filter(claim=token, status=MessageStatus.SENDING)
        .select_related("user", "tenant", "template", "push_template")
        .order_by("send_at", "pk")
    )


@dataclass(frozen=True)
class Outcome:
    status: str
    error: str = ""
    retry_at: dt.datetime | None = None
    payload: dict[str, Any] | None = None  # replaces the message's payload when set


def _display(value: str) -> str:
    """A header display name: control characters (CR/LF) cannot break out of the header."""
    return " ".join("".join(c if c.isprintable() else " " for c in value).split())


def _addresses(message: Message) -> tuple[str, str]:
    """The sender is the tenant's app (its emails' own name for it) at DEFAULT_FROM_EMAIL's
    address; DEFAULT_FROM_EMAIL's display name only stands in for a tenant without a name."""
    from_name, from_addr = parseaddr(settings.DEFAULT_FROM_EMAIL)
    tenant = message.tenant
    sender_name = app_name(tenant.branding or {}, tenant.name) or from_name
    sender = Address(display_name=_display(sender_name), addr_spec=from_addr)
    recipient = Address(display_name=_display(message.user.name or ""), addr_spec=message.recipient)
    return str(sender), str(recipient)


def email_build(message: Message, rendered: RenderedEmail) -> EmailMultiAlternatives:
    """The email: text and HTML parts, and RFC 8058 one-click unsubscribe headers."""
    sender, recipient = _addresses(message)
    email = EmailMultiAlternatives(
        subject=rendered.subject,
        body=rendered.text,
        from_email=sender,
        to=[recipient],
        headers={
            "List-Unsubscribe": f"<{unsubscribe_url(message.user, message.type)}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            "X-Gamify-Message-ID": str(message.public_id),
        },
    )
    email.attach_alternative(rendered.html, "text/html")
    return email


def _template(message: Message) -> EmailTemplate | None:
    """The message's template if it is still active and still matches the user; else the best
    one that does now (the tenant may have changed its templates since it was scheduled)."""
    config = notification_config(message.tenant)
    chosen = config.email_template_for(message.type, message.user.attributes)
    return template_to_send(message.template, chosen, EmailTemplate)


def message_render(
    message: Message,
    now: dt.datetime,
    states: StreakStates | None = None,
    *,
    keep_links: bool = True,
) -> tuple[RenderedEmail | None, str]:
    """Render the message for sending: (email, "") or (None, why it must not be sent). Without
    `keep_links` (a preview for staff) the user's preference links are replaced."""
    refusal = email_refusal_for(message.user, message.type)
    if refusal is not None:
        return None, refusal
    template = _template(message)
    if template is None:
        return None, "no active template matches the user"
    message.template = template
    used = variables_used(template.subject, template.html, template.text)
    context = message_context(
        message.tenant, message.user, message.type, message.payload, now, used, states
    )
    if (
        message.type == NotificationType.ACHIEVEMENT_COMPLETED
        and context.get("achievement") is None
    ):
        return None, "the achievement no longer exists"
    if not keep_links:
        links_hidden(context)
    rendered = email_render(
        subject=template.subject,
        html=template.html,
        text=template.text or None,
        context=context,
        seed=str(message.public_id),
    )
    if not keep_links:
        return rendered, ""
    return with_preferences_link(rendered, context["preferencesUrl"]), ""


@dataclass(frozen=True)
class MessagePreview:
    """A message as it would be sent now, for the delivery log: the email or the push, or why
    it would not be sent."""

    email: RenderedEmail | None = None
    push: RenderedPush | None = None
    refusal: str = ""


def message_preview(message: Message, now: dt.datetime) -> MessagePreview:
    """Render the message now from its payload, with the template delivery would pick, the
    user's preference links replaced; nothing is written (the row is not changed)."""
    probe = copy.copy(message)  # the renders note the template they picked on the message
    try:
        if message.channel == Channel.PUSH:
            push, refusal = push_message_render(probe, now, keep_links=False)
            return MessagePreview(push=push, refusal=refusal)
        email, refusal = message_render(probe, now, keep_links=False)
    except TemplateRenderError as exc:
        return MessagePreview(refusal=f"the template fails: {exc.message}")
    return MessagePreview(email=email, refusal=refusal)


def _classify(exc: Exception, attempts: int, now: dt.datetime) -> Outcome:
    """Temporary failures (4xx SMTP replies, dropped connections, timeouts, a provider's 429 or
    5xx) are retried with backoff; permanent ones (5xx replies, refused addresses) are not."""
    temporary = False
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        temporary = all(400 <= code < 500 for code, _ in exc.recipients.values())
    elif isinstance(exc, smtplib.SMTPAuthenticationError | smtplib.SMTPConnectError):
        temporary = True  # the server's configuration, not the message: try again later
    elif isinstance(exc, smtplib.SMTPResponseException):
        temporary = 400 <= exc.smtp_code < 500
    elif isinstance(exc, smtplib.SMTPServerDisconnected | OSError):
        temporary = True  # includes ConnectionError and TimeoutError
    else:
        status = getattr(exc, "status_code", None)  # API backends (django-anymail)
        temporary = isinstance(status, int) and (status == 429 or status >= 500)
    error = f"{type(exc).__name__}: {exc}"[:2000]
    if temporary:
        retry = domain.retry_at(attempts, now)
        if retry is not None:
            return Outcome(MessageStatus.RETRYING, error, retry)
        error = f"gave up after {counted(attempts, 'attempt')}; last error: {error}"
    return Outcome(MessageStatus.FAILED, error)


def _finish(message: Message, outcome: Outcome, now: dt.datetime) -> None:
    fields: dict[str, object] = {
        "status": outcome.status,
        "error": outcome.error,
        "claimed_at": None,
        "claim": None,
    }
    if outcome.status == MessageStatus.SENT:
        fields["sent_at"] = now
    if outcome.retry_at is not None:
        fields.update(send_at=outcome.retry_at, enqueued_at=None)
    if message.template_id is not None:
        fields["template_id"] = message.template_id
    if message.push_template_id is not None:
        fields["push_template_id"] = message.push_template_id
    if outcome.payload is not None:
        fields["payload"] = outcome.payload
    if message.subject:
        fields["subject"] = message.subject
    Message.objects.filter(pk=message.pk, status=MessageStatus.SENDING, claim=message.claim).update(
        **fields
    )


def messages_send(ids: Sequence[int], now: dt.datetime | None = None) -> dict[str, int]:
    """Send these messages over one connection; returns counts per resulting status. Each
    message's outcome is recorded as soon as it is known: a worker that dies mid-chunk leaves
    at most one message whose fate is unknown (sent again by the recovery job)."""
    counts: dict[str, int] = {}
    claimed = _claim(ids, now or timezone.now())
    if not claimed:
        return counts
    connection = get_connection()
    states = StreakStates([m.user for m in claimed])
    pushes = PushBatch(now or timezone.now())
    try:
        for message in claimed:
            now_each = now or timezone.now()
            if message.channel == Channel.PUSH:
                outcome = _push_one(message, now_each, states, pushes)
            else:
                outcome = _send_one(message, connection, now_each, states)
                if outcome.status == MessageStatus.RETRYING:
                    connection.close()  # a failed connection is not reused; the next reopens
            _finish(message, outcome, now_each)
            counts[outcome.status] = counts.get(outcome.status, 0) + 1
    finally:
        connection.close()
        pushes.finish()
    return counts


def _push_one(
    message: Message, now: dt.datetime, states: StreakStates, batch: PushBatch
) -> Outcome:
    result = push_message_send(message, now, states, batch)
    return Outcome(
        result.status, result.error, result.retry_at, payload_with_pending(message, result)
    )


def _send_one(
    message: Message, connection: object, now: dt.datetime, states: StreakStates
) -> Outcome:
    try:
        rendered, refusal = message_render(message, now, states)
    except TemplateRenderError as exc:
        return Outcome(MessageStatus.FAILED, f"template: {exc.message}")
    if rendered is None:
        return Outcome(MessageStatus.SKIPPED, refusal)
    message.subject = rendered.subject[:1000]
    try:
        email = email_build(message, rendered)
    except (ValueError, IndexError) as exc:  # an address the email package refuses
        return Outcome(MessageStatus.FAILED, f"invalid address: {exc}")
    try:
        # Opened here rather than by send(), which would close it again after one message.
        connection.open()  # type: ignore[attr-defined]
        email.connection = connection  # type: ignore[assignment]
        email.send()
    except Exception as exc:
        logger.warning("message=%s send failed: %s", message.public_id, exc)
        return _classify(exc, message.attempts, now)
    return Outcome(MessageStatus.SENT)


def email_test_send(
    template: EmailTemplate, user: EndUser | None, to: str, *, base_url: str | None = None
) -> RenderedEmail:
    """Render `template` for `user` (or with sample data in the tenant's brand, images under
    `base_url`, default PUBLIC_URL) and send it to `to` (any address staff give), now, outside
    the delivery log: the dashboard's "send a test to". The user's preference links are
    replaced and no unsubscribe header is set: a click in a staff inbox must not change the
    end-user's preferences. Raises TemplateRenderError, or the backend's error."""
    rendered = template_preview(template, user, base_url=base_url)
    probe = Message(tenant=template.tenant, user=EndUser(), type=template.type, recipient=to)
    email = email_build(probe, rendered)
    email.subject = f"[Test] {rendered.subject}"
    for header in ("List-Unsubscribe", "List-Unsubscribe-Post"):
        email.extra_headers.pop(header)
    email.send()
    return rendered
