"""Pure rules about end-users: time zones, control-group assignment, sign-up dates, which
users (or events) an attribute filter admits, the user fields a write supplies, and the
settings of an attribute definition."""

import datetime as dt
import functools
import hashlib
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass

from apps.core import declarations as declare
from apps.core.arguments import UNSET, Unset
from apps.users.choices import AttributeType

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


def attributes_match(filters: Mapping[str, str] | None, values: Mapping[str, str]) -> bool:
    """Whether attribute values (a user's or an event's) pass a configuration's filters: every
    filter must match. None is a filter that names a deleted attribute: it admits nobody,
    rather than everybody. The one rule behind achievements, points triggers and boosts,
    leaderboard participation and notification templates; `attributes_q`
    (apps/users/selectors.py) is the same rule as a query."""
    if filters is None:
        return False
    if not filters:  # most configuration filters nothing
        return True
    return all(values.get(key) == value for key, value in filters.items())


@dataclass(frozen=True, slots=True)
class UserFields:
    """The fields of an end-user that an identification, an update or an event's inline user
    supplies (apps/users/wire.py `user_fields` maps the wire's to these). Only the supplied ones
    change: UNSET leaves a field as it is, while None clears email, name, tz and device tokens.
    Attribute values merge per key, a None value removing the key."""

    email: str | Unset | None = UNSET
    name: str | Unset | None = UNSET
    tz: str | Unset | None = UNSET
    sign_up_date: dt.date | Unset | None = UNSET
    device_tokens: tuple[str, ...] | Unset | None = UNSET
    subscribe_to_emails: bool | Unset = UNSET
    attributes: Mapping[str, str | None] | Unset = UNSET


@dataclass(frozen=True, kw_only=True)
class AttributeSettings:
    """An attribute definition's settings (apps/core/declarations.py), as attribute_create and
    attribute_update take them. The key and type are what API calls and stored values refer
    to: they are set for good; only the name changes."""

    name: str | Unset = declare.text("Name", max_length=255, required=True)
    key: str | Unset = declare.key(required=True, fixed=True)
    type: str | Unset = declare.choice("Type", AttributeType, required=True, fixed=True)
