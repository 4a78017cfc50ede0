"""Sending push messages: one message per user and thing, sent to each of the user's device
tokens through the channel that takes it, every attempt logged per token.

A chunk of messages shares one `PushBatch`: provider clients (and their cached credentials)
per channel, and the dead tokens found, which are pruned when the chunk ends. Pruning is
guarded: when most of a channel's answers in a chunk say "bad token for this app" (what a
wrong `sandbox` flag or bundle id does to every iOS token), the channel is flagged for staff
and nothing is pruned for that reason, instead of wiping every user's tokens.
"""

import datetime as dt
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from apps.accounts.models import Tenant
from apps.core.errors import ApplicationError
from apps.core.wording import counted
from apps.notifications import domain
from apps.notifications.choices import MessageStatus, NotificationType, PushKind
from apps.notifications.context import StreakStates, message_context, variables_used
from apps.notifications.errors import TemplateRenderError
from apps.notifications.models import ExpoTicket, Message, PushAttempt, PushChannel, PushTemplate
from apps.notifications.previews import links_hidden
from apps.notifications.push.providers.base import (
    PushNotification,
    PushProvider,
    TokenResult,
    token_hash,
)
from apps.notifications.push.providers.factory import provider_for
from apps.notifications.push.ratelimit import limit_for, rate_limit_take
from apps.notifications.push.routing import route
from apps.notifications.push.secrets import secrets_decrypt
from apps.notifications.push.services import push_channel_flag
from apps.notifications.rendering import RenderedPush, push_render
from apps.notifications.selectors import (
    notification_config,
    push_channels_active,
    template_to_send,
)
from apps.notifications.services import push_refusal_for
from apps.users.services import device_tokens_prune

logger = logging.getLogger("gamify.notifications.push")

# Reasons that mean "this token is not for this app" rather than "this app was uninstalled":
# all of a channel's tokens get them when the channel itself is misconfigured.
MISCONFIGURATION = frozenset({"BadDeviceToken", "DeviceTokenNotForTopic", "SENDER_ID_MISMATCH"})
GUARD_MIN_ANSWERS = 5
GUARD_SHARE = 0.5


class _Unusable:
    """Stands in for a channel whose credentials cannot be read or used."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind, self.reason = kind, f"channel unusable: {reason}"

    def send(self, notification: PushNotification, tokens: list[str]) -> list[TokenResult]:
        return [TokenResult(token, ok=False, reason=self.reason) for token in tokens]

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class PushOutcome:
    status: str
    error: str = ""
    retry_at: dt.datetime | None = None
    pending_tokens: tuple[str, ...] = ()


@dataclass
class _ChannelTally:
    answers: int = 0
    misconfigured: int = 0
    dead: list[tuple[int, str, str]] = field(default_factory=list)  # (user pk, token, reason)


class PushBatch:
    """What the push messages of one chunk share; `finish()` once the chunk is sent."""

    def __init__(self, now: dt.datetime) -> None:
        self.now = now
        self._channels: dict[int, list[PushChannel]] = {}
        self._providers: dict[int, PushProvider] = {}
        self._tally: dict[int, _ChannelTally] = {}

    def channels(self, tenant: Tenant) -> list[PushChannel]:
        if tenant.pk not in self._channels:
            self._channels[tenant.pk] = push_channels_active(tenant)
        return self._channels[tenant.pk]

    def provider(self, channel: PushChannel) -> PushProvider:
        if channel.pk not in self._providers:
            try:
                secrets = secrets_decrypt(channel.credentials)
                provider = provider_for(channel.kind, channel.settings, secrets)
            except (ValueError, ApplicationError) as exc:
                # A channel that cannot be used fails its own tokens, not the whole chunk.
                reason = exc.message if isinstance(exc, ApplicationError) else str(exc)
                provider = _Unusable(channel.kind, reason)
            self._providers[channel.pk] = provider
        return self._providers[channel.pk]

    def record(self, channel: PushChannel, user_pk: int, results: list[TokenResult]) -> None:
        tally = self._tally.setdefault(channel.pk, _ChannelTally())
        for result in results:
            tally.answers += result.status_code is not None or result.ok
            tally.misconfigured += result.reason in MISCONFIGURATION
            if result.dead:
                tally.dead.append((user_pk, result.token, result.reason))

    def finish(self) -> None:
        """Prune the dead tokens of the chunk, unless a channel looks misconfigured."""
        try:
            for channel_pk, tally in self._tally.items():
                channel = next(
                    c for cs in self._channels.values() for c in cs if c.pk == channel_pk
                )
                self._prune(channel, tally)
        finally:
            for provider in self._providers.values():
                provider.close()

    def _prune(self, channel: PushChannel, tally: _ChannelTally) -> None:
        suspicious = (
            tally.answers >= GUARD_MIN_ANSWERS and tally.misconfigured > tally.answers * GUARD_SHARE
        )
        if suspicious:
            reason = (
                f"{tally.misconfigured} of {tally.answers} device tokens were refused as not "
                "belonging to this app: check the channel's settings (APNs sandbox flag, bundle "
                "id, FCM project). Tokens are not pruned for that reason until the flag is cleared."
            )
            push_channel_flag(channel, reason, self.now)
            logger.warning("push channel=%s flagged: %s", channel.public_id, reason)
        hold = suspicious or channel.flagged_at is not None
        by_user: dict[int, set[str]] = {}
        for user_pk, token, reason in tally.dead:
            if hold and reason in MISCONFIGURATION:
                continue
            by_user.setdefault(user_pk, set()).add(token)
        for user_pk, tokens in by_user.items():
            removed = device_tokens_prune(user_pk, tokens)
            if removed:
                logger.info("pruned %d dead device token(s) of user=%s", len(removed), user_pk)


def _template(message: Message) -> PushTemplate | None:
    config = notification_config(message.tenant)
    chosen = config.push_template_for(message.type, message.user.attributes)
    return template_to_send(message.push_template, chosen, PushTemplate)


def _tokens_of(message: Message) -> list[str]:
    """The user's tokens, or on a retry those still pending that the user still has."""
    current = list(message.user.device_tokens or [])
    pending = message.payload.get("pendingTokens")
    return [t for t in pending if t in current] if pending else current


