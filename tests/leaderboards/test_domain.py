"""Pure leaderboard rules: run boundaries (days, weeks, months, years), run ends, daily time
windows and finish timing."""

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.leaderboards import domain
from apps.leaderboards.domain import DAY, MONTH, YEAR

D = dt.date


def t(text: str) -> dt.time:
    return dt.time.fromisoformat(text)


# --- run_offset --------------------------------------------------------------------------------


class TestRunOffset:
    def test_days(self):
        assert domain.run_offset(D(2026, 3, 10), DAY, 1, 0) == D(2026, 3, 10)
        assert domain.run_offset(D(2026, 3, 10), DAY, 1, 5) == D(2026, 3, 15)
        assert domain.run_offset(D(2026, 3, 10), DAY, 3, 2) == D(2026, 3, 16)

    def test_weekly_runs_are_seven_days(self):
        monday = D(2026, 3, 9)
        assert [domain.run_offset(monday, DAY, 7, i) for i in range(4)] == [
            D(2026, 3, 9),
            D(2026, 3, 16),
            D(2026, 3, 23),
            D(2026, 3, 30),
        ]
        assert all(domain.run_offset(monday, DAY, 7, i).weekday() == 0 for i in range(60))

    def test_month_from_31_january_clamps_without_drifting(self):
        start = D(2026, 1, 31)
        assert [domain.run_offset(start, MONTH, 1, i) for i in range(6)] == [
            D(2026, 1, 31),
            D(2026, 2, 28),
            D(2026, 3, 31),
            D(2026, 4, 30),
            D(2026, 5, 31),
            D(2026, 6, 30),
        ]

    def test_month_in_a_leap_year(self):
        assert domain.run_offset(D(2024, 1, 31), MONTH, 1, 1) == D(2024, 2, 29)
        assert domain.run_offset(D(2024, 1, 30), MONTH, 1, 1) == D(2024, 2, 29)

    def test_multi_month_interval_across_year_end(self):
        assert domain.run_offset(D(2025, 11, 15), MONTH, 3, 1) == D(2026, 2, 15)
        assert domain.run_offset(D(2025, 12, 1), MONTH, 1, 1) == D(2026, 1, 1)
        assert domain.run_offset(D(2025, 12, 31), MONTH, 2, 1) == D(2026, 2, 28)

    def test_years_from_29_february(self):
        start = D(2024, 2, 29)
        assert domain.run_offset(start, YEAR, 1, 1) == D(2025, 2, 28)
        assert domain.run_offset(start, YEAR, 1, 2) == D(2026, 2, 28)
        assert domain.run_offset(start, YEAR, 1, 4) == D(2028, 2, 29)
        assert domain.run_offset(start, YEAR, 2, 2) == D(2028, 2, 29)


# --- run_for -----------------------------------------------------------------------------------


