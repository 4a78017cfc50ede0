"""Pure rules of a tenant's settings, shared by PATCH /settings and the tenant's dashboard page:
the ranges of the experimentation settings, the colour formats emails can use, and what a
tenant's branding falls back to where it sets nothing."""

import functools
import re
import zoneinfo
from collections.abc import Mapping
from typing import Any, NamedTuple


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


@functools.cache
def reporting_zones() -> list[str]:
    """The IANA zones a tenant's reporting time zone may be (the league weeks' boundaries are
    read in it): every zone this server knows, sorted."""
    return sorted(zoneinfo.available_timezones())


def brand_color_valid(value: str) -> bool:
    """A colour every email client renders (no names, no hsl()): it goes into inline styles."""
    return _COLOR.match(value) is not None


# The one default of each branding setting that emails, push templates and the end-user pages
# use: GET /admin/v1/settings reports the same values, so what staff read is what users see.
# The colour is the neutral grey of the built-in email templates' bar and buttons.
BRAND_COLOR_DEFAULT = "#374151"


def app_name(branding: Mapping[str, Any], tenant_name: str) -> str:
    """The app's name: the branding's, else the tenant's own name."""
    return str(branding.get("appName") or tenant_name)


def brand_color(branding: Mapping[str, Any]) -> str:
    """The brand colour: the branding's, else BRAND_COLOR_DEFAULT."""
    return str(branding.get("brandColor") or BRAND_COLOR_DEFAULT)
