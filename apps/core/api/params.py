"""Query-string parsing shared by every endpoint: pagination, id lists, attribute filters."""

import datetime as dt
import re
import uuid

from django.http import QueryDict

from apps.core.errors import ValidationError

MAX_IDS = 100
_DIGITS = re.compile(r"^-?[0-9]{1,18}\Z")


def query_int(params: QueryDict, name: str, default: int, minimum: int, maximum: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    # int() would also take "+5", " 5", "1_0" and other scripts' digits.
    if not _DIGITS.match(raw):
        raise ValidationError(f"{name} must be an integer")
    value = int(raw)
    if not minimum <= value <= maximum:
        raise ValidationError(f"{name} must be between {minimum} and {maximum}")
    return value


# A user's neighbours (the leaderboards' and leagues' /neighbours extension routes): places shown
# above and below the user.
MAX_NEIGHBOURS = 25
DEFAULT_NEIGHBOURS = 5


def query_neighbours(params: QueryDict) -> int:
    """`k`, the places shown above and below the user: 1 to MAX_NEIGHBOURS."""
    return query_int(params, "k", default=DEFAULT_NEIGHBOURS, minimum=1, maximum=MAX_NEIGHBOURS)


def query_limit_skip(params: QueryDict) -> tuple[int, int]:
    """Admin list pagination (reference §2.2): limit 1-100, default 10; skip >= 0."""
    limit = query_int(params, "limit", default=10, minimum=1, maximum=100)
    skip = query_int(params, "skip", default=0, minimum=0, maximum=2**31 - 1)
    return limit, skip


def query_bool(params: QueryDict, name: str, default: bool = False) -> bool:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() == "true":
        return True
    if raw.lower() == "false":
        return False
    raise ValidationError(f"{name} must be true or false")


def query_list(params: QueryDict, name: str) -> list[str]:
    """A list given as repeated keys (the SDKs) or comma-separated (the docs), or both."""
    values: list[str] = []
    for raw in params.getlist(name):
        values.extend(part.strip() for part in raw.split(",") if part.strip())
    return list(dict.fromkeys(values))


def query_ids(params: QueryDict, name: str = "ids") -> list[str]:
    ids = query_list(params, name)
    if not ids:
        raise ValidationError(f"{name} is required: give at least one id")
    if len(ids) > MAX_IDS:
        raise ValidationError(f"{name} may name at most {MAX_IDS} ids")
    return ids


def query_date(params: QueryDict, name: str) -> dt.date:
    date = query_date_optional(params, name)
    if date is None:
        raise ValidationError(f"{name} is required (YYYY-MM-DD)")
    return date


def query_date_optional(params: QueryDict, name: str) -> dt.date | None:
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise ValidationError(f"{name} must be a date (YYYY-MM-DD)") from None


# What parse_attribute_filter and query_list accept, for the documents (no NUL: a NUL anywhere
# in a URL is refused first). _SPACE is what str.strip() removes, spelled out so that every
# regex engine reads it alike.
_SPACE = (
    "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0"
    "\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
)
_KEY = f"[^,:\\x00]*[^,:\\x00{_SPACE}][^,:\\x00]*"
_PAIR = f"{_KEY}:[^,\\x00]*"
# Empty (no filter), or key:value pairs separated by commas; keys not blank and without ':'.
ATTRIBUTE_FILTER_SCHEMA = {"type": "string", "pattern": f"^([{_SPACE}]*|{_PAIR}(,{_PAIR})*)$"}
# One item of a list parameter: commas separate items, and blank items are dropped.
LIST_ITEM_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "pattern": f"^[^,\\x00]*[^,\\x00{_SPACE}][^,\\x00]*$",
}


def parse_attribute_filter(raw: str | None, name: str = "userAttributes") -> dict[str, str]:
    """`key:value,key:value` (all must match). Values may contain ':' after the first one."""
    if raw is None or raw.strip() == "":
        return {}
    pairs: dict[str, str] = {}
    for part in raw.split(","):
        key, sep, value = part.partition(":")
        key = key.strip()
        if not sep or not key:
            raise ValidationError(f"{name} must be a comma-separated list of key:value pairs")
        pairs[key] = value.strip()
    return pairs


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except (ValueError, AttributeError, TypeError):
        return False
    return True
