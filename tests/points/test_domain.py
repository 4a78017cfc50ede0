"""The pure points rules: metric multiples (decimals, negatives, large jumps), streak multiples,
boosts (stacking, rounding once by the most conservative mode), caps, levels, time intervals
and summary buckets."""

import datetime as dt
import itertools
import math
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.points import domain
from apps.points.domain import Boost, Level

UTC = dt.UTC


def boosts(*specs: tuple[str, str]) -> list[Boost]:
    return [Boost(f"b{i}", Decimal(m), r) for i, (m, r) in enumerate(specs)]


# --- metric multiples ------------------------------------------------------------------------


class TestMultiplesReached:
    @pytest.mark.parametrize(
        ("total", "threshold", "expected"),
        [
            ("0", 3, 0),
            ("2", 3, 0),
            ("3", 3, 1),
            ("8", 3, 2),
            ("9", 3, 3),
            ("2.99", 1, 2),
            ("3.0", 1, 3),
            ("0.999999", 1, 0),
            ("10.5", 5, 2),
            ("-1", 3, 0),
            ("-30", 3, 0),
            ("1000000000", 7, 142857142),
        ],
    )
    def test_whole_thresholds_held(self, total, threshold, expected):
        assert domain.multiples_reached(Decimal(total), threshold) == expected

    @pytest.mark.parametrize("threshold", [0, -1])
    def test_a_non_positive_threshold_holds_nothing(self, threshold):
        assert domain.multiples_reached(Decimal(100), threshold) == 0


class TestMetricTriggerNewMultiples:
    def test_first_multiple(self):
        assert domain.metric_trigger_new_multiples(0, Decimal(3), 3) == (1, 1)

    def test_below_the_first_multiple_pays_nothing(self):
        assert domain.metric_trigger_new_multiples(0, Decimal("2.9"), 3) == (0, 0)

    def test_a_large_jump_pays_every_multiple_crossed_at_once(self):
        assert domain.metric_trigger_new_multiples(1, Decimal(3000), 3) == (999, 1000)

    def test_decimal_steps_accumulate(self):
        mark = 0
        paid = 0
        total = Decimal(0)
        for _ in range(10):
            total += Decimal("0.25")
            count, mark = domain.metric_trigger_new_multiples(mark, total, 1)
            paid += count
        assert (paid, mark, total) == (2, 2, Decimal("2.5"))

    def test_going_down_and_up_again_never_pays_a_multiple_twice(self):
        count, mark = domain.metric_trigger_new_multiples(0, Decimal(35), 10)
        assert (count, mark) == (3, 3)
        # Down to 10 (one multiple held) keeps the mark...
        assert domain.metric_trigger_new_multiples(mark, Decimal(10), 10) == (0, 3)
        # ...back up to 39 crosses 20 and 30 again: nothing new...
        assert domain.metric_trigger_new_multiples(mark, Decimal(39), 10) == (0, 3)
        # ...only 40 is a multiple never reached before.
        assert domain.metric_trigger_new_multiples(mark, Decimal(40), 10) == (1, 4)

    def test_negative_totals_pay_nothing_and_keep_the_mark(self):
        assert domain.metric_trigger_new_multiples(2, Decimal(-50), 10) == (0, 2)

    @given(
        steps=st.lists(
            st.decimals(min_value=-50, max_value=50, places=2, allow_nan=False), max_size=40
        ),
        threshold=st.integers(min_value=1, max_value=20),
    )
    def test_pays_each_multiple_once_the_highest_ever_held(self, steps, threshold):
        mark, total, paid, highest = 0, Decimal(0), 0, Decimal(0)
        for step in steps:
            total += step
            highest = max(highest, total)
            count, new_mark = domain.metric_trigger_new_multiples(mark, total, threshold)
            assert count >= 0
            assert new_mark == mark + count
            paid, mark = paid + count, new_mark
        assert paid == mark == math.floor(highest / threshold)