class TestRunFor:
    def test_before_the_start_there_is_no_run(self):
        assert domain.run_for(D(2026, 3, 9), D(2026, 3, 10), DAY, 1) is None
        assert domain.run_for(D(2026, 3, 9), D(2026, 3, 10), None, None) is None

    def test_perpetual_has_one_run_from_the_start(self):
        assert domain.run_for(D(2030, 1, 1), D(2026, 3, 10), None, None) == D(2026, 3, 10)
        assert domain.run_for(D(2026, 3, 10), D(2026, 3, 10), None, None) == D(2026, 3, 10)

    def test_daily(self):
        assert domain.run_for(D(2026, 3, 12), D(2026, 3, 10), DAY, 1) == D(2026, 3, 12)

    def test_weekly(self):
        start = D(2026, 3, 9)  # a Monday
        assert domain.run_for(D(2026, 3, 9), start, DAY, 7) == D(2026, 3, 9)
        assert domain.run_for(D(2026, 3, 15), start, DAY, 7) == D(2026, 3, 9)  # Sunday
        assert domain.run_for(D(2026, 3, 16), start, DAY, 7) == D(2026, 3, 16)
        assert domain.run_for(D(2026, 12, 31), start, DAY, 7) == D(2026, 12, 28)

    def test_monthly_from_31_january(self):
        start = D(2026, 1, 31)
        assert domain.run_for(D(2026, 2, 27), start, MONTH, 1) == D(2026, 1, 31)
        assert domain.run_for(D(2026, 2, 28), start, MONTH, 1) == D(2026, 2, 28)
        assert domain.run_for(D(2026, 3, 30), start, MONTH, 1) == D(2026, 2, 28)
        assert domain.run_for(D(2026, 3, 31), start, MONTH, 1) == D(2026, 3, 31)
        assert domain.run_for(D(2026, 4, 1), start, MONTH, 1) == D(2026, 3, 31)
        assert domain.run_for(D(2026, 4, 30), start, MONTH, 1) == D(2026, 4, 30)

    def test_monthly_mid_month(self):
        start = D(2026, 1, 15)
        assert domain.run_for(D(2026, 2, 14), start, MONTH, 1) == D(2026, 1, 15)
        assert domain.run_for(D(2026, 2, 15), start, MONTH, 1) == D(2026, 2, 15)
        assert domain.run_for(D(2026, 5, 1), start, MONTH, 2) == D(2026, 3, 15)

    def test_yearly_with_leap_day(self):
        start = D(2024, 2, 29)
        assert domain.run_for(D(2025, 2, 27), start, YEAR, 1) == D(2024, 2, 29)
        assert domain.run_for(D(2025, 2, 28), start, YEAR, 1) == D(2025, 2, 28)
        assert domain.run_for(D(2028, 2, 28), start, YEAR, 1) == D(2027, 2, 28)
        assert domain.run_for(D(2028, 2, 29), start, YEAR, 1) == D(2028, 2, 29)

    def test_interval_defaults_to_one(self):
        assert domain.run_for(D(2026, 3, 12), D(2026, 3, 10), DAY, None) == D(2026, 3, 12)


# --- run_end -----------------------------------------------------------------------------------


class TestRunEnd:
    def test_perpetual_ends_with_the_board(self):
        assert domain.run_end(D(2026, 3, 1), D(2026, 3, 1), None, None, None) is None
        assert domain.run_end(D(2026, 3, 1), D(2026, 3, 1), None, None, D(2026, 4, 1)) == D(
            2026, 4, 1
        )

    def test_day_runs(self):
        assert domain.run_end(D(2026, 3, 10), D(2026, 3, 10), DAY, 1, None) == D(2026, 3, 10)
        assert domain.run_end(D(2026, 3, 16), D(2026, 3, 9), DAY, 7, None) == D(2026, 3, 22)

    def test_month_runs_from_31_january(self):
        start = D(2026, 1, 31)
        assert domain.run_end(D(2026, 1, 31), start, MONTH, 1, None) == D(2026, 2, 27)
        assert domain.run_end(D(2026, 2, 28), start, MONTH, 1, None) == D(2026, 3, 30)
        assert domain.run_end(D(2026, 3, 31), start, MONTH, 1, None) == D(2026, 4, 29)

    def test_year_runs(self):
        assert domain.run_end(D(2026, 1, 1), D(2026, 1, 1), YEAR, 1, None) == D(2026, 12, 31)
        assert domain.run_end(D(2024, 2, 29), D(2024, 2, 29), YEAR, 1, None) == D(2025, 2, 27)

    def test_capped_by_the_board_end(self):
        assert domain.run_end(D(2026, 3, 16), D(2026, 3, 9), DAY, 7, D(2026, 3, 18)) == D(
            2026, 3, 18
        )


@given(
    start=st.dates(min_value=D(2000, 1, 1), max_value=D(2040, 12, 31)),
    unit=st.sampled_from([DAY, MONTH, YEAR]),
    interval=st.integers(min_value=1, max_value=30),
    delta=st.integers(min_value=0, max_value=3000),
)
def test_runs_tile_the_calendar(start, unit, interval, delta):
    """Every day from the start lies in exactly one run: run_for(day) <= day <= run_end, and the
    day after the run's end starts the next run."""
    day = start + dt.timedelta(days=delta)
    run = domain.run_for(day, start, unit, interval)
    assert run is not None
    assert start <= run <= day
    end = domain.run_end(run, start, unit, interval, None)
    assert end is not None
    assert run <= day <= end
    assert domain.run_for(run, start, unit, interval) == run
    assert domain.run_for(end, start, unit, interval) == run
    assert domain.run_for(end + dt.timedelta(days=1), start, unit, interval) == end + dt.timedelta(
        days=1
    )


