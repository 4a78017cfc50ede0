"""Expo push receipts: a ticket accepted by Expo can still fail at Apple or Google, and Expo
tells so only in the receipt, fetched at least 15 minutes later (Expo's guidance). A
`DeviceNotRegistered` receipt prunes the token, like a dead token at send time."""

import datetime as dt
import logging
from collections import defaultdict

from apps.notifications.models import ExpoTicket, PushAttempt, PushChannel
from apps.notifications.push.providers.base import token_hash
from apps.notifications.push.providers.factory import provider_for
from apps.notifications.push.secrets import secrets_decrypt
from apps.users.services import device_tokens_prune

logger = logging.getLogger("gamify.notifications.push")

RECEIPT_DELAY = dt.timedelta(minutes=15)
# Expo keeps receipts for about a day; a ticket without one by then is not asked for again.
GIVE_UP_AFTER = dt.timedelta(hours=24)
BATCH = 5_000


def expo_receipts_check(now: dt.datetime) -> int:
    """Fetch the receipts of tickets old enough; returns how many tickets were settled."""
    tickets = list(
        ExpoTicket.objects.filter(checked_at__isnull=True, created__lte=now - RECEIPT_DELAY)
        .select_related("channel")
        .order_by("pk")[:BATCH]
    )
    by_channel: dict[int, list[ExpoTicket]] = defaultdict(list)
    for ticket in tickets:
        by_channel[ticket.channel_id].append(ticket)
    settled = 0
    for channel_tickets in by_channel.values():
        settled += _settle(channel_tickets[0].channel, channel_tickets, now)
    return settled


def _settle(channel: PushChannel, tickets: list[ExpoTicket], now: dt.datetime) -> int:
    provider = provider_for(channel.kind, channel.settings, secrets_decrypt(channel.credentials))
    receipts_of = getattr(provider, "receipts", None)
    try:
        receipts = receipts_of([t.ticket_id for t in tickets]) if receipts_of else {}
    finally:
        provider.close()
    done: list[int] = []
    dead: dict[int, set[str]] = defaultdict(set)
    failures: list[PushAttempt] = []
    for ticket in tickets:
        receipt = receipts.get(ticket.ticket_id)
        if receipt is None:
            if ticket.created < now - GIVE_UP_AFTER:
                done.append(ticket.pk)
            continue
        done.append(ticket.pk)
        if receipt.dead:
            dead[ticket.user_id].add(ticket.token)
        if not receipt.ok and ticket.message_id is not None:
            failures.append(
                PushAttempt(
                    message_id=ticket.message_id,
                    channel=channel,
                    provider=channel.kind,
                    token_hash=token_hash(ticket.token),
                    ok=False,
                    reason=f"receipt: {receipt.reason}"[:255],
                )
            )
    PushAttempt.objects.bulk_create(failures)
    for user_pk, tokens in dead.items():
        device_tokens_prune(user_pk, tokens)
    ExpoTicket.objects.filter(pk__in=done).update(checked_at=now)
    return len(done)