class TestStreakMultiples:
    @pytest.mark.parametrize(
        ("length", "threshold", "expected"),
        [(0, 7, 0), (6, 7, 0), (7, 7, 1), (13, 7, 1), (14, 7, 2), (21, 7, 3), (5, 1, 5)],
    )
    def test_multiples(self, length, threshold, expected):
        assert domain.streak_multiples_reached(length, threshold) == expected

    def test_zero_threshold(self):
        assert domain.streak_multiples_reached(10, 0) == 0


# --- boosts ------------------------------------------------------------------------------------


class TestBoosted:
    def test_no_boosts(self):
        assert domain.boosted(10, []) == 10

    def test_single_multiplier(self):
        assert domain.boosted(10, boosts(("2", "down"))) == 20

    def test_stacked_boosts_multiply_together(self):
        assert domain.boosted(10, boosts(("2", "down"), ("1.5", "down"), ("3", "down"))) == 90

    def test_deductions_are_never_boosted(self):
        assert domain.boosted(-10, boosts(("2", "up"), ("3", "nearest"))) == -10

    def test_zero_stays_zero(self):
        assert domain.boosted(0, boosts(("5", "up"))) == 0

    @pytest.mark.parametrize(
        ("points", "multiplier", "rounding", "expected"),
        [
            (10, "1.25", "down", 12),
            (10, "1.25", "nearest", 13),  # halves go up
            (10, "1.25", "up", 13),
            (10, "1.23", "down", 12),
            (10, "1.23", "nearest", 12),
            (10, "1.23", "up", 13),
            (10, "1.27", "nearest", 13),
            (1, "1.2", "nearest", 1),  # the reference's examples: 1.2 -> 1, 1.7 -> 2
            (1, "1.7", "nearest", 2),
            (3, "0.5", "down", 1),
            (3, "0.5", "up", 2),
            (1, "0.5", "down", 0),
            (7, "99.9999", "down", 699),
            (7, "0.0001", "up", 1),
        ],
    )
    def test_rounding_modes(self, points, multiplier, rounding, expected):
        assert domain.boosted(points, boosts((multiplier, rounding))) == expected

    def test_the_product_is_rounded_once_not_per_boost(self):
        # 1 x 1.5 x 1.5 x 1.5 = 3.375 -> 3; rounding each step down would give 1.
        assert domain.boosted(1, boosts(("1.5", "down"), ("1.5", "down"), ("1.5", "down"))) == 3
        # 5 x 1.1 x 1.1 = 6.05 -> up 7; per step up would be 6 -> 7 -> 8.
        assert domain.boosted(5, boosts(("1.1", "up"), ("1.1", "up"))) == 7

    @pytest.mark.parametrize(
        ("modes", "expected"),
        [
            (("down", "up"), 12),
            (("up", "down"), 12),
            (("nearest", "up"), 13),
            (("up", "nearest"), 13),
            (("nearest", "down"), 12),
            (("up", "up"), 13),
            (("nearest", "nearest"), 13),
            (("down", "nearest", "up"), 12),
        ],
    )
    def test_mixed_modes_round_by_the_most_conservative(self, modes, expected):
        # 10 x 1.25 x 1 (x1 boosts cannot exist; use 2 x 0.5 pairs to keep the product 12.5).
        specs = [("1.25", modes[0])] + [("2", m) for m in modes[1:]]
        specs += [("0.5", modes[0])] * (len(modes) - 1)
        assert domain.boosted(10, boosts(*specs)) == expected

    @given(
        points=st.integers(min_value=1, max_value=10**6),
        multipliers=st.lists(
            st.decimals(min_value=Decimal("0.0001"), max_value=Decimal("99.9999"), places=4).filter(
                lambda m: m != 1
            ),
            min_size=1,
            max_size=4,
        ),
    )
    def test_modes_bracket_the_exact_product(self, points, multipliers):
        exact = Decimal(points)
        for m in multipliers:
            exact *= m
        results = {
            mode: domain.boosted(
                points, [Boost(str(i), m, mode) for i, m in enumerate(multipliers)]
            )
            for mode in ("down", "nearest", "up")
        }
        assert results["down"] == math.floor(exact)
        assert results["up"] == math.ceil(exact)
        assert results["down"] <= results["nearest"] <= results["up"]
        assert abs(results["nearest"] - exact) <= Decimal("0.5")
        # Any mix rounds like its most conservative member.
        mixed = [Boost("a", multipliers[0], "up")] + [
            Boost(str(i), m, "nearest") for i, m in enumerate(multipliers[1:])
        ]
        expected = results["nearest"] if len(multipliers) > 1 else results["up"]
        assert domain.boosted(points, mixed) == expected


