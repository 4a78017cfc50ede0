"""Pure streak rules (apps.streaks.domain): periods, conditions, pauses, settling, extending,
expiry, restore windows and freeze auto-earn. No database."""

import datetime as dt
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.streaks.domain import (
    DAILY,
    FREQUENCIES,
    MONTHLY,
    WEEKLY,
    Pause,
    Rules,
    Settlement,
    State,
    conditions_met,
    expires,
    extend,
    freezes_auto_earn,
    is_paused,
    next_period,
    period_end,
    period_start,
    previous_period,
    remap_settled,
    restore_window_start,
    settle,
    shift_periods,
    weekday_sunday0,
)
from apps.users.domain import local_date

d = dt.date
D = Decimal


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=dt.UTC)


def rules(frequency: str = DAILY, **kwargs) -> Rules:
    kwargs.setdefault("mode", "AND")
    kwargs.setdefault("thresholds", {1: D(1)})
    return Rules(frequency=frequency, **kwargs)


def pause(start: dt.date, end: dt.date | None = None) -> Pause:
    return Pause(id=f"p-{start}", start=start, end=end or start)


# Hypothesis strategies -------------------------------------------------------------------------

days = st.dates(min_value=d(1900, 1, 1), max_value=d(2200, 12, 31))
frequencies = st.sampled_from(FREQUENCIES)


# Period boundaries -----------------------------------------------------------------------------


class TestPeriods:
    @pytest.mark.parametrize(
        ("day", "frequency", "start", "end"),
        [
            (d(2026, 3, 5), DAILY, d(2026, 3, 5), d(2026, 3, 5)),
            (d(2024, 2, 29), DAILY, d(2024, 2, 29), d(2024, 2, 29)),
            # Weeks run Sunday..Saturday.
            (d(2026, 3, 1), WEEKLY, d(2026, 3, 1), d(2026, 3, 7)),  # a Sunday
            (d(2026, 3, 7), WEEKLY, d(2026, 3, 1), d(2026, 3, 7)),  # a Saturday
            (d(2026, 3, 4), WEEKLY, d(2026, 3, 1), d(2026, 3, 7)),
            (d(2026, 1, 1), WEEKLY, d(2025, 12, 28), d(2026, 1, 3)),  # across the year
            (d(2024, 2, 29), WEEKLY, d(2024, 2, 25), d(2024, 3, 2)),  # across a leap day
            (d(2023, 2, 28), WEEKLY, d(2023, 2, 26), d(2023, 3, 4)),
            (d(2026, 1, 15), MONTHLY, d(2026, 1, 1), d(2026, 1, 31)),
            (d(2023, 2, 14), MONTHLY, d(2023, 2, 1), d(2023, 2, 28)),
            (d(2024, 2, 29), MONTHLY, d(2024, 2, 1), d(2024, 2, 29)),
            (d(2100, 2, 10), MONTHLY, d(2100, 2, 1), d(2100, 2, 28)),  # not a leap year
            (d(2000, 2, 10), MONTHLY, d(2000, 2, 1), d(2000, 2, 29)),  # a leap year
            (d(2026, 4, 30), MONTHLY, d(2026, 4, 1), d(2026, 4, 30)),
            (d(2026, 12, 31), MONTHLY, d(2026, 12, 1), d(2026, 12, 31)),
        ],
    )
    def test_start_and_end(self, day, frequency, start, end):
        assert period_start(day, frequency) == start
        assert period_end(start, frequency) == end

    @pytest.mark.parametrize(
        ("start", "frequency", "following"),
        [
            (d(2024, 2, 28), DAILY, d(2024, 2, 29)),
            (d(2024, 2, 29), DAILY, d(2024, 3, 1)),
            (d(2023, 2, 28), DAILY, d(2023, 3, 1)),
            (d(2025, 12, 31), DAILY, d(2026, 1, 1)),
            (d(2025, 12, 28), WEEKLY, d(2026, 1, 4)),
            (d(2024, 2, 25), WEEKLY, d(2024, 3, 3)),
            (d(2026, 1, 1), MONTHLY, d(2026, 2, 1)),
            (d(2024, 1, 1), MONTHLY, d(2024, 2, 1)),
            (d(2024, 2, 1), MONTHLY, d(2024, 3, 1)),
            (d(2023, 2, 1), MONTHLY, d(2023, 3, 1)),
            (d(2026, 4, 1), MONTHLY, d(2026, 5, 1)),
            (d(2025, 12, 1), MONTHLY, d(2026, 1, 1)),
        ],
    )
    def test_next_and_previous(self, start, frequency, following):
        assert next_period(start, frequency) == following
        assert previous_period(following, frequency) == start

    @pytest.mark.parametrize(
        ("month", "length"),
        [
            (d(2026, 1, 1), 31),
            (d(2026, 2, 1), 28),
            (d(2024, 2, 1), 29),
            (d(2026, 4, 1), 30),
            (d(2026, 6, 1), 30),
            (d(2026, 7, 1), 31),
            (d(2026, 8, 1), 31),
            (d(2026, 9, 1), 30),
            (d(2026, 11, 1), 30),
            (d(2026, 12, 1), 31),
        ],
    )
    def test_month_lengths(self, month, length):
        assert period_end(month, MONTHLY) == month.replace(day=length)
        assert (next_period(month, MONTHLY) - month).days == length

    @pytest.mark.parametrize(
        ("start", "frequency", "count", "shifted"),
        [
            (d(2026, 3, 5), DAILY, 0, d(2026, 3, 5)),
            (d(2024, 2, 28), DAILY, 1, d(2024, 2, 29)),
            (d(2024, 1, 1), DAILY, 366, d(2025, 1, 1)),
            (d(2026, 1, 1), DAILY, -1, d(2025, 12, 31)),
            (d(2026, 1, 4), WEEKLY, 52, d(2027, 1, 3)),
            (d(2026, 1, 4), WEEKLY, -1, d(2025, 12, 28)),
            (d(2026, 1, 1), MONTHLY, 1, d(2026, 2, 1)),
            (d(2026, 1, 1), MONTHLY, 13, d(2027, 2, 1)),
            (d(2026, 1, 1), MONTHLY, -1, d(2025, 12, 1)),
            (d(2026, 1, 1), MONTHLY, -14, d(2024, 11, 1)),
            (d(2024, 3, 1), MONTHLY, -1, d(2024, 2, 1)),
        ],
    )
    def test_shift_periods(self, start, frequency, count, shifted):
        assert shift_periods(start, frequency, count) == shifted

    @pytest.mark.parametrize(
        ("day", "number"),
        [
            (d(2026, 3, 1), 0),  # Sunday
            (d(2026, 3, 2), 1),
            (d(2026, 3, 6), 5),
            (d(2026, 3, 7), 6),  # Saturday
        ],
    )
    def test_weekday_numbering_starts_on_sunday(self, day, number):
        assert weekday_sunday0(day) == number

    @given(days, frequencies)
    def test_a_day_lies_within_its_period(self, day, frequency):
        start = period_start(day, frequency)
        assert start <= day <= period_end(start, frequency)
        assert period_start(start, frequency) == start
        assert period_start(period_end(start, frequency), frequency) == start

    @given(days, frequencies)
    def test_periods_tile_the_calendar(self, day, frequency):
        start = period_start(day, frequency)
        following = next_period(start, frequency)
        assert following == period_end(start, frequency) + dt.timedelta(days=1)
        assert period_start(following, frequency) == following
        assert previous_period(following, frequency) == start
        assert next_period(previous_period(start, frequency), frequency) == start
        # The day after any day is in the same period or in the next one.
        assert period_start(day + dt.timedelta(days=1), frequency) in (start, following)

    @given(days)
    def test_period_shapes(self, day):
        week = period_start(day, WEEKLY)
        assert weekday_sunday0(week) == 0
        assert (period_end(week, WEEKLY) - week).days == 6
        month = period_start(day, MONTHLY)
        assert month.day == 1
        assert period_end(month, MONTHLY).month == month.month
        assert 28 <= (next_period(month, MONTHLY) - month).days <= 31

    @given(days, frequencies, st.integers(-60, 60))
    def test_shift_periods_is_invertible(self, day, frequency, count):
        start = period_start(day, frequency)
        shifted = shift_periods(start, frequency, count)
        assert period_start(shifted, frequency) == shifted
        assert shift_periods(shifted, frequency, -count) == start
        assert (shifted > start) == (count > 0)


