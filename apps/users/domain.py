"""Pure rules about end-users: time zones, control-group assignment, sign-up dates."""

import datetime as dt
import functools
import hashlib
import zoneinfo

UTC = dt.UTC


@functools.cache
def _zone_names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def zone_names() -> list[str]:
    """Every IANA zone this server knows, sorted (the documents list them)."""
    return sorted(_zone_names())


def tz_is_valid(name: str) -> bool:
    return name in _zone_names()


@functools.lru_cache(maxsize=1024)
def zone(name: str | None) -> dt.tzinfo:
    """The user's zone; UTC when absent (docs/architecture.md §6)."""
    if not name:
        return UTC
    return zoneinfo.ZoneInfo(name)


def local_date(moment: dt.datetime, tz_name: str | None) -> dt.date:
    return moment.astimezone(zone(tz_name)).date()


def control_assign(tenant_key: str, external_id: str, ratio_percent: int) -> bool:
    """Deterministic: the same user id always lands in the same group for a given tenant and
    ratio, so a retried first identification cannot flip the group."""
    digest = hashlib.sha256(f"{tenant_key}:{external_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 100 < ratio_percent
