"""The date ranges every analytics series is read over: a named range ending today (RANGES,
or RANGE_ALL from the tenant's first day, at most MAX_RANGE_DAYS), or explicit start and end
dates."""

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Min
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.metrics.models import MetricDailyChange

RANGES = {"7d": 7, "30d": 30, "90d": 90}
RANGE_ALL = "all"
DEFAULT_RANGE = "30d"
# About three years of daily points: enough for "all" on a chart, and a bound on the work of
# one request. "all" starts at the tenant's first day or this many days before the end.
MAX_RANGE_DAYS = 1096


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

    def utc_window(self) -> tuple[dt.datetime, dt.datetime]:
        """An instant window holding every moment whose local date, in any time zone (UTC-12
        to UTC+14), falls in the range: rows are read by it, then filtered by their own date."""
        lo = dt.datetime.combine(self.start - dt.timedelta(days=1), dt.time(), dt.UTC)
        hi = dt.datetime.combine(self.end + dt.timedelta(days=2), dt.time(), dt.UTC)
        return lo, hi


def tenant_first_day(tenant: Tenant) -> dt.date:
    """The first local date with data: the tenant's creation, or an earlier event (imports
    may carry past timestamps). One indexed query."""
    first = MetricDailyChange.objects.filter(tenant=tenant).aggregate(first=Min("date"))["first"]
    created = timezone.localdate(tenant.created)
    return min(first, created) if first is not None else created


def date_range_resolve(tenant: Tenant, name: str, today: dt.date) -> DateRange:
    """A named range (RANGES or RANGE_ALL) ending today."""
    if name == RANGE_ALL:
        start = max(tenant_first_day(tenant), today - dt.timedelta(days=MAX_RANGE_DAYS - 1))
        return DateRange(min(start, today), today)
    return DateRange(today - dt.timedelta(days=RANGES[name] - 1), today)
