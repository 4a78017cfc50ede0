"""The date ranges every analytics series is read over, and what "today" is.

"Today" is the tenant's reporting-zone date (`Tenant.reporting_tz`, UTC by default) at the
moment of the request: the home page, the analytics page and the admin analytics API all take
it from `reporting_today`, so they cover the same dates. A range is a span of dates ending
today (RANGES, or RANGE_ALL from the tenant's first day, at most MAX_RANGE_DAYS), or explicit
start and end dates. The series then count each row on its own date: the users' local dates
for what the rollups key by the user's date, the reporting zone's dates for what only carries
an instant (see the package docstring)."""

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Min

from apps.accounts.models import Tenant
from apps.core.errors import ValidationError
from apps.metrics.models import MetricDailyChange
from apps.users.domain import zone

RANGES = {"7d": 7, "30d": 30, "90d": 90}
RANGE_ALL = "all"
DEFAULT_RANGE = "30d"
# About three years of daily points: enough for "all" on a chart, and a bound on the work of
# one request. "all" starts at the tenant's first day or this many days before the end.
MAX_RANGE_DAYS = 1096

_CHOICES = ", ".join([*RANGES, RANGE_ALL])


@dataclass(frozen=True)
class DateRange:
    """Local dates start..end, both included."""

    start: dt.date
    end: dt.date

    def __contains__(self, day: object) -> bool:
        return isinstance(day, dt.date) and self.start <= day <= self.end

    @property
    def length(self) -> int:
        return (self.end - self.start).days + 1

    def days(self) -> Iterator[dt.date]:
        for offset in range(self.length):
            yield self.start + dt.timedelta(days=offset)

    def previous(self) -> "DateRange":
        """The period of the same length that ends the day before this one starts."""
        end = self.start - dt.timedelta(days=1)
        return DateRange(end - dt.timedelta(days=self.length - 1), end)

    def utc_window(self) -> tuple[dt.datetime, dt.datetime]:
        """An instant window holding every moment whose local date, in any time zone (UTC-12
        to UTC+14), falls in the range: rows are read by it, then filtered by their own date."""
        lo = dt.datetime.combine(self.start - dt.timedelta(days=1), dt.time(), dt.UTC)
        hi = dt.datetime.combine(self.end + dt.timedelta(days=2), dt.time(), dt.UTC)
        return lo, hi

    def zone_window(self, tz: dt.tzinfo) -> tuple[dt.datetime, dt.datetime]:
        """The instants whose date in `tz` falls in the range: [start 00:00, end+1 00:00)."""
        since = dt.datetime.combine(self.start, dt.time(), tz)
        until = dt.datetime.combine(self.end + dt.timedelta(days=1), dt.time(), tz)
        return since, until


def reporting_zone(tenant: Tenant) -> dt.tzinfo:
    """The tenant's reporting zone (set on the tenant's dashboard page)."""
    return zone(tenant.reporting_tz)


def reporting_today(tenant: Tenant, now: dt.datetime) -> dt.date:
    """Today for the tenant's analytics: the date `now` has in the tenant's reporting zone."""
    return now.astimezone(reporting_zone(tenant)).date()


def tenant_first_day(tenant: Tenant) -> dt.date:
    """The first date with data: the tenant's creation (its reporting-zone date), or an
    earlier event (imports may carry past timestamps). One indexed query."""
    first = MetricDailyChange.objects.filter(tenant=tenant).aggregate(first=Min("date"))["first"]
    created = reporting_today(tenant, tenant.created)
    return min(first, created) if first is not None else created


def date_range_resolve(tenant: Tenant, name: str, today: dt.date) -> DateRange:
    """A named range (RANGES or RANGE_ALL) ending today."""
    if name == RANGE_ALL:
        start = max(tenant_first_day(tenant), today - dt.timedelta(days=MAX_RANGE_DAYS - 1))
        return DateRange(min(start, today), today)
    return DateRange(today - dt.timedelta(days=RANGES[name] - 1), today)


def date_range_choose(
    tenant: Tenant,
    *,
    name: str | None,
    start: dt.date | None,
    end: dt.date | None,
    today: dt.date,
) -> DateRange:
    """The range a request asks for: `name` (default DEFAULT_RANGE), or `start` with an
    optional `end` (default today). The dashboard and the admin API apply the same rules."""
    if start is None and end is None:
        name = name or DEFAULT_RANGE
        if name not in RANGES and name != RANGE_ALL:
            raise ValidationError(f"range must be one of {_CHOICES}")
        return date_range_resolve(tenant, name, today)
    if name is not None:
        raise ValidationError("range cannot be combined with start and end")
    if start is None:
        raise ValidationError("start is required with end (YYYY-MM-DD)")
    period = DateRange(start, end or today)
    if period.start > period.end:
        raise ValidationError("start must not be after end")
    if period.length > MAX_RANGE_DAYS:
        raise ValidationError(f"start to end may span at most {MAX_RANGE_DAYS} days")
    return period
