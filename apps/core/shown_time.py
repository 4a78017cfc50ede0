"""How the dashboard writes dates and moments for people: one format on every page that uses
it, in the active locale's formats (Django's DATE_FORMAT and DATETIME_FORMAT, so the staff
member's language when one is active), and every moment with its zone named.

A moment is written in the zone it is read in (the tenant's reporting zone on the home and
analytics pages), followed by that zone's abbreviation ("Nov. 28, 2026, 11:40 p.m. UTC",
"Nov. 29, 2026, 1:40 p.m. +14"): a time without its zone is the ambiguity that made staff
misread the dashboard. The template filters of the same names are in
apps/core/templatetags/shown_time.py."""

import datetime as dt
import zoneinfo

from django.utils import formats


def zone_named(name: str | None) -> dt.tzinfo:
    """The zone of an IANA name; UTC when absent or unknown (a page never fails on it)."""
    try:
        return zoneinfo.ZoneInfo(name) if name else dt.UTC
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def moment_shown(moment: dt.datetime, zone_name: str | None) -> str:
    """An aware moment in the named zone, with the zone's abbreviation."""
    local = moment.astimezone(zone_named(zone_name))
    return f"{formats.date_format(local, 'DATETIME_FORMAT')} {local.strftime('%Z')}"


def date_shown(day: dt.date) -> str:
    """A date (no zone: a date is already some zone's date, which the page says)."""
    return formats.date_format(day, "DATE_FORMAT")