def push_send(message: Message, notification: PushNotification, batch: PushBatch) -> PushOutcome:
    """Send a rendered push message to each of the user's tokens; log every attempt."""
    tokens = _tokens_of(message)
    channels = batch.channels(message.tenant)
    routed, unroutable = route(tokens, channels)
    results: list[tuple[PushChannel, TokenResult]] = []
    for index, channel_tokens in routed.items():
        channel = channels[index]
        rate_limit_take(str(channel.pk), len(channel_tokens), limit_for(channel.kind))
        answers = batch.provider(channel).send(notification, channel_tokens)
        batch.record(channel, message.user_id, answers)
        results += [(channel, answer) for answer in answers]
    _log(message, results, batch.now)
    return _outcome(message, results, unroutable, batch.now)


def _log(
    message: Message, results: list[tuple[PushChannel, TokenResult]], now: dt.datetime
) -> None:
    PushAttempt.objects.bulk_create(
        [
            PushAttempt(
                message=message,
                channel=channel,
                provider=channel.kind,
                token_hash=token_hash(r.token),
                ok=r.ok,
                status_code=r.status_code,
                reason=r.reason[:255],
            )
            for channel, r in results
        ]
    )
    tickets = [
        ExpoTicket(
            channel=channel,
            user_id=message.user_id,
            message=message,
            ticket_id=r.ticket_id,
            token=r.token,
            created=now,
        )
        for channel, r in results
        if r.ok and r.ticket_id and channel.kind == PushKind.EXPO
    ]
    ExpoTicket.objects.bulk_create(tickets)


def _outcome(
    message: Message,
    results: list[tuple[PushChannel, TokenResult]],
    unroutable: list[str],
    now: dt.datetime,
) -> PushOutcome:
    temporary = [r for _, r in results if r.temporary]
    delivered = sum(r.ok for _, r in results)
    failures = Counter(r.reason or f"HTTP {r.status_code}" for _, r in results if not r.ok)
    if unroutable:
        failures["no active channel takes the token"] += len(unroutable)
    summary = ", ".join(f"{reason} x{n}" for reason, n in failures.most_common())
    if temporary:
        retry = domain.retry_at(message.attempts, now)
        waits = [r.retry_after for r in temporary if r.retry_after]
        if retry is not None:
            if waits:
                retry = max(retry, now + dt.timedelta(seconds=max(waits)))
            pending = tuple(r.token for r in temporary)
            return PushOutcome(MessageStatus.RETRYING, summary, retry, pending)
        summary = f"gave up after {counted(message.attempts, 'attempt')}; {summary}"
    if delivered:
        return PushOutcome(MessageStatus.SENT, summary)
    if not results and not unroutable:
        return PushOutcome(MessageStatus.SKIPPED, "the user has no device tokens left")
    return PushOutcome(MessageStatus.FAILED, summary or "not delivered")


def push_message_render(
    message: Message,
    now: dt.datetime,
    states: StreakStates | None = None,
    *,
    keep_links: bool = True,
) -> tuple[RenderedPush | None, str]:
    """Render a push message: (push, "") or (None, why it must not be sent). Without
    `keep_links` (a preview for staff) the user's preference links are replaced. Raises
    TemplateRenderError."""
    refusal = push_refusal_for(message.user, message.type)
    if refusal is not None:
        return None, refusal
    template = _template(message)
    if template is None:
        return None, "no active push template matches the user"
    message.push_template = template
    used = variables_used(template.title, template.body, template.url, *template.data.values())
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
    rendered = push_render(
        title=template.title,
        body=template.body,
        url=template.url,
        data=template.data,
        context=context,
        seed=str(message.public_id),
    )
    return rendered, ""


def push_message_send(
    message: Message, now: dt.datetime, states: StreakStates, batch: PushBatch
) -> PushOutcome:
    """Check, render and send one push message (the push half of delivery.messages_send)."""
    try:
        rendered, refusal = push_message_render(message, now, states)
    except TemplateRenderError as exc:
        return PushOutcome(MessageStatus.FAILED, f"template: {exc.message}")
    if rendered is None:
        return PushOutcome(MessageStatus.SKIPPED, refusal)
    message.subject = rendered.title
    notification = PushNotification(
        rendered.title, rendered.body, rendered.url or None, rendered.data
    )
    return push_send(message, notification, batch)


def payload_with_pending(message: Message, outcome: PushOutcome) -> dict[str, Any]:
    """The message's payload with the tokens still to be tried on its next attempt."""
    payload = {k: v for k, v in message.payload.items() if k != "pendingTokens"}
    if outcome.pending_tokens:
        payload["pendingTokens"] = list(outcome.pending_tokens)
    return payload
