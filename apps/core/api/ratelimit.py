"""Rate limits per organization and endpoint tier, as Trophy has them (reference §4.10).

Tier 1: events, achievement completions and every admin endpoint; tier 2: the rest of the
application API. RATE_LIMIT_TIER1 / RATE_LIMIT_TIER2 are requests per second (0: no limit).
Fixed one-second windows, counted in Redis when REDIS_URL is set (one round trip: INCR and
EXPIRE in a script), so every process shares them; per process otherwise, and for RETRY_AFTER
seconds after Redis failed (an unreachable Redis must not hold or refuse every request).
"""

import logging
import math
import threading
import time
import weakref
from typing import Any

import redis
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.commands.core import Script
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from apps.core.scope import Scope

logger = logging.getLogger("gamify.ratelimit")

TIER_SETTINGS = {1: "RATE_LIMIT_TIER1", 2: "RATE_LIMIT_TIER2"}
WAIT_ATTR = "_rate_limit_wait"
RETRY_AFTER = 5.0

_local_lock = threading.Lock()
_local_counts: dict[str, int] = {}
_local_window = 0
_redis_failed_at: float | None = None


def _count_local(name: str, window: int) -> int:
    global _local_window
    with _local_lock:
        if window != _local_window:  # a new second: the old windows are done with
            _local_counts.clear()
            _local_window = window
        _local_counts[name] = _local_counts.get(name, 0) + 1
        return _local_counts[name]


# INCR and EXPIRE in one round trip. A script, not a pipeline: building a pipeline (and the
# client Django's cache hands out, which it makes anew on every call) copied redis-py's table of
# ~170 response callbacks twice per request, more CPU than the rest of the rate limit.
_COUNT = """
local used = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return used
"""
# One registered script per cache backend (each thread has its own, and a test that changes
# CACHES gets a new one), on a client of the backend's own connection pool.
_counters: "weakref.WeakKeyDictionary[RedisCache, Script]" = weakref.WeakKeyDictionary()


def _count_redis(backend: RedisCache, name: str) -> int:
    counter = _counters.get(backend)
    if counter is None:
        client = backend._cache.get_client(None, write=True)
        counter = _counters[backend] = client.register_script(_COUNT)
    return int(counter(keys=[backend.make_key(name)], args=[2]))


def _redis_backend() -> RedisCache | None:
    """The default cache when it is Redis and has not failed in the last RETRY_AFTER seconds.
    `caches["default"]`, not `django.core.cache.cache`: that is a proxy, never a RedisCache."""
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        return None
    failed_at = _redis_failed_at
    if failed_at is not None and time.monotonic() - failed_at < RETRY_AFTER:
        return None
    return backend


def _count(name: str, window: int) -> int:
    global _redis_failed_at
    backend = _redis_backend()
    if backend is not None:
        try:
            used = _count_redis(backend, name)
        except redis.RedisError as exc:
            if _redis_failed_at is None:
                logger.warning("Redis failed (%s): rate limits are counted per process", exc)
            _redis_failed_at = time.monotonic()
        else:
            _redis_failed_at = None
            return used
    return _count_local(name, window)


def rate_take(subject: str, per_second: int) -> float | None:
    """Counts one request of `subject` in the current second; None when it is within the limit,
    else the seconds until the next window."""
    now = time.time()
    window = int(now)
    used = _count(f"rate:{subject}:{window}", window)
    if used <= per_second:
        return None
    return window + 1 - now


class TierRateLimit(BaseThrottle):
    """The limit of the view's tier (`rate_tier` on the view), per organization."""

    def __init__(self) -> None:
        self.wait_seconds: float | None = None
        self.limit = 0

    def allow_request(self, request: Request, view: Any) -> bool:
        scope = request.auth
        tier = getattr(view, "rate_tier", 2)
        self.limit = int(getattr(settings, TIER_SETTINGS[tier], 0))
        if self.limit <= 0 or not isinstance(scope, Scope):
            return True
        organization = scope.environment.organization_id
        self.wait_seconds = rate_take(f"{organization}:{tier}", self.limit)
        if self.wait_seconds is None:
            return True
        setattr(request, WAIT_ATTR, self.wait_seconds)
        return False

    def wait(self) -> float | None:
        return self.wait_seconds


def retry_after_headers(wait: float | None) -> dict[str, str]:
    seconds = max(wait or 0.0, 0.001)
    return {
        "Retry-After": str(math.ceil(seconds)),
        "Retry-After-Ms": str(math.ceil(seconds * 1000)),
    }