@given(
    start=st.dates(min_value=D(2000, 1, 1), max_value=D(2040, 12, 31)),
    unit=st.sampled_from([MONTH, YEAR]),
    interval=st.integers(min_value=1, max_value=12),
    index=st.integers(min_value=0, max_value=200),
)
def test_calendar_runs_keep_the_start_day_when_the_month_has_it(start, unit, interval, index):
    run = domain.run_offset(start, unit, interval, index)
    assert run.day == start.day or (run.day < start.day and (run + dt.timedelta(days=1)).day == 1)


# --- in_window ---------------------------------------------------------------------------------


class TestInWindow:
    def test_no_restriction(self):
        assert domain.in_window(t("00:00"), None, None)
        assert domain.in_window(t("23:59"), None, None)

    @pytest.mark.parametrize(
        ("moment", "inside"),
        [("08:59", False), ("09:00", True), ("12:00", True), ("16:59", True), ("17:00", False)],
    )
    def test_start_and_end(self, moment, inside):
        assert domain.in_window(t(moment), t("09:00"), t("17:00")) is inside

    @pytest.mark.parametrize(
        ("moment", "inside"), [("17:59", False), ("18:00", True), ("23:59", True), ("00:00", False)]
    )
    def test_only_a_start(self, moment, inside):
        assert domain.in_window(t(moment), t("18:00"), None) is inside

    @pytest.mark.parametrize(
        ("moment", "inside"), [("00:00", True), ("11:59", True), ("12:00", False), ("23:00", False)]
    )
    def test_only_an_end(self, moment, inside):
        assert domain.in_window(t(moment), None, t("12:00")) is inside

    @pytest.mark.parametrize(
        ("moment", "inside"),
        [
            ("21:59", False),
            ("22:00", True),
            ("23:59", True),
            ("00:00", True),
            ("01:59", True),
            ("02:00", False),
            ("12:00", False),
        ],
    )
    def test_wrapping_past_midnight(self, moment, inside):
        assert domain.in_window(t(moment), t("22:00"), t("02:00")) is inside

    @given(
        moment=st.times(),
        start=st.times(),
        end=st.times(),
    )
    def test_wrapped_window_is_the_complement(self, moment, start, end):
        """A window from a to b and its reverse b to a split the day (when a != b)."""
        if start == end:
            return
        assert domain.in_window(moment, start, end) != domain.in_window(moment, end, start)


# --- lifecycle ---------------------------------------------------------------------------------


class TestLifecycle:
    def test_activation(self):
        today = D(2026, 3, 10)
        assert domain.status_after_activation(D(2026, 3, 10), today) == "active"
        assert domain.status_after_activation(D(2026, 3, 1), today) == "active"
        assert domain.status_after_activation(D(2026, 3, 11), today) == "scheduled"

    def test_never_finishes_without_an_end(self):
        assert not domain.finished(None, dt.datetime(2099, 1, 1, tzinfo=dt.UTC))

    @pytest.mark.parametrize(
        ("now", "done"),
        [
            (dt.datetime(2026, 3, 31, 23, 59, tzinfo=dt.UTC), False),
            (dt.datetime(2026, 4, 1, 0, 0, tzinfo=dt.UTC), False),
            (dt.datetime(2026, 4, 1, 11, 59, tzinfo=dt.UTC), False),
            (dt.datetime(2026, 4, 1, 12, 0, tzinfo=dt.UTC), True),
            (dt.datetime(2026, 4, 2, 0, 0, tzinfo=dt.UTC), True),
        ],
    )
    def test_finishes_12_hours_after_the_utc_end(self, now, done):
        assert domain.finished(D(2026, 3, 31), now) is done

    def test_finish_with_an_aware_non_utc_clock(self):
        tokyo = dt.timezone(dt.timedelta(hours=9))
        # 20:59 in Tokyo on 1 April is 11:59 UTC: not yet.
        assert not domain.finished(D(2026, 3, 31), dt.datetime(2026, 4, 1, 20, 59, tzinfo=tokyo))
        assert domain.finished(D(2026, 3, 31), dt.datetime(2026, 4, 1, 21, 0, tzinfo=tokyo))