# --- caps ----------------------------------------------------------------------------------------


class TestCapped:
    @pytest.mark.parametrize(
        ("points", "total", "max_points", "expected"),
        [
            (10, 0, None, 10),
            (10, 10**12, None, 10),
            (10, 0, 100, 10),
            (10, 95, 100, 5),
            (10, 90, 100, 10),
            (10, 100, 100, 0),
            (10, 150, 100, 0),  # the cap was lowered below the balance
            (-10, 100, 100, -10),  # deductions are not capped
            (-10, 150, 100, -10),
        ],
    )
    def test_cap(self, points, total, max_points, expected):
        assert domain.capped(points, total, max_points) == expected

    @given(
        points=st.integers(min_value=-1000, max_value=1000),
        total=st.integers(min_value=-1000, max_value=2000),
        max_points=st.integers(min_value=1, max_value=1500),
    )
    def test_an_award_never_takes_the_total_above_the_cap(self, points, total, max_points):
        granted = domain.capped(points, total, max_points)
        if points > 0:
            assert 0 <= granted <= points
            assert total + granted <= max(total, max_points)
        else:
            assert granted == points


# --- levels --------------------------------------------------------------------------------------


class TestLevels:
    LEVELS = (Level(1, 0), Level(2, 100), Level(3, 500))

    @pytest.mark.parametrize(
        ("total", "expected"),
        [(-5, None), (0, 1), (99, 1), (100, 2), (499, 2), (500, 3), (10**9, 3)],
    )
    def test_highest_threshold_reached(self, total, expected):
        level = domain.level_for(total, self.LEVELS)
        assert (level.pk if level else None) == expected

    def test_no_levels(self):
        assert domain.level_for(100, ()) is None

    def test_none_reached(self):
        assert domain.level_for(50, (Level(1, 100),)) is None

    def test_order_of_definition_does_not_matter(self):
        assert domain.level_for(150, (Level(3, 500), Level(2, 100), Level(1, 10))).pk == 2

    def test_equal_thresholds_pick_one_deterministically(self):
        assert domain.level_for(100, (Level(7, 100), Level(4, 100))).pk == 7

    @given(
        thresholds=st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=8),
        total=st.integers(min_value=-100, max_value=1200),
    )
    def test_level_is_the_highest_threshold_at_or_below_the_total(self, thresholds, total):
        levels = [Level(i, p) for i, p in enumerate(thresholds)]
        level = domain.level_for(total, levels)
        reached = [p for p in thresholds if p <= total]
        if not reached:
            assert level is None
        else:
            assert level is not None
            assert level.points == max(reached)


# --- time intervals ------------------------------------------------------------------------------


