"""Writes of push state: a channel flagged by delivery (configuration: configuration.py)."""

import datetime as dt

from apps.notifications.models import PushChannel

# --- channels ------------------------------------------------------------------------------


def push_channel_flag(channel: PushChannel, reason: str, now: dt.datetime) -> None:
    """Stop pruning through this channel until staff look (see push.delivery)."""
    PushChannel.objects.filter(pk=channel.pk, flagged_at__isnull=True).update(
        flagged_at=now, flag_reason=reason
    )


# --- templates -----------------------------------------------------------------------------
