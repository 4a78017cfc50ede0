"""The metrics card of the end-user page: each metric's total and its last 30 days as bars."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from apps.accounts.models import Tenant
from apps.metrics.choices import Aggregation
from apps.metrics.selectors import metric_definitions, metric_event_summary
from apps.users.models import EndUser

DAYS_CHARTED = 30
# The chart's size in SVG user units: one bar per day, a gap between bars.
BAR_WIDTH, BAR_STEP, CHART_HEIGHT = 5, 7, 32


@dataclass(frozen=True)
class Bar:
    x: int
    y: int
    height: int
    title: str  # the day and its change, shown on hover
    negative: bool


@dataclass(frozen=True)
class MetricRow:
    key: str
    name: str
    units: str
    total: str
    recent: str  # the net change over the charted days, signed
    active_days: int  # charted days with any change
    bars: list[Bar]
    first_day: dt.date
    last_day: dt.date


def chart_width() -> int:
    return DAYS_CHARTED * BAR_STEP - (BAR_STEP - BAR_WIDTH)


def _bars(changes: list[tuple[dt.date, Decimal]]) -> list[Bar]:
    """Bar heights relative to the largest change of the period; a day with any change keeps
    at least one unit, so that a small day next to a large one still shows."""
    largest = max((abs(change) for _, change in changes), default=Decimal(0))
    bars = []
    for index, (day, change) in enumerate(changes):
        height = 0
        if change and largest:
            height = max(1, round(abs(change) / largest * CHART_HEIGHT))
        bars.append(
            Bar(
                x=index * BAR_STEP,
                y=CHART_HEIGHT - height,
                height=height,
                title=f"{day:%a %d %b}: {_signed(change)}",
                negative=change < 0,
            )
        )
    return bars


def amount(value: Decimal) -> str:
    # Amounts are stored with 6 decimal places; 12.5 reads better than 12.500000.
    return format(value.normalize(), "f")


def _signed(value: Decimal) -> str:
    return amount(value) if value < 0 else f"+{amount(value)}"


def metric_rows(
    tenant: Tenant, user: EndUser, totals: dict[int, Decimal], today: dt.date
) -> list[MetricRow]:
    """The metrics the user has a total of, in the tenant's order, from the daily rollup in the
    user's local calendar: two queries per metric. `totals`: user_metric_totals(user)."""
    first = today - dt.timedelta(days=DAYS_CHARTED - 1)
    rows = []
    for metric in metric_definitions(tenant).values():
        if metric.pk not in totals:
            continue
        buckets = metric_event_summary(user, metric.pk, Aggregation.DAILY, first, today)
        changes = [(bucket.date, bucket.change) for bucket in buckets]
        rows.append(
            MetricRow(
                key=metric.key,
                name=metric.name,
                units=metric.units,
                total=amount(totals[metric.pk]),
                recent=_signed(sum((change for _, change in changes), Decimal(0))),
                active_days=sum(1 for _, change in changes if change),
                bars=_bars(changes),
                first_day=first,
                last_day=today,
            )
        )
    return rows