class TestIntervalsElapsed:
    SINCE = dt.datetime(2026, 3, 10, 12, 0, tzinfo=UTC)

    @pytest.mark.parametrize(
        ("delta", "unit", "interval", "expected"),
        [
            (dt.timedelta(0), "days", 1, 0),
            (dt.timedelta(hours=23, minutes=59), "days", 1, 0),
            (dt.timedelta(days=1), "days", 1, 1),
            (dt.timedelta(days=6, hours=23), "days", 3, 2),
            (dt.timedelta(days=9), "days", 3, 3),
            (dt.timedelta(hours=5), "hours", 2, 2),
            (dt.timedelta(hours=5), "hour", 2, 2),
            (dt.timedelta(hours=5), "day", 1, 0),
            (dt.timedelta(days=365), "hours", 1, 8760),
            (dt.timedelta(minutes=-5), "hours", 1, 0),
            (dt.timedelta(days=-3), "days", 1, 0),
        ],
    )
    def test_whole_intervals(self, delta, unit, interval, expected):
        assert domain.intervals_elapsed(self.SINCE, self.SINCE + delta, unit, interval) == expected

    def test_time_zones_of_the_instants_do_not_matter(self):
        tokyo = dt.timezone(dt.timedelta(hours=9))
        now = (self.SINCE + dt.timedelta(days=2)).astimezone(tokyo)
        assert domain.intervals_elapsed(self.SINCE, now, "days", 1) == 2

    @given(
        hours=st.integers(min_value=0, max_value=24 * 400),
        interval=st.integers(min_value=1, max_value=72),
    )
    def test_matches_integer_division(self, hours, interval):
        now = self.SINCE + dt.timedelta(hours=hours)
        assert domain.intervals_elapsed(self.SINCE, now, "hours", interval) == hours // interval
        assert domain.intervals_elapsed(self.SINCE, now, "days", interval) == hours // (
            24 * interval
        )


# --- summary buckets -----------------------------------------------------------------------------


def as_tuples(buckets):
    return [(b.low, b.high, b.users) for b in buckets]


class TestSummaryBuckets:
    """Eleven ranges, as the SDK documents PointsSummaryResponse: 0-0, then ten equal ranges
    from 1 to the highest total rounded up to a power of ten (at least 10)."""

    def test_no_users_still_gives_eleven_ranges(self):
        buckets = as_tuples(domain.summary_buckets([]))
        assert buckets[0] == (0, 0, 0)
        assert buckets[1:] == [(i, i, 0) for i in range(1, 11)]

    def test_zero_and_negative_totals_share_the_first_range(self):
        assert as_tuples(domain.summary_buckets([0, 0, -5]))[0] == (0, 0, 3)

    def test_ten_equal_buckets_up_to_the_highest_total(self):
        totals = [0, 1, 100, 101, 550, 999, 1000]
        assert as_tuples(domain.summary_buckets(totals)) == [
            (0, 0, 1),
            (1, 100, 2),
            (101, 200, 1),
            (201, 300, 0),
            (301, 400, 0),
            (401, 500, 0),
            (501, 600, 1),
            (601, 700, 0),
            (701, 800, 0),
            (801, 900, 0),
            (901, 1000, 2),
        ]

    def test_top_rounds_up_to_a_power_of_ten(self):
        buckets = as_tuples(domain.summary_buckets([35, 3]))
        assert buckets[1] == (1, 10, 1)
        assert buckets[4] == (31, 40, 1)
        assert buckets[-1] == (91, 100, 0)
        assert len(buckets) == 11
        assert as_tuples(domain.summary_buckets([1001]))[2] == (1001, 2000, 1)

    def test_custom_bucket_count(self):
        assert as_tuples(domain.summary_buckets([10, 20], buckets=2)) == [
            (0, 0, 0),
            (1, 50, 2),
            (51, 100, 0),
        ]

    @given(st.lists(st.integers(min_value=-100, max_value=10**7), max_size=60))
    def test_every_user_in_exactly_one_contiguous_bucket(self, totals):
        buckets = domain.summary_buckets(totals)
        assert (buckets[0].low, buckets[0].high) == (0, 0)
        assert sum(b.users for b in buckets) == len(totals)
        assert len(buckets) == 11
        for before, after in itertools.pairwise(buckets[1:]):
            assert after.low == before.high + 1
            assert after.high - after.low == before.high - before.low
        positive = [t for t in totals if t > 0]
        if positive:
            assert buckets[1].low == 1
            assert buckets[-1].high >= max(positive)
            for total in positive:
                holding = [b for b in buckets[1:] if b.low <= total <= b.high]
                assert len(holding) == 1
