"""Fast JSON rendering with orjson. Decimals render as JSON numbers, datetimes in UTC with Z."""

from decimal import Decimal
from typing import Any

import orjson
from rest_framework.renderers import BaseRenderer

_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_NON_STR_KEYS


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        # Totals are exact decimals with up to 24 digits; a float would round the last ones.
        # The number is written as its exact decimal text (integral ones without a fraction).
        if value == value.to_integral_value():
            return int(value)
        return orjson.Fragment(format(value.normalize(), "f").encode())
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def json_dumps(data: Any) -> bytes:
    return orjson.dumps(data, default=_default, option=_OPTIONS)


class FastJSONRenderer(BaseRenderer):
    media_type = "application/json"
    format = "json"
    charset = None

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> bytes:
        if data is None:
            return b""
        return json_dumps(data)
