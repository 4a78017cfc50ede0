import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.metrics.domain import (
    bucket_start,
    summary_buckets,
    summary_range_check,
    value_parse,
)
from apps.metrics.errors import MetricValueInvalidError, SummaryRangeInvalidError


class TestValueParse:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            (5, "5"),
            (-3, "-3"),
            (Decimal("0.1"), "0.1"),
            (0.25, "0.25"),
            (Decimal("1.0000005"), "1.000000"),
            (Decimal("1.0000015"), "1.000002"),
            (Decimal("1E+3"), "1000"),
            (10**12, "1000000000000"),
        ],
    )
    def test_accepts_finite_numbers_rounded_half_even(self, raw, expected):
        assert value_parse(raw) == Decimal(expected)

    @pytest.mark.parametrize(
        "raw",
        [
            True,
            False,
            None,
            "5",
            [1],
            Decimal("NaN"),
            Decimal("Infinity"),
            float("inf"),
            float("nan"),
            10**12 + 1,
            Decimal("-1e13"),
        ],
    )
    def test_rejects_everything_else(self, raw):
        with pytest.raises(MetricValueInvalidError):
            value_parse(raw)

    @given(
        st.decimals(
            min_value=-(10**12), max_value=10**12, allow_nan=False, allow_infinity=False, places=6
        )
    )
    def test_six_place_decimals_round_trip_exactly(self, value):
        assert value_parse(value) == value


class TestBucketStart:
    def test_weeks_start_on_sunday(self):
        # 2026-01-04 is a Sunday.
        assert bucket_start(dt.date(2026, 1, 4), "weekly") == dt.date(2026, 1, 4)
        assert bucket_start(dt.date(2026, 1, 10), "weekly") == dt.date(2026, 1, 4)
        assert bucket_start(dt.date(2026, 1, 3), "weekly") == dt.date(2025, 12, 28)

    def test_months(self):
        assert bucket_start(dt.date(2024, 2, 29), "monthly") == dt.date(2024, 2, 1)

    @given(
        st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2100, 1, 1)),
        st.sampled_from(["daily", "weekly", "monthly"]),
    )
    def test_bucket_start_is_idempotent_and_not_after_the_day(self, day, aggregation):
        start = bucket_start(day, aggregation)
        assert start <= day
        assert bucket_start(start, aggregation) == start
        assert (day - start).days < (31 if aggregation == "monthly" else 7)


class TestSummaryBuckets:
    def test_running_total_starts_from_the_total_before_the_range(self):
        buckets = summary_buckets(
            dt.date(2026, 1, 1),
            dt.date(2026, 1, 3),
            "daily",
            Decimal(100),
            [(dt.date(2026, 1, 2), Decimal(-5))],
        )
        assert [(b.date.day, b.total, b.change) for b in buckets] == [
            (1, 100, 0),
            (2, 95, -5),
            (3, 95, 0),
        ]

    def test_month_buckets_cross_year_and_leap_february(self):
        buckets = summary_buckets(
            dt.date(2023, 12, 31),
            dt.date(2024, 3, 1),
            "monthly",
            Decimal(0),
            [(dt.date(2024, 2, 29), Decimal(1))],
        )
        assert [b.date for b in buckets] == [
            dt.date(2023, 12, 1),
            dt.date(2024, 1, 1),
            dt.date(2024, 2, 1),
            dt.date(2024, 3, 1),
        ]
        assert [b.change for b in buckets] == [0, 0, 1, 0]

    @given(
        st.lists(st.tuples(st.integers(0, 59), st.integers(-50, 50)), max_size=30),
        st.sampled_from(["daily", "weekly", "monthly"]),
    )
    def test_changes_sum_to_final_total(self, offsets, aggregation):
        start = dt.date(2026, 1, 1)
        changes = [(start + dt.timedelta(days=d), Decimal(c)) for d, c in offsets]
        buckets = summary_buckets(
            start, start + dt.timedelta(days=59), aggregation, Decimal(7), changes
        )
        assert sum(b.change for b in buckets) == sum(c for _, c in changes)
        assert buckets[-1].total == 7 + sum(c for _, c in changes)

    def test_range_checks(self):
        summary_range_check(dt.date(2026, 1, 1), dt.date(2026, 1, 1))
        summary_range_check(dt.date(2025, 1, 1), dt.date(2026, 2, 5))
        with pytest.raises(SummaryRangeInvalidError):
            summary_range_check(dt.date(2026, 1, 2), dt.date(2026, 1, 1))
        with pytest.raises(SummaryRangeInvalidError):
            summary_range_check(dt.date(2025, 1, 1), dt.date(2026, 2, 6))