# Local dates ---------------------------------------------------------------------------------


class TestLocalPeriods:
    @pytest.mark.parametrize(
        ("moment", "tz", "local"),
        [
            # New York springs forward on Sunday 8 March 2026 (a 23-hour day).
            (utc(2026, 3, 8, 4, 59), "America/New_York", d(2026, 3, 7)),
            (utc(2026, 3, 8, 5, 0), "America/New_York", d(2026, 3, 8)),
            (utc(2026, 3, 8, 6, 59), "America/New_York", d(2026, 3, 8)),  # 01:59 EST
            (utc(2026, 3, 8, 7, 0), "America/New_York", d(2026, 3, 8)),  # 03:00 EDT
            (utc(2026, 3, 9, 3, 59), "America/New_York", d(2026, 3, 8)),
            (utc(2026, 3, 9, 4, 0), "America/New_York", d(2026, 3, 9)),
            # ... and falls back on Sunday 1 November 2026 (a 25-hour day).
            (utc(2026, 11, 1, 3, 59), "America/New_York", d(2026, 10, 31)),
            (utc(2026, 11, 1, 4, 0), "America/New_York", d(2026, 11, 1)),
            (utc(2026, 11, 1, 5, 30), "America/New_York", d(2026, 11, 1)),  # 01:30 EDT
            (utc(2026, 11, 1, 6, 30), "America/New_York", d(2026, 11, 1)),  # 01:30 EST
            (utc(2026, 11, 2, 4, 59), "America/New_York", d(2026, 11, 1)),
            (utc(2026, 11, 2, 5, 0), "America/New_York", d(2026, 11, 2)),
            # London springs forward on Sunday 29 March 2026 ...
            (utc(2026, 3, 28, 23, 59), "Europe/London", d(2026, 3, 28)),
            (utc(2026, 3, 29, 0, 0), "Europe/London", d(2026, 3, 29)),
            (utc(2026, 3, 29, 22, 59), "Europe/London", d(2026, 3, 29)),
            (utc(2026, 3, 29, 23, 0), "Europe/London", d(2026, 3, 30)),
            # ... and falls back on Sunday 25 October 2026.
            (utc(2026, 10, 24, 22, 59), "Europe/London", d(2026, 10, 24)),
            (utc(2026, 10, 24, 23, 0), "Europe/London", d(2026, 10, 25)),
            (utc(2026, 10, 25, 23, 59), "Europe/London", d(2026, 10, 25)),
            (utc(2026, 10, 26, 0, 0), "Europe/London", d(2026, 10, 26)),
        ],
    )
    def test_dst_change_days(self, moment, tz, local):
        day = local_date(moment, tz)
        assert day == local
        assert period_start(day, DAILY) == local
        # All four change days are Sundays: the first day of a week.
        assert period_start(day, WEEKLY) == local - dt.timedelta(days=weekday_sunday0(local))

    @pytest.mark.parametrize(
        ("tz", "day", "hours"),
        [
            ("America/New_York", d(2026, 3, 8), 23),
            ("America/New_York", d(2026, 11, 1), 25),
            ("America/New_York", d(2026, 6, 1), 24),
            ("Europe/London", d(2026, 3, 29), 23),
            ("Europe/London", d(2026, 10, 25), 25),
            ("Europe/London", d(2026, 6, 1), 24),
        ],
    )
    def test_a_dst_day_is_one_period_of_23_or_25_hours(self, tz, day, hours):
        first = utc(day.year, day.month, day.day) - dt.timedelta(days=1)
        moments = [first + dt.timedelta(minutes=30 * i) for i in range(4 * 48)]
        inside = [m for m in moments if period_start(local_date(m, tz), DAILY) == day]
        assert len(inside) == 2 * hours

    def test_week_and_month_boundaries_move_with_the_local_clock(self):
        # 1 November 2026 is a Sunday and the first of a month; New York is still on EDT.
        before, after = utc(2026, 11, 1, 3, 59), utc(2026, 11, 1, 4, 0)
        assert period_start(local_date(before, "America/New_York"), WEEKLY) == d(2026, 10, 25)
        assert period_start(local_date(after, "America/New_York"), WEEKLY) == d(2026, 11, 1)
        assert period_start(local_date(before, "America/New_York"), MONTHLY) == d(2026, 10, 1)
        assert period_start(local_date(after, "America/New_York"), MONTHLY) == d(2026, 11, 1)
        assert period_start(local_date(before, None), MONTHLY) == d(2026, 11, 1)  # UTC

    @pytest.mark.parametrize(
        ("frequency", "kiritimati", "pago_pago", "utc_period"),
        [
            (DAILY, d(2026, 5, 31), d(2026, 5, 29), d(2026, 5, 30)),
            (WEEKLY, d(2026, 5, 31), d(2026, 5, 24), d(2026, 5, 24)),
            (MONTHLY, d(2026, 5, 1), d(2026, 5, 1), d(2026, 5, 1)),
        ],
    )
    def test_both_sides_of_the_date_line(self, frequency, kiritimati, pago_pago, utc_period):
        # Saturday 30 May 2026 10:30 UTC: Sunday 00:30 at UTC+14, Friday 23:30 at UTC-11.
        moment = utc(2026, 5, 30, 10, 30)
        assert period_start(local_date(moment, "Pacific/Kiritimati"), frequency) == kiritimati
        assert period_start(local_date(moment, "Pacific/Pago_Pago"), frequency) == pago_pago
        assert period_start(local_date(moment, None), frequency) == utc_period

    def test_both_sides_of_the_date_line_at_new_year(self):
        moment = utc(2025, 12, 31, 10, 30)
        east = local_date(moment, "Pacific/Kiritimati")
        west = local_date(moment, "Pacific/Pago_Pago")
        assert (east, west) == (d(2026, 1, 1), d(2025, 12, 30))
        assert period_start(east, MONTHLY) == d(2026, 1, 1)
        assert period_start(west, MONTHLY) == d(2025, 12, 1)
        assert period_start(east, WEEKLY) == period_start(west, WEEKLY) == d(2025, 12, 28)


