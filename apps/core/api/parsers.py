"""JSON parsing that rejects what JSON does not allow and keeps decimals exact."""

import json
from decimal import Decimal
from typing import Any

from django.conf import settings
from rest_framework.parsers import BaseParser

from apps.core.errors import BadRequestError, PayloadTooLargeError


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN and Infinity by default; they are not JSON and not a number
    # any metric can hold.
    raise ValueError(f"{name} is not allowed")


def json_loads_strict(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequestError("Request body must be UTF-8 encoded JSON") from exc
    try:
        return json.loads(text, parse_float=Decimal, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise BadRequestError(f"Malformed JSON: {exc}") from exc


def body_read(stream: Any) -> bytes:
    """The request body, within DATA_UPLOAD_MAX_MEMORY_SIZE: DRF reads the raw stream,
    bypassing Django's own body-size check, so a parser enforces it here."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    raw: bytes = stream.read(limit + 1) if stream is not None else b""
    if len(raw) > limit:
        raise PayloadTooLargeError(f"Request body exceeds {limit} bytes")
    return raw


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = body_read(stream)
        if not raw.strip():
            raise BadRequestError("Request body must be JSON")
        return json_loads_strict(raw)
