"""Which channel a device token goes through.

- `ExponentPushToken[...]` / `ExpoPushToken[...]` go to the tenant's Expo channel;
- any other token goes to the tenant's only non-Expo channel when there is one;
- with both an APNs and an FCM channel, a 64-character hexadecimal token (the form APNs device
  tokens take) goes to APNs and anything else to FCM.
A token no active channel can take is not sent (the delivery log says so).
"""

import re
from collections.abc import Sequence
from typing import TypeVar

from apps.notifications.choices import PushKind

_APNS_TOKEN = re.compile(r"[0-9a-fA-F]{64}\Z")
_EXPO_TOKEN = re.compile(r"Expo(?:nent)?PushToken\[.+\]\Z")

C = TypeVar("C")  # a channel: anything with a `kind`


def is_expo_token(token: str) -> bool:
    return bool(_EXPO_TOKEN.match(token))


def channel_for(token: str, channels: Sequence[C]) -> C | None:
    """`channels` are the tenant's active channels, oldest first (the first of a kind wins)."""
    by_kind: dict[str, C] = {}
    for channel in channels:
        by_kind.setdefault(channel.kind, channel)  # type: ignore[attr-defined]
    if is_expo_token(token):
        return by_kind.get(PushKind.EXPO)
    native = [c for k, c in by_kind.items() if k != PushKind.EXPO]
    if len(native) == 1:
        return native[0]
    if _APNS_TOKEN.match(token):
        return by_kind.get(PushKind.APNS)
    return by_kind.get(PushKind.FCM)


def route(tokens: Sequence[str], channels: Sequence[C]) -> tuple[dict[int, list[str]], list[str]]:
    """({index of channel in `channels`: tokens}, tokens no channel takes)."""
    routed: dict[int, list[str]] = {}
    unroutable: list[str] = []
    for token in tokens:
        channel = channel_for(token, channels)
        if channel is None:
            unroutable.append(token)
        else:
            routed.setdefault(channels.index(channel), []).append(token)
    return routed, unroutable