class TestTimeZoneChange:
    """remap_settled: a settled period is re-expressed in the new zone as the period holding
    its last instant."""

    @pytest.mark.parametrize(
        ("settled", "old", "new", "frequency", "expected"),
        [
            (d(2026, 3, 5), "UTC", "UTC", DAILY, d(2026, 3, 5)),
            # Pago Pago's 29 May ends at 11:00 UTC on the 30th: 31 May, 00:59 in Kiritimati.
            (d(2026, 5, 29), "Pacific/Pago_Pago", "Pacific/Kiritimati", DAILY, d(2026, 5, 31)),
            # Kiritimati's 31 May ends at 10:00 UTC on the 31st: 30 May, 23:00 in Pago Pago.
            (d(2026, 5, 31), "Pacific/Kiritimati", "Pacific/Pago_Pago", DAILY, d(2026, 5, 30)),
            (d(2026, 5, 24), "Pacific/Pago_Pago", "Pacific/Kiritimati", WEEKLY, d(2026, 5, 31)),
            (d(2025, 12, 1), "Pacific/Kiritimati", "Pacific/Pago_Pago", MONTHLY, d(2025, 12, 1)),
            (d(2026, 3, 7), "Europe/Paris", "America/New_York", DAILY, d(2026, 3, 7)),
        ],
    )
    def test_remap(self, settled, old, new, frequency, expected):
        assert remap_settled(settled, frequency, ZoneInfo(old), ZoneInfo(new)) == expected

    def test_moving_east_across_the_date_line_does_not_skip_a_day(self):
        # Active on Friday 29 May in Pago Pago (UTC-11); 30 minutes into the Saturday there,
        # the user is in Kiritimati (UTC+14), where it is already Sunday 31 May.
        state = State(length=5, started=d(2026, 5, 25), settled_through=d(2026, 5, 29))
        remapped = remap_settled(
            d(2026, 5, 29), DAILY, ZoneInfo("Pacific/Pago_Pago"), ZoneInfo("Pacific/Kiritimati")
        )
        moved = State(length=5, started=d(2026, 5, 25), settled_through=remapped)
        current = period_start(local_date(utc(2026, 5, 30, 11, 30), "Pacific/Kiritimati"), DAILY)
        assert current == d(2026, 5, 31)
        settled = settle(moved, rules(), (), current)
        assert settled.lost == 0
        assert extend(settled.state, current, DAILY)[1] is False  # 31 May overlaps the 29th
        assert extend(settled.state, d(2026, 6, 1), DAILY)[0].length == 6
        # Without the remap the Saturday the user never lived would have lost the streak.
        assert settle(state, rules(), (), current).lost == 5

    def test_moving_west_across_the_date_line_does_not_count_a_day_twice(self):
        state = State(length=5, started=d(2026, 5, 27), settled_through=d(2026, 5, 31))
        remapped = remap_settled(
            d(2026, 5, 31), DAILY, ZoneInfo("Pacific/Kiritimati"), ZoneInfo("Pacific/Pago_Pago")
        )
        moved = State(length=5, started=d(2026, 5, 27), settled_through=remapped)
        for hours in range(1, 25, 3):  # Pago Pago's 30 May overlaps Kiritimati's 31 May
            moment = utc(2026, 5, 30, 10, 15) + dt.timedelta(hours=hours)
            current = period_start(local_date(moment, "Pacific/Pago_Pago"), DAILY)
            settled = settle(moved, rules(), (), current)
            assert settled.lost == 0
            assert extend(settled.state, current, DAILY)[1] is False or current > remapped
        assert extend(moved, d(2026, 5, 31), DAILY)[0].length == state.length + 1

    ZONES = (
        "UTC",
        "America/New_York",
        "America/Los_Angeles",
        "America/St_Johns",
        "Europe/London",
        "Europe/Paris",
        "Asia/Kolkata",
        "Asia/Kathmandu",
        "Australia/Lord_Howe",
        "Pacific/Chatham",
        "Pacific/Kiritimati",
        "Pacific/Pago_Pago",
    )

    @given(
        st.datetimes(min_value=dt.datetime(2020, 1, 1), max_value=dt.datetime(2030, 12, 31)),
        st.sampled_from(ZONES),
        st.sampled_from(ZONES),
        st.integers(0, 22 * 60),
        frequencies,
    )
    def test_a_zone_change_never_loses_nor_double_counts(self, naive, old, new, minutes, freq):
        extended_at = naive.replace(tzinfo=dt.UTC)
        moment = extended_at + dt.timedelta(minutes=minutes)
        extended_period = period_start(local_date(extended_at, old), freq)
        remapped = remap_settled(extended_period, freq, ZoneInfo(old), ZoneInfo(new))
        state = State(length=3, started=shift_periods(remapped, freq, -2), settled_through=remapped)
        current = period_start(local_date(moment, new), freq)
        # Active again within 22 hours, in whatever zone: the streak is never lost ...
        settled = settle(state, rules(freq), (), current)
        assert settled.lost == 0
        new_state, grew = extend(settled.state, current, freq)
        assert new_state.length in (3, 4)
        # ... and a period that grows it lies wholly after the period counted in the old zone.
        if grew:
            old_end = dt.datetime.combine(
                next_period(extended_period, freq), dt.time(), tzinfo=ZoneInfo(old)
            )
            new_start = dt.datetime.combine(current, dt.time(), tzinfo=ZoneInfo(new))
            assert new_start >= old_end


