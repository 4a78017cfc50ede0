"""Pure rules of a tenant's settings, shared by PATCH /settings and the tenant's dashboard page:
the ranges of the experimentation settings and the colour formats emails can use."""

import re
from typing import NamedTuple


class Range(NamedTuple):
    lower: int
    upper: int


CONTROL_RATIO = Range(0, 100)  # percent of new users held out of gamification
ACTIVATION_WINDOW_DAYS = Range(1, 365)

_BYTE = r"\s*\d{1,3}\s*"
_ALPHA = r"\s*(?:0|1|0?\.\d+|1\.0+)\s*"
_COLOR = re.compile(
    rf"^(?:#[0-9a-fA-F]{{3}}|#[0-9a-fA-F]{{6}}|rgb\({_BYTE},{_BYTE},{_BYTE}\)"
    rf"|rgba\({_BYTE},{_BYTE},{_BYTE},{_ALPHA}\))\Z"
)
BRAND_COLOR_RULE = "must be #RGB, #RRGGBB, rgb() or rgba()"


def brand_color_valid(value: str) -> bool:
    """A colour every email client renders (no names, no hsl()): it goes into inline styles."""
    return _COLOR.match(value) is not None
