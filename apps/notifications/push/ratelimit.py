"""Rate limits per push channel, shared by every worker through the cache (Redis when
REDIS_URL is set; per process otherwise). Fixed one-second windows: a sender that would go
past the limit waits for the next second."""

import time

from django.conf import settings
from django.core.cache import cache

# Notifications per second per channel, by provider (0: no limit). Expo allows 600 per second
# per project; APNs and FCM throttle by answering 429, which is retried.
DEFAULT_LIMITS = {"expo": 600, "apns": 0, "fcm": 0}
MAX_WAIT_SECONDS = 30.0


def limit_for(kind: str) -> int:
    limits = getattr(settings, "PUSH_RATE_LIMITS", {})
    return int(limits.get(kind, DEFAULT_LIMITS.get(kind, 0)))


def rate_limit_take(key: str, count: int, per_second: int) -> None:
    """Block until `count` sends fit in a one-second window of `key` (at most MAX_WAIT_SECONDS:
    then go ahead, and let the provider's 429 and the retry take over)."""
    if per_second <= 0 or count <= 0:
        return
    count = min(count, per_second)  # a batch larger than the limit takes a whole window
    deadline = time.monotonic() + MAX_WAIT_SECONDS
    while True:
        window = int(time.time())
        name = f"push-rate:{key}:{window}"
        cache.add(name, 0, timeout=5)
        try:
            used = cache.incr(name, count)
        except ValueError:  # expired between add and incr: a fresh window
            continue
        if used <= per_second or time.monotonic() > deadline:
            return
        time.sleep(max(0.0, window + 1 - time.time()))