# Days off, conditions, pauses ------------------------------------------------------------------


class TestDaysOff:
    @pytest.mark.parametrize(
        ("day", "off"),
        [
            (d(2026, 3, 1), True),  # Sunday
            (d(2026, 3, 2), False),
            (d(2026, 3, 6), False),
            (d(2026, 3, 7), True),  # Saturday
        ],
    )
    def test_daily(self, day, off):
        assert rules(DAILY, days_off=frozenset({0, 6})).is_day_off(day) is off

    @pytest.mark.parametrize("frequency", [WEEKLY, MONTHLY])
    def test_weekly_and_monthly_ignore_days_off(self, frequency):
        every_day = frozenset(range(7))
        assert not rules(frequency, days_off=every_day).is_day_off(d(2026, 3, 1))
        assert not rules(frequency, days_off=every_day).is_day_off(d(2026, 3, 4))

    def test_no_days_off_by_default(self):
        assert not any(rules().is_day_off(d(2026, 3, n)) for n in range(1, 8))


class TestConditionsMet:
    THRESHOLDS = {1: D(3), 2: D(1)}

    @pytest.mark.parametrize(
        ("mode", "changes", "met"),
        [
            ("AND", {1: D(3), 2: D(1)}, True),  # thresholds met exactly
            ("AND", {1: D(10), 2: D(5)}, True),
            ("AND", {1: D("2.999"), 2: D(1)}, False),
            ("AND", {1: D(3)}, False),  # metric 2 missing = 0
            ("AND", {}, False),
            ("AND", {1: D(-5), 2: D(1)}, False),
            ("AND", {1: D(3), 2: D(1), 99: D(-100)}, True),  # other metrics are irrelevant
            ("OR", {1: D(3), 2: D(1)}, True),
            ("OR", {1: D(3)}, True),
            ("OR", {2: D(1)}, True),
            ("OR", {1: D(-5), 2: D(1)}, True),
            ("OR", {1: D("2.999"), 2: D("0.999")}, False),
            ("OR", {1: D(-3), 2: D(-1)}, False),
            ("OR", {}, False),
            ("OR", {99: D(100)}, False),
        ],
    )
    def test_modes(self, mode, changes, met):
        assert conditions_met(rules(mode=mode, thresholds=self.THRESHOLDS), changes) is met

    @pytest.mark.parametrize("mode", ["AND", "OR"])
    def test_disabled_is_never_met(self, mode):
        disabled = rules(mode=mode, thresholds=self.THRESHOLDS, enabled=False)
        assert conditions_met(disabled, {1: D(100), 2: D(100)}) is False

    @pytest.mark.parametrize("mode", ["AND", "OR"])
    def test_no_thresholds_is_never_met(self, mode):
        assert conditions_met(rules(mode=mode, thresholds={}), {1: D(100)}) is False

    def test_fractional_threshold(self):
        assert conditions_met(rules(thresholds={1: D("0.5")}), {1: D("0.5")})
        assert not conditions_met(rules(thresholds={1: D("0.5")}), {1: D("0.49")})

    def test_negative_change_does_not_meet_a_positive_threshold(self):
        assert not conditions_met(rules(thresholds={1: D(1)}), {1: D(-1)})

    def test_a_missing_metric_counts_as_zero(self):
        assert conditions_met(rules(thresholds={1: D(0)}), {})
        assert not conditions_met(rules(thresholds={1: D(0)}), {1: D(-1)})


class TestPauses:
    @pytest.mark.parametrize(
        ("frequency", "p", "period", "covered"),
        [
            (DAILY, pause(d(2026, 3, 6), d(2026, 3, 8)), d(2026, 3, 5), False),
            (DAILY, pause(d(2026, 3, 6), d(2026, 3, 8)), d(2026, 3, 6), True),
            (DAILY, pause(d(2026, 3, 6), d(2026, 3, 8)), d(2026, 3, 8), True),
            (DAILY, pause(d(2026, 3, 6), d(2026, 3, 8)), d(2026, 3, 9), False),
            # Weekly: overlapping a week by one day protects it.
            (WEEKLY, pause(d(2026, 3, 14)), d(2026, 3, 8), True),  # the Saturday
            (WEEKLY, pause(d(2026, 3, 8)), d(2026, 3, 8), True),  # the Sunday
            (WEEKLY, pause(d(2026, 3, 15)), d(2026, 3, 8), False),
            (WEEKLY, pause(d(2026, 3, 7)), d(2026, 3, 8), False),
            (WEEKLY, pause(d(2026, 3, 14), d(2026, 3, 15)), d(2026, 3, 15), True),
            (WEEKLY, pause(d(2026, 3, 1), d(2026, 3, 31)), d(2026, 3, 15), True),
            (MONTHLY, pause(d(2026, 2, 28)), d(2026, 2, 1), True),
            (MONTHLY, pause(d(2026, 2, 1)), d(2026, 2, 1), True),
            (MONTHLY, pause(d(2026, 1, 31)), d(2026, 2, 1), False),
            (MONTHLY, pause(d(2026, 3, 1)), d(2026, 2, 1), False),
            (MONTHLY, pause(d(2024, 2, 29)), d(2024, 2, 1), True),
        ],
    )
    def test_covers(self, frequency, p, period, covered):
        assert p.covers(period, frequency) is covered
        assert is_paused(period, frequency, [p]) is covered

    def test_is_paused_with_several_or_no_pauses(self):
        pauses = [pause(d(2026, 3, 2)), pause(d(2026, 3, 10), d(2026, 3, 12))]
        assert is_paused(d(2026, 3, 11), DAILY, pauses)
        assert is_paused(d(2026, 3, 2), DAILY, pauses)
        assert not is_paused(d(2026, 3, 5), DAILY, pauses)
        assert not is_paused(d(2026, 3, 5), DAILY, [])


# Settle --------------------------------------------------------------------------------------

# Daily fixtures: Thursday 5 March 2026 was the last counted day of a five-day streak.
THU = d(2026, 3, 5)
LIVE = State(length=5, started=d(2026, 3, 1), settled_through=THU)


def with_freezes(count: int, state: State = LIVE) -> State:
    return State(state.length, state.started, state.settled_through, count)


def assert_idempotent(result: Settlement, rule: Rules, pauses, current: dt.date) -> None:
    again = settle(result.state, rule, pauses, current)
    assert again.state == result.state
    assert again.frozen == ()
    assert again.lost == 0


