"""Per-process cache of tenant configuration, keyed by the tenant's config_version.

The hot path (metric events) must not re-read configuration tables on every request. Every
configuration write bumps `Tenant.config_version`; the tenant row is loaded by authentication
anyway, so a stale entry is detected without any extra query, in every process.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from apps.core.replicas import primary_reads

T = TypeVar("T")

# Least recently used entries go first: a process serving thousands of tenants keeps the
# configuration of those it serves now, not of every tenant it ever saw.
MAX_ENTRIES = 4096

_entries: OrderedDict[tuple[int, str], tuple[int, Any]] = OrderedDict()
_lock = threading.Lock()


def tenant_cached(tenant: Any, name: str, loader: Callable[[], T]) -> T:
    key = (tenant.pk, name)
    entry = _entries.get(key)
    if entry is not None and entry[0] == tenant.config_version:
        with _lock:
            if key in _entries:
                _entries.move_to_end(key)
        return entry[1]
    # From the primary, even in a lag-tolerant read: the version came from the primary (with
    # the key), and a replica's older rows kept under it would outlive the lag.
    with primary_reads():
        value = loader()
    with _lock:
        _entries[key] = (tenant.config_version, value)
        _entries.move_to_end(key)
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)
    return value


def tenant_cache_clear() -> None:
    """For tests that rewrite configuration rows directly."""
    with _lock:
        _entries.clear()
