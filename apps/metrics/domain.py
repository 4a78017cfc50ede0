"""Pure rules for metric settings, values and event summaries. No ORM here."""

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from apps.core import declarations as declare
from apps.core.arguments import Unset
from apps.metrics.choices import Aggregation, UnitType
from apps.metrics.errors import MetricValueInvalidError, SummaryRangeInvalidError

MAX_ABS_VALUE = Decimal("1000000000000")  # 1e12 per event
VALUE_QUANTUM = Decimal("0.000001")  # values are kept to 6 decimal places
MAX_SUMMARY_SPAN_DAYS = 400


@dataclass(frozen=True, kw_only=True)
class MetricSettings:
    """A metric's settings (apps/core/declarations.py), as metric_create and metric_update take
    them. API calls and events name a metric by its key: it is set for good."""

    name: str | Unset = declare.text("Name", max_length=255, required=True)
    key: str | Unset = declare.key(required=True, fixed=True)
    unit_type: str | Unset = declare.choice("Unit type", UnitType)
    # "" when none; a currency's ISO 4217 code when unit_type is currency.
    units: str | Unset = declare.text("Units", max_length=32, blank=True)


def value_parse(raw: object) -> Decimal:
    """A metric value: a finite JSON number within ±1e12, rounded half-even to 6 places."""
    if isinstance(raw, bool) or not isinstance(raw, int | float | Decimal):
        raise MetricValueInvalidError("value must be a number")
    try:
        value = Decimal(str(raw)) if isinstance(raw, float) else Decimal(raw)
    except InvalidOperation:
        raise MetricValueInvalidError("value must be a finite number") from None
    if not value.is_finite():
        raise MetricValueInvalidError("value must be a finite number")
    # adjusted() reads the exponent without arithmetic: abs() of 1e999999999 would overflow
    # the decimal context before any comparison.
    if value.adjusted() > MAX_ABS_VALUE.adjusted() or abs(value) > MAX_ABS_VALUE:
        raise MetricValueInvalidError("value must be between -1000000000000 and 1000000000000")
    return value.quantize(VALUE_QUANTUM, rounding=ROUND_HALF_EVEN)


def bucket_start(day: dt.date, aggregation: str) -> dt.date:
    """First day of the bucket holding `day`. Weeks start on Sunday (docs/architecture.md §6)."""
    if aggregation == Aggregation.DAILY:
        return day
    if aggregation == Aggregation.WEEKLY:
        return day - dt.timedelta(days=(day.weekday() + 1) % 7)
    return day.replace(day=1)


def _next_bucket(start: dt.date, aggregation: str) -> dt.date:
    if aggregation == Aggregation.DAILY:
        return start + dt.timedelta(days=1)
    if aggregation == Aggregation.WEEKLY:
        return start + dt.timedelta(days=7)
    return (start.replace(day=28) + dt.timedelta(days=4)).replace(day=1)


@dataclass(frozen=True)
class SummaryBucket:
    date: dt.date
    total: Decimal
    change: Decimal


_RANGE = ("start_date", "end_date")  # the range's bounds, as the summaries' callers name them


def summary_range_check(start: dt.date, end: dt.date) -> None:
    if start > end:
        raise SummaryRangeInvalidError(
            "{start_date} must not be after {end_date}", fields=_RANGE, code="out_of_range"
        )
    if (end - start).days > MAX_SUMMARY_SPAN_DAYS:
        raise SummaryRangeInvalidError(
            "the span from {start_date} to {end_date} must be at most "
            f"{MAX_SUMMARY_SPAN_DAYS} days",
            fields=_RANGE,
            code="out_of_range",
        )


def summary_buckets(
    start: dt.date,
    end: dt.date,
    aggregation: str,
    total_before: Decimal,
    daily_changes: Iterable[tuple[dt.date, Decimal]],
) -> list[SummaryBucket]:
    """Buckets from the one holding `start` to the one holding `end`, each with the change in
    the part of the bucket inside [start, end] and the running total at the bucket's end.

    `total_before` is the total before `start`; `daily_changes` are (date, change) pairs with
    dates inside [start, end]. A bucket that would start before year 1 or end after 9999 (a
    week holding 0001-01-01, a month or day at the end of 9999) is a validation error.
    """
    try:
        by_bucket: dict[dt.date, Decimal] = {}
        for day, change in daily_changes:
            key = bucket_start(day, aggregation)
            by_bucket[key] = by_bucket.get(key, Decimal(0)) + change
        buckets: list[SummaryBucket] = []
        running = total_before
        cursor = bucket_start(start, aggregation)
        while cursor <= end:
            change = by_bucket.get(cursor, Decimal(0))
            running += change
            buckets.append(SummaryBucket(date=cursor, total=running, change=change))
            cursor = _next_bucket(cursor, aggregation)
    except OverflowError:
        raise SummaryRangeInvalidError(
            "{start_date} and {end_date} must leave their whole buckets within years 1 to 9999",
            fields=_RANGE,
            code="out_of_range",
        ) from None
    return buckets