class TestSettle:
    @pytest.mark.parametrize("current", [d(2026, 3, 5), d(2026, 3, 6), d(2026, 3, 1)])
    def test_no_gap(self, current):
        result = settle(with_freezes(2), rules(freezes_enabled=True), [], current)
        assert result == Settlement(with_freezes(2))

    def test_no_streak_is_left_alone(self):
        state = State(length=0, settled_through=d(2026, 2, 1), freezes=3)
        result = settle(state, rules(freezes_enabled=True), [], d(2026, 3, 10))
        assert result == Settlement(state)
        assert settle(State(), rules(), [], d(2026, 3, 10)) == Settlement(State())

    def test_a_missed_day_without_freezes_loses_the_streak(self):
        result = settle(LIVE, rules(), [], d(2026, 3, 7))
        assert result.lost == 5
        assert result.state.length == 0
        assert result.state.started is None
        assert result.frozen == ()
        assert_idempotent(result, rules(), [], d(2026, 3, 7))

    def test_days_off_bridge_without_freezes(self):
        rule = rules(days_off=frozenset({5, 6}), freezes_enabled=True)  # Friday, Saturday
        result = settle(with_freezes(2), rule, [], d(2026, 3, 8))
        assert result.lost == 0
        assert result.frozen == ()
        assert result.paused == ()
        assert result.state == State(5, d(2026, 3, 1), d(2026, 3, 7), 2)
        assert_idempotent(result, rule, [], d(2026, 3, 8))

    def test_a_pause_bridges_without_freezes(self):
        rule = rules(freezes_enabled=True)
        pauses = [pause(d(2026, 3, 6), d(2026, 3, 7))]
        result = settle(with_freezes(2), rule, pauses, d(2026, 3, 8))
        assert result.lost == 0
        assert result.frozen == ()
        assert result.paused == (d(2026, 3, 6), d(2026, 3, 7))
        assert result.state == State(5, d(2026, 3, 1), d(2026, 3, 7), 2)
        assert_idempotent(result, rule, pauses, d(2026, 3, 8))

    def test_a_pause_shorter_than_the_gap(self):
        pauses = [pause(d(2026, 3, 6))]
        result = settle(LIVE, rules(), pauses, d(2026, 3, 8))
        assert result.lost == 5
        assert result.paused == (d(2026, 3, 6),)
        frozen = settle(with_freezes(1), rules(freezes_enabled=True), pauses, d(2026, 3, 8))
        assert frozen.lost == 0
        assert frozen.paused == (d(2026, 3, 6),)
        assert frozen.frozen == (d(2026, 3, 7),)
        assert frozen.state == State(5, d(2026, 3, 1), d(2026, 3, 7), 0)

    def test_one_freeze_bridges_one_missed_day(self):
        rule = rules(freezes_enabled=True)
        result = settle(with_freezes(1), rule, [], d(2026, 3, 7))
        assert result.lost == 0
        assert result.frozen == (d(2026, 3, 6),)
        assert result.state == State(5, d(2026, 3, 1), d(2026, 3, 6), 0)
        assert_idempotent(result, rule, [], d(2026, 3, 7))

    @pytest.mark.parametrize(("freezes", "left"), [(3, 0), (5, 2)])
    def test_several_freezes_bridge_several_days(self, freezes, left):
        rule = rules(freezes_enabled=True)
        result = settle(with_freezes(freezes), rule, [], d(2026, 3, 9))
        assert result.lost == 0
        assert result.frozen == (d(2026, 3, 6), d(2026, 3, 7), d(2026, 3, 8))
        assert result.state == State(5, d(2026, 3, 1), d(2026, 3, 8), left)
        assert_idempotent(result, rule, [], d(2026, 3, 9))

    def test_freezes_run_out_mid_gap(self):
        rule = rules(freezes_enabled=True)
        result = settle(with_freezes(2), rule, [], d(2026, 3, 10))  # missed 6, 7, 8, 9
        assert result.lost == 5
        assert result.frozen == (d(2026, 3, 6), d(2026, 3, 7))
        assert result.state.length == 0
        assert result.state.started is None
        assert result.state.freezes == 0
        assert_idempotent(result, rule, [], d(2026, 3, 10))

    def test_disabled_freezes_are_not_used(self):
        result = settle(with_freezes(3), rules(freezes_enabled=False), [], d(2026, 3, 7))
        assert result.lost == 5
        assert result.frozen == ()
        assert result.state.length == 0
        assert result.state.freezes == 3  # kept for when freezes are enabled again

    def test_days_off_still_bridge_when_freezes_are_disabled(self):
        rule = rules(days_off=frozenset({5}), freezes_enabled=False)
        result = settle(with_freezes(3), rule, [], d(2026, 3, 7))
        assert result.lost == 0
        assert result.state == State(5, d(2026, 3, 1), d(2026, 3, 6), 3)

    def test_days_off_pauses_and_freezes_together(self):
        rule = rules(days_off=frozenset({0, 6}), freezes_enabled=True)
        pauses = [pause(d(2026, 3, 9))]  # Monday
        # Fri 6 frozen, Sat 7 and Sun 8 off, Mon 9 paused, Tue 10 frozen.
        result = settle(with_freezes(2), rule, pauses, d(2026, 3, 11))
        assert result.lost == 0
        assert result.frozen == (d(2026, 3, 6), d(2026, 3, 10))
        assert result.paused == (d(2026, 3, 9),)
        assert result.state == State(5, d(2026, 3, 1), d(2026, 3, 10), 0)
        assert_idempotent(result, rule, pauses, d(2026, 3, 11))
        # One more missed day is one too many.
        lost = settle(with_freezes(2), rule, pauses, d(2026, 3, 12))
        assert lost.lost == 5
        assert lost.frozen == (d(2026, 3, 6), d(2026, 3, 10))
        assert lost.state.freezes == 0

    def test_a_pause_wins_over_a_freeze_on_a_day_off(self):
        rule = rules(days_off=frozenset({5}), freezes_enabled=True)
        result = settle(with_freezes(1), rule, [pause(d(2026, 3, 6))], d(2026, 3, 7))
        assert result.frozen == ()
        assert result.state.freezes == 1

    WEEK = State(length=4, started=d(2026, 2, 8), settled_through=d(2026, 3, 1))

    def test_weekly_missed_week(self):
        result = settle(self.WEEK, rules(WEEKLY), [], d(2026, 3, 15))
        assert result.lost == 4
        assert result.state.length == 0

    def test_weekly_ignores_days_off(self):
        rule = rules(WEEKLY, days_off=frozenset(range(7)))
        assert settle(self.WEEK, rule, [], d(2026, 3, 15)).lost == 4

    def test_weekly_freezes(self):
        rule = rules(WEEKLY, freezes_enabled=True)
        one = settle(with_freezes(1, self.WEEK), rule, [], d(2026, 3, 15))
        assert one.lost == 0
        assert one.frozen == (d(2026, 3, 8),)
        assert one.state == State(4, d(2026, 2, 8), d(2026, 3, 8), 0)
        assert_idempotent(one, rule, [], d(2026, 3, 15))
        out = settle(with_freezes(1, self.WEEK), rule, [], d(2026, 3, 22))
        assert out.lost == 4
        assert out.frozen == (d(2026, 3, 8),)
        assert out.state.freezes == 0

    @pytest.mark.parametrize(
        ("p", "kept"),
        [
            (pause(d(2026, 3, 14)), True),  # Saturday of the missed week
            (pause(d(2026, 3, 8)), True),  # its Sunday
            (pause(d(2026, 3, 7)), False),  # the week before
            (pause(d(2026, 3, 15)), False),  # the current week
        ],
    )
    def test_weekly_pause_overlapping_by_one_day(self, p, kept):
        result = settle(self.WEEK, rules(WEEKLY), [p], d(2026, 3, 15))
        assert (result.lost == 0) is kept
        assert result.paused == ((d(2026, 3, 8),) if kept else ())

    MONTH = State(length=2, started=d(2025, 12, 1), settled_through=d(2026, 1, 1))

    @pytest.mark.parametrize(
        ("pauses", "lost"),
        [
            ([], 2),
            ([pause(d(2026, 2, 28))], 0),
            ([pause(d(2026, 1, 31))], 2),
            ([pause(d(2026, 3, 1))], 2),
        ],
    )
    def test_monthly_missed_month(self, pauses, lost):
        result = settle(self.MONTH, rules(MONTHLY), pauses, d(2026, 3, 1))
        assert result.lost == lost

    def test_monthly_freezes(self):
        rule = rules(MONTHLY, freezes_enabled=True)
        result = settle(with_freezes(3, self.MONTH), rule, [], d(2026, 4, 1))
        assert result.frozen == (d(2026, 2, 1), d(2026, 3, 1))
        assert result.state == State(2, d(2025, 12, 1), d(2026, 3, 1), 1)
        assert_idempotent(result, rule, [], d(2026, 4, 1))


