"""Pure achievement rules (apps.achievements.domain): metric targets, anniversaries, composites
and rarity. No database. Attribute filters are a users rule (tests/users/test_domain.py)."""

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.achievements.domain import (
    anniversary_date,
    anniversary_reached,
    composites_completed,
    metric_reached,
    rarity,
)

d = dt.date


class TestMetricReached:
    @pytest.mark.parametrize(
        ("total", "target", "reached"),
        [("9.999999", "10", False), ("10", "10", True), ("10.5", "10", True), ("-1", "1", False)],
    )
    def test_reached_at_or_above_the_target(self, total, target, reached):
        assert metric_reached(Decimal(total), Decimal(target)) is reached


class TestAnniversaryDate:
    @pytest.mark.parametrize(
        ("sign_up", "years", "expected"),
        [
            (d(2020, 3, 15), 1, d(2021, 3, 15)),
            (d(2020, 3, 15), 5, d(2025, 3, 15)),
            (d(2019, 12, 31), 1, d(2020, 12, 31)),
            (d(2019, 2, 28), 1, d(2020, 2, 28)),
        ],
    )
    def test_same_day_years_later(self, sign_up, years, expected):
        assert anniversary_date(sign_up, years) == expected

    def test_29_february_falls_on_28_february_in_common_years(self):
        assert anniversary_date(d(2024, 2, 29), 1) == d(2025, 2, 28)
        assert anniversary_date(d(2024, 2, 29), 2) == d(2026, 2, 28)
        assert anniversary_date(d(2024, 2, 29), 3) == d(2027, 2, 28)

    def test_29_february_stays_29_february_in_leap_years(self):
        assert anniversary_date(d(2024, 2, 29), 4) == d(2028, 2, 29)
        assert anniversary_date(d(2000, 2, 29), 100) == d(2100, 2, 28)  # 2100 is not leap

    def test_negative_years_go_back(self):
        # The jobs use it backwards to find the latest sign-up date that is due.
        assert anniversary_date(d(2026, 3, 1), -2) == d(2024, 3, 1)
        assert anniversary_date(d(2028, 2, 29), -1) == d(2027, 2, 28)

    @given(
        st.dates(min_value=d(1900, 1, 1), max_value=d(2100, 12, 31)),
        st.integers(min_value=1, max_value=50),
    )
    def test_always_the_same_month_and_close_to_the_day(self, sign_up, years):
        result = anniversary_date(sign_up, years)
        assert result.year == sign_up.year + years
        assert result.month == sign_up.month
        assert result.day == sign_up.day or (sign_up.day, result.day) == (29, 28)


class TestAnniversaryReached:
    def test_reached_on_the_day_and_after(self):
        sign_up = d(2023, 6, 10)
        assert not anniversary_reached(sign_up, 1, d(2024, 6, 9))
        assert anniversary_reached(sign_up, 1, d(2024, 6, 10))
        assert anniversary_reached(sign_up, 1, d(2030, 1, 1))
        assert not anniversary_reached(sign_up, 2, d(2024, 6, 10))

    def test_without_a_sign_up_date_never(self):
        assert not anniversary_reached(None, 1, d(2100, 1, 1))

    def test_29_february_sign_up(self):
        sign_up = d(2024, 2, 29)
        assert not anniversary_reached(sign_up, 1, d(2025, 2, 27))
        assert anniversary_reached(sign_up, 1, d(2025, 2, 28))
        assert not anniversary_reached(sign_up, 4, d(2028, 2, 28))
        assert anniversary_reached(sign_up, 4, d(2028, 2, 29))


class TestCompositesCompleted:
    def test_completes_when_all_prerequisites_are_done(self):
        composites = {10: frozenset({1, 2})}
        assert composites_completed({1, 2}, composites) == [10]
        assert composites_completed({1, 2, 3}, composites) == [10]

    def test_not_yet_complete(self):
        composites = {10: frozenset({1, 2, 3})}
        assert composites_completed({1, 2}, composites) == []
        assert composites_completed(set(), composites) == []

    def test_already_completed_composites_are_not_repeated(self):
        assert composites_completed({1, 2, 10}, {10: frozenset({1, 2})}) == []

    def test_composites_without_prerequisites_never_complete(self):
        assert composites_completed({1}, {10: frozenset()}) == []

    def test_chains_complete_in_order(self):
        composites = {30: frozenset({20, 3}), 20: frozenset({10, 2}), 10: frozenset({1})}
        assert composites_completed({1, 2, 3}, composites) == [10, 20, 30]

    def test_chain_stops_at_the_missing_link(self):
        composites = {30: frozenset({20, 3}), 20: frozenset({10, 2}), 10: frozenset({1})}
        assert composites_completed({1, 3}, composites) == [10]

    def test_several_independent_composites(self):
        composites = {10: frozenset({1}), 11: frozenset({2}), 12: frozenset({1, 2, 3})}
        assert sorted(composites_completed({1, 2}, composites)) == [10, 11]

    def test_input_is_not_changed(self):
        completed = {1}
        composites_completed(completed, {10: frozenset({1})})
        assert completed == {1}

    @given(
        st.sets(st.integers(0, 9)),
        st.dictionaries(
            st.integers(10, 19), st.frozensets(st.integers(0, 19), min_size=1), max_size=6
        ),
    )
    def test_result_is_exactly_the_closure(self, completed, composites):
        newly = composites_completed(completed, composites)
        assert len(newly) == len(set(newly))
        done = set(completed) | set(newly)
        for pk in newly:
            assert pk not in completed
            assert composites[pk] <= done
        # Nothing left that could still complete.
        for pk, prerequisites in composites.items():
            if pk not in done:
                assert not prerequisites <= done


class TestRarity:
    @pytest.mark.parametrize(
        ("completions", "users", "expected"),
        [
            (0, 10, 0.0),
            (1, 4, 25.0),
            (1, 3, 33.33),
            (2, 3, 66.67),
            (3, 3, 100.0),
            (1, 8, 12.5),
            (1, 100_000, 0.0),
            (7, 1_000, 0.7),
        ],
    )
    def test_percent_of_users_to_two_decimals(self, completions, users, expected):
        assert rarity(completions, users) == expected

    def test_no_users_is_zero(self):
        assert rarity(0, 0) == 0.0
        assert rarity(3, 0) == 0.0
