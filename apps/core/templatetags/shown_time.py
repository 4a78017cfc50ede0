"""Template filters of apps/core/shown_time.py: `{{ moment|moment_shown }}` (in the page's
zone, or `{{ moment|moment_shown:zone_name }}`) and `{{ day|date_shown }}`, the dashboard's one
way of writing dates and moments."""

import datetime as dt

from django import template

from apps.core import shown_time

register = template.Library()


@register.filter
def moment_shown(moment: dt.datetime | None, zone_name: str | None = None) -> str:
    return "" if moment is None else shown_time.moment_shown(moment, zone_name)


@register.filter
def date_shown(day: dt.date | str | None) -> str:
    """A date, or an ISO date string (the charts' JSON carries those); a moment's date in the
    page's zone."""
    if day is None or day == "":
        return ""
    if isinstance(day, str):
        day = dt.date.fromisoformat(day)
    if isinstance(day, dt.datetime):
        day = day.astimezone(shown_time.zone_named(shown_time.shown_zone.get())).date()
    return shown_time.date_shown(day)