# Extend --------------------------------------------------------------------------------------


class TestExtend:
    def test_first_extension(self):
        assert extend(State(), d(2026, 3, 5), DAILY) == (
            State(length=1, started=d(2026, 3, 5), settled_through=d(2026, 3, 5)),
            True,
        )

    def test_first_extension_keeps_freezes(self):
        state, grew = extend(State(freezes=2), d(2026, 3, 5), DAILY)
        assert grew
        assert state == State(1, d(2026, 3, 5), d(2026, 3, 5), 2)

    @pytest.mark.parametrize(
        ("frequency", "settled", "current"),
        [
            (DAILY, d(2026, 2, 28), d(2026, 3, 1)),
            (DAILY, d(2024, 2, 28), d(2024, 2, 29)),
            (DAILY, d(2025, 12, 31), d(2026, 1, 1)),
            (WEEKLY, d(2025, 12, 28), d(2026, 1, 4)),
            (MONTHLY, d(2024, 2, 1), d(2024, 3, 1)),
            (MONTHLY, d(2025, 12, 1), d(2026, 1, 1)),
        ],
    )
    def test_contiguous_period_adds_one(self, frequency, settled, current):
        state = State(length=5, started=d(2020, 1, 1), settled_through=settled, freezes=1)
        assert extend(state, current, frequency) == (
            State(6, d(2020, 1, 1), current, 1),
            True,
        )

    def test_same_period_twice_does_not_grow(self):
        once, grew = extend(State(), d(2026, 3, 5), DAILY)
        assert grew
        assert extend(once, d(2026, 3, 5), DAILY) == (once, False)
        twice, _ = extend(once, d(2026, 3, 6), DAILY)
        assert extend(twice, d(2026, 3, 6), DAILY) == (twice, False)
        assert twice.length == 2

    def test_a_period_before_settled_through_does_not_grow(self):
        assert extend(LIVE, d(2026, 3, 4), DAILY) == (LIVE, False)

    @pytest.mark.parametrize(
        ("frequency", "settled", "current"),
        [
            (DAILY, d(2026, 3, 3), d(2026, 3, 5)),
            (WEEKLY, d(2026, 3, 1), d(2026, 3, 15)),
            (MONTHLY, d(2026, 1, 1), d(2026, 3, 1)),
        ],
    )
    def test_after_a_gap_restarts_at_one(self, frequency, settled, current):
        state = State(length=5, started=d(2020, 1, 1), settled_through=settled, freezes=2)
        assert extend(state, current, frequency) == (State(1, current, current, 2), True)

    def test_after_a_loss_restarts_at_one(self):
        lost = settle(with_freezes(0), rules(), [], d(2026, 3, 7)).state
        assert extend(lost, d(2026, 3, 7), DAILY) == (
            State(1, d(2026, 3, 7), d(2026, 3, 7), 0),
            True,
        )

    def test_settle_then_extend_after_days_off_and_freezes(self):
        rule = rules(days_off=frozenset({6}), freezes_enabled=True)
        settled = settle(with_freezes(1), rule, [], d(2026, 3, 8)).state  # Fri frozen, Sat off
        assert extend(settled, d(2026, 3, 8), DAILY) == (
            State(6, d(2026, 3, 1), d(2026, 3, 8), 0),
            True,
        )


# Expires -------------------------------------------------------------------------------------


