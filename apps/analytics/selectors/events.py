"""Events and net change per metric and day, from the metric daily rollup."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Sum

from apps.accounts.models import Tenant
from apps.analytics.selectors.ranges import DateRange
from apps.metrics.models import MetricDailyChange
from apps.metrics.selectors import MetricDef, metric_definitions


@dataclass(frozen=True)
class MetricDay:
    date: dt.date
    events: int
    change: Decimal


@dataclass(frozen=True)
class MetricSeries:
    metric: MetricDef
    days: list[MetricDay]

    @property
    def events(self) -> int:
        return sum(day.events for day in self.days)

    @property
    def change(self) -> Decimal:
        return sum((day.change for day in self.days), Decimal(0))


def metric_series(tenant: Tenant, period: DateRange) -> list[MetricSeries]:
    """Events and net change (sum of values) per metric and day, from the daily rollup, which
    counts events as well as summing them. Every metric of the tenant, by key."""
    rows = (
        MetricDailyChange.objects.filter(
            tenant=tenant, date__gte=period.start, date__lte=period.end
        )
        .values("metric_id", "date")
        .annotate(events=Sum("events"), change=Sum("change"))
        .values_list("metric_id", "date", "events", "change")
    )
    found = {(pk, day): (events, change) for pk, day, events, change in rows}

    def day_of(metric: MetricDef, day: dt.date) -> MetricDay:
        events, change = found.get((metric.pk, day), (0, 0))
        return MetricDay(day, int(events), Decimal(str(change)))

    return [
        MetricSeries(metric, [day_of(metric, day) for day in period.days()])
        for _, metric in sorted(metric_definitions(tenant).items())
    ]
