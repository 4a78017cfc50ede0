"""How the dashboard writes dates and moments for people: one format on every page, in the
formats of the staff member's locale (their browser's Accept-Language, chosen for each request
by `DashboardLocaleMiddleware`: "Nov. 28, 2026, 11:40 p.m." for en-us, "28 Nov 2026, 23:40"
for en-gb, "28. November 2026 23:40" for de), and every moment with its zone named.

A moment is written in the zone it is read in (the tenant's reporting zone on every dashboard
page), followed by that zone's abbreviation ("Nov. 28, 2026, 11:40 p.m. UTC",
"Nov. 29, 2026, 1:40 p.m. +14"): a time without its zone is the ambiguity that made staff
misread the dashboard. The template filters of the same names are in
apps/core/templatetags/shown_time.py (`{{ moment|moment_shown }}` writes it in the page's zone);
the admin's list columns and read-only fields of moments come through `moment_column`
(apps/accounts/admin/base.py)."""

import datetime as dt
import zoneinfo
from contextvars import ContextVar

from django.utils import formats, translation

# The locale whose formats the dashboard writes with for the request being served; None: the
# active language's (LANGUAGE_CODE outside a dashboard request).
_shown_locale: ContextVar[str | None] = ContextVar("shown_locale", default=None)
# The zone a dashboard page writes moments in when it names none: the selected tenant's
# reporting zone, set for each dashboard view (gamify/dashboard.py, DashboardSite.admin_view).
shown_zone: ContextVar[str | None] = ContextVar("shown_zone", default=None)


def shown_locale_set(locale: str | None) -> None:
    _shown_locale.set(locale)


def zone_named(name: str | None) -> dt.tzinfo:
    """The zone of an IANA name; UTC when absent or unknown (a page never fails on it)."""
    try:
        return zoneinfo.ZoneInfo(name) if name else dt.UTC
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def _formatted(value: dt.date, format_name: str) -> str:
    locale = _shown_locale.get()
    if locale is None:
        return formats.date_format(value, format_name)
    with translation.override(locale):
        return formats.date_format(value, format_name)


def moment_shown(moment: dt.datetime, zone_name: str | None = None) -> str:
    """An aware moment in the named zone (the page's, `shown_zone`, when none is named), with
    the zone's abbreviation."""
    local = moment.astimezone(zone_named(zone_name or shown_zone.get()))
    return f"{_formatted(local, 'DATETIME_FORMAT')} {local.strftime('%Z')}"


def date_shown(day: dt.date) -> str:
    """A date (no zone: a date is already some zone's date, which the page says)."""
    return _formatted(day, "DATE_FORMAT")