class TestExpires:
    def test_reference_daily_example(self):
        # §3.3: started 01-01, current period 01-03, length 3, extended -> expires 01-04.
        state = State(length=3, started=d(2026, 1, 1), settled_through=d(2026, 1, 3))
        assert expires(state, rules(), []) == d(2026, 1, 4)

    def test_daily_not_yet_extended_today(self):
        state = State(length=2, started=d(2026, 1, 1), settled_through=d(2026, 1, 2))
        assert expires(state, rules(), []) == d(2026, 1, 3)

    @pytest.mark.parametrize(
        ("week", "expiry"),
        [
            # §4.3: "weekly period ending 04-05 -> expires 04-12": Sunday-based weeks in 2025.
            (d(2025, 3, 30), d(2025, 4, 12)),
            # The same shape in 2026: the week of 29 March ends on Saturday 4 April.
            (d(2026, 3, 29), d(2026, 4, 11)),
            (d(2025, 12, 28), d(2026, 1, 10)),
        ],
    )
    def test_weekly_extended_this_week_expires_at_the_end_of_next_week(self, week, expiry):
        state = State(length=3, started=week - dt.timedelta(days=14), settled_through=week)
        assert expires(state, rules(WEEKLY), []) == expiry

    def test_weekly_not_yet_extended_this_week(self):
        state = State(length=3, started=d(2026, 3, 8), settled_through=d(2026, 3, 22))
        assert expires(state, rules(WEEKLY), []) == d(2026, 4, 4)

    @pytest.mark.parametrize(
        ("month", "expiry"),
        [
            (d(2026, 1, 1), d(2026, 2, 28)),
            (d(2024, 1, 1), d(2024, 2, 29)),
            (d(2026, 3, 1), d(2026, 4, 30)),
            (d(2025, 11, 1), d(2025, 12, 31)),
            (d(2025, 12, 1), d(2026, 1, 31)),
        ],
    )
    def test_monthly(self, month, expiry):
        state = State(length=1, started=month, settled_through=month)
        assert expires(state, rules(MONTHLY), []) == expiry

    @pytest.mark.parametrize(
        ("freezes", "enabled", "expiry"),
        [
            (0, True, d(2026, 1, 4)),
            (1, True, d(2026, 1, 5)),
            (2, True, d(2026, 1, 6)),
            (2, False, d(2026, 1, 4)),
        ],
    )
    def test_freezes_push_it_one_period_each(self, freezes, enabled, expiry):
        state = State(
            length=3, started=d(2026, 1, 1), settled_through=d(2026, 1, 3), freezes=freezes
        )
        assert expires(state, rules(freezes_enabled=enabled), []) == expiry

    def test_weekly_freezes(self):
        state = State(length=3, started=d(2026, 3, 1), settled_through=d(2026, 3, 15), freezes=2)
        assert expires(state, rules(WEEKLY, freezes_enabled=True), []) == d(2026, 4, 11)

    def test_days_off_are_skipped(self):
        friday = State(length=3, started=d(2026, 3, 4), settled_through=d(2026, 3, 6))
        assert expires(friday, rules(days_off=frozenset({6, 0})), []) == d(2026, 3, 9)

    def test_pauses_are_skipped(self):
        friday = State(length=3, started=d(2026, 3, 4), settled_through=d(2026, 3, 6))
        assert expires(friday, rules(), [pause(d(2026, 3, 7), d(2026, 3, 10))]) == d(2026, 3, 11)
        # A pause that starts later does not help now.
        assert expires(friday, rules(), [pause(d(2026, 3, 8), d(2026, 3, 10))]) == d(2026, 3, 7)

    def test_days_off_pauses_and_freezes_together(self):
        friday = State(length=3, started=d(2026, 3, 4), settled_through=d(2026, 3, 6), freezes=1)
        rule = rules(days_off=frozenset({6}), freezes_enabled=True)
        # Sat 7 off, Sun 8 paused, Mon 9 frozen, Tue 10 must be active.
        assert expires(friday, rule, [pause(d(2026, 3, 8))]) == d(2026, 3, 10)

    def test_weekly_pause_overlapping_by_one_day(self):
        state = State(length=3, started=d(2026, 2, 15), settled_through=d(2026, 3, 1))
        assert expires(state, rules(WEEKLY), [pause(d(2026, 3, 14))]) == d(2026, 3, 21)

    def test_weekly_ignores_days_off(self):
        state = State(length=3, started=d(2026, 2, 15), settled_through=d(2026, 3, 1))
        rule = rules(WEEKLY, days_off=frozenset(range(7)))
        assert expires(state, rule, []) == d(2026, 3, 14)

    @pytest.mark.parametrize(
        "state",
        [State(), State(freezes=3), State(length=0, settled_through=d(2026, 3, 5), freezes=1)],
    )
    def test_none_without_a_streak(self, state):
        assert expires(state, rules(freezes_enabled=True), []) is None


# Restore window, freeze auto-earn ----------------------------------------------------------


class TestRestoreWindowStart:
    @pytest.mark.parametrize(
        ("today", "frequency", "start"),
        [
            (d(2026, 4, 10), DAILY, d(2026, 1, 10)),
            (d(2026, 1, 15), DAILY, d(2025, 10, 17)),
            (d(2024, 5, 29), DAILY, d(2024, 2, 29)),
            # The week containing 1 January of this year.
            (d(2026, 6, 15), WEEKLY, d(2025, 12, 28)),  # 1 Jan 2026 is a Thursday
            (d(2026, 1, 1), WEEKLY, d(2025, 12, 28)),
            (d(2027, 3, 1), WEEKLY, d(2026, 12, 27)),  # a Friday
            (d(2028, 12, 31), WEEKLY, d(2027, 12, 26)),  # a Saturday
            (d(2023, 7, 1), WEEKLY, d(2023, 1, 1)),  # a Sunday
            # The start of the previous calendar year.
            (d(2026, 6, 15), MONTHLY, d(2025, 1, 1)),
            (d(2026, 1, 1), MONTHLY, d(2025, 1, 1)),
            (d(2026, 12, 31), MONTHLY, d(2025, 1, 1)),
        ],
    )
    def test_each_frequency(self, today, frequency, start):
        assert restore_window_start(today, frequency) == start

    @given(days.filter(lambda day: day.year > 1900), frequencies)
    def test_is_a_period_start_before_today(self, today, frequency):
        start = restore_window_start(today, frequency)
        assert start <= today
        assert period_start(start, frequency) == start


class TestFreezesAutoEarn:
    JAN1 = d(2026, 1, 1)

    @pytest.mark.parametrize(
        ("freezes", "maximum", "amount", "interval", "today", "expected"),
        [
            # Nothing before a whole interval has elapsed.
            (0, 5, 1, 7, d(2026, 1, 1), (0, d(2026, 1, 1), 0)),
            (0, 5, 1, 7, d(2026, 1, 7), (0, d(2026, 1, 1), 0)),
            (0, 5, 1, 7, d(2026, 1, 8), (1, d(2026, 1, 8), 1)),
            # Several intervals elapsed; the last-earned date moves by whole intervals only.
            (0, 5, 1, 7, d(2026, 1, 22), (3, d(2026, 1, 22), 3)),
            (0, 5, 1, 7, d(2026, 1, 25), (3, d(2026, 1, 22), 3)),
            (1, 10, 2, 7, d(2026, 1, 15), (5, d(2026, 1, 15), 4)),
            # Capped at the maximum.
            (4, 5, 2, 7, d(2026, 1, 8), (5, d(2026, 1, 8), 1)),
            (0, 5, 1, 1, d(2026, 3, 1), (5, d(2026, 3, 1), 5)),
            (5, 5, 1, 7, d(2026, 1, 8), (5, d(2026, 1, 8), 0)),
            (7, 5, 1, 7, d(2026, 1, 8), (7, d(2026, 1, 8), 0)),  # never taken away
            # Today before the last-earned date (a time-zone change): nothing.
            (2, 5, 1, 7, d(2025, 12, 31), (2, d(2026, 1, 1), 0)),
            # Auto-earn not configured.
            (2, 5, 1, 0, d(2026, 2, 1), (2, d(2026, 1, 1), 0)),
            (2, 5, 0, 7, d(2026, 2, 1), (2, d(2026, 1, 1), 0)),
        ],
    )
    def test_cases(self, freezes, maximum, amount, interval, today, expected):
        assert freezes_auto_earn(freezes, maximum, amount, interval, self.JAN1, today) == expected

    @given(
        st.integers(0, 10),
        st.integers(0, 10),
        st.integers(1, 5),
        st.integers(1, 30),
        st.dates(min_value=d(2000, 1, 1), max_value=d(2100, 1, 1)),
        st.integers(0, 200),
    )
    def test_invariants(self, freezes, maximum, amount, interval, last, elapsed):
        today = last + dt.timedelta(days=elapsed)
        count, new_last, earned = freezes_auto_earn(freezes, maximum, amount, interval, last, today)
        assert earned == count - freezes >= 0
        assert count <= max(maximum, freezes)
        assert last <= new_last <= today
        assert (new_last - last).days % interval == 0
        assert (today - new_last).days < interval
        intervals = elapsed // interval
        assert count == max(freezes, min(maximum, freezes + intervals * amount))

    @settings(deadline=None)
    @given(
        st.integers(0, 10),
        st.integers(0, 10),
        st.integers(1, 5),
        st.integers(1, 10),
        st.integers(0, 60),
    )
    def test_earning_daily_equals_earning_once(self, freezes, maximum, amount, interval, days_):
        last = self.JAN1
        once = freezes_auto_earn(
            freezes, maximum, amount, interval, last, last + dt.timedelta(days_)
        )
        count = freezes
        total = 0
        for day in range(days_ + 1):
            count, last, earned = freezes_auto_earn(
                count, maximum, amount, interval, last, self.JAN1 + dt.timedelta(day)
            )
            total += earned
        assert (count, last, total) == once


# Whole-streak properties ---------------------------------------------------------------------


@st.composite
def scenarios(draw):
    frequency = draw(frequencies)
    first = period_start(
        draw(st.dates(min_value=d(2020, 1, 1), max_value=d(2030, 1, 1))), frequency
    )
    count = draw(st.integers(1, 30))
    periods = [first]
    for _ in range(count - 1):
        periods.append(next_period(periods[-1], frequency))
    active = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    last_day = period_end(periods[-1], frequency)
    span = (last_day - first).days
    pauses = [
        Pause(id=str(i), start=first + dt.timedelta(offset), end=first + dt.timedelta(offset + n))
        for i, (offset, n) in enumerate(
            draw(st.lists(st.tuples(st.integers(0, span), st.integers(0, 10)), max_size=3))
        )
    ]
    rule = Rules(
        frequency=frequency,
        mode="AND",
        thresholds={1: D(1)},
        days_off=frozenset(draw(st.sets(st.integers(0, 6), max_size=6))),
        freezes_enabled=draw(st.booleans()),
    )
    freezes = draw(st.integers(0, 4))
    return rule, pauses, periods, active, freezes


def model(rule: Rules, pauses, periods, active, freezes):
    """A direct period-by-period statement of the streak rules."""
    length, started = 0, None
    for period, was_active in zip(periods, active, strict=True):
        protected = rule.is_day_off(period) or any(
            p.start <= period_end(period, rule.frequency) and p.end >= period for p in pauses
        )
        if was_active:
            if length == 0:
                started = period
            length += 1
        elif length == 0 or protected:
            continue
        elif rule.freezes_enabled and freezes > 0:
            freezes -= 1
        else:
            length, started = 0, None
    return length, started, freezes


def run(rule: Rules, pauses, periods, active, freezes, *, eager: bool) -> State:
    """Drive the domain as the service would: settle when a period begins (eager) or only when
    there is activity (lazy), then extend on activity."""
    state = State(freezes=freezes)
    for period, was_active in zip(periods, active, strict=True):
        if eager or was_active:
            state = settle(state, rule, pauses, period).state
        if was_active:
            state, grew = extend(state, period, rule.frequency)
            assert grew
            assert extend(state, period, rule.frequency) == (state, False)
    return state


class TestWholeStreak:
    @settings(deadline=None, max_examples=150)
    @given(scenarios())
    def test_matches_the_model(self, scenario):
        rule, pauses, periods, active, freezes = scenario
        after = next_period(periods[-1], rule.frequency)
        for eager in (True, False):
            state = run(rule, pauses, periods, active, freezes, eager=eager)
            final = settle(state, rule, pauses, after).state
            length, started, left = model(rule, pauses, periods, active, freezes)
            assert (final.length, final.started, final.freezes) == (length, started, left)

    @settings(deadline=None, max_examples=150)
    @given(scenarios())
    def test_settle_is_idempotent(self, scenario):
        rule, pauses, periods, active, freezes = scenario
        state = run(rule, pauses, periods, [*active[:-1], False], freezes, eager=False)
        for current in (periods[-1], next_period(periods[-1], rule.frequency)):
            first = settle(state, rule, pauses, current)
            assert len(first.frozen) <= (state.freezes if rule.freezes_enabled else 0)
            assert first.state.freezes == state.freezes - len(first.frozen)
            if first.lost == 0 and state.length > 0:
                assert first.state.length == state.length
                assert first.state.settled_through == max(
                    state.settled_through, previous_period(current, rule.frequency)
                )
            assert_idempotent(first, rule, pauses, current)

    @settings(deadline=None, max_examples=150)
    @given(scenarios())
    def test_expires_agrees_with_settle_and_extend(self, scenario):
        rule, pauses, periods, active, freezes = scenario
        state = run(rule, pauses, periods, active, freezes, eager=True)
        expiry = expires(state, rule, pauses)
        if state.length == 0:
            assert expiry is None
            return
        last_chance = period_start(expiry, rule.frequency)
        assert expiry == period_end(last_chance, rule.frequency)
        assert last_chance >= periods[-1]
        # Activity in the period ending on `expires` keeps the streak ...
        kept = settle(state, rule, pauses, last_chance)
        assert kept.lost == 0
        grown, grew = extend(kept.state, last_chance, rule.frequency)
        assert grew
        assert grown.length == state.length + (last_chance > state.settled_through)
        # ... and in the period after it is too late.
        too_late = settle(state, rule, pauses, next_period(last_chance, rule.frequency))
        assert too_late.lost == state.length
