"""The pure timing and eligibility rules of notifications, across time zones and DST."""

import datetime as dt
import zoneinfo

import pytest

from apps.notifications import domain

UTC = dt.UTC
PARIS = zoneinfo.ZoneInfo("Europe/Paris")
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")
KIRITIMATI = zoneinfo.ZoneInfo("Pacific/Kiritimati")  # UTC+14
PAGO_PAGO = zoneinfo.ZoneInfo("Pacific/Pago_Pago")  # UTC-11


def local(zone: dt.tzinfo, *args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=zone)  # type: ignore[misc]


# --- achievement_completed -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("completed", "expected"),
    [
        # Before the window: 17:00 the same day.
        ((2026, 3, 10, 9, 30), (2026, 3, 10, 17, 0)),
        # Inside the window: at once.
        ((2026, 3, 10, 17, 0), (2026, 3, 10, 17, 0)),
        ((2026, 3, 10, 20, 59), (2026, 3, 10, 20, 59)),
        # After it: 17:00 the next day.
        ((2026, 3, 10, 21, 0), (2026, 3, 11, 17, 0)),
        ((2026, 3, 10, 23, 59), (2026, 3, 11, 17, 0)),
    ],
)
def test_achievement_email_is_sent_in_the_evening_window_local(
    completed: tuple[int, ...], expected: tuple[int, ...]
) -> None:
    for zone_name, zone in (("Europe/Paris", PARIS), ("Asia/Tokyo", TOKYO)):
        send_at = domain.achievement_send_at(local(zone, *completed), zone_name)
        assert send_at == local(zone, *expected)


def test_achievement_email_without_time_zone_is_scheduled_in_new_york() -> None:
    completed = dt.datetime(2026, 3, 10, 12, 0, tzinfo=UTC)  # 08:00 in New York
    assert domain.achievement_send_at(completed, None) == local(NEW_YORK, 2026, 3, 10, 17)


def test_achievement_window_is_local_on_both_sides_of_the_date_line() -> None:
    moment = dt.datetime(
        2026, 6, 1, 4, 0, tzinfo=UTC
    )  # 18:00 in Kiritimati, 17:00 the day before in Pago Pago
    assert domain.achievement_send_at(moment, "Pacific/Kiritimati") == moment
    assert domain.achievement_send_at(moment, "Pacific/Pago_Pago") == moment
    later = dt.datetime(2026, 6, 1, 8, 0, tzinfo=UTC)  # 22:00 Kiritimati, 21:00 Pago Pago
    assert domain.achievement_send_at(later, "Pacific/Kiritimati") == local(
        KIRITIMATI, 2026, 6, 2, 17
    )
    assert domain.achievement_send_at(later, "Pacific/Pago_Pago") == local(
        PAGO_PAGO, 2026, 6, 1, 17
    )


def test_achievement_window_keeps_local_time_on_dst_days() -> None:
    # Paris springs forward on 2026-03-29: 17:00 local is 15:00 UTC that day, 16:00 the day before.
    before = domain.achievement_send_at(local(PARIS, 2026, 3, 28, 8), "Europe/Paris")
    on = domain.achievement_send_at(local(PARIS, 2026, 3, 29, 8), "Europe/Paris")
    assert before == dt.datetime(2026, 3, 28, 16, tzinfo=UTC)
    assert on == dt.datetime(2026, 3, 29, 15, tzinfo=UTC)


# --- streak reminders ----------------------------------------------------------------------


def test_daily_reminder_is_at_20_local_even_when_clocks_change() -> None:
    # New York falls back on 2026-11-01 and springs forward on 2026-03-08.
    for day in (dt.date(2026, 11, 1), dt.date(2026, 3, 8), dt.date(2026, 7, 1)):
        at = domain.streak_reminder_at(day, "daily", NEW_YORK)
        assert at.astimezone(NEW_YORK).time() == dt.time(20)
        assert at.astimezone(NEW_YORK).date() == day


def test_weekly_reminder_is_friday_9_and_monthly_the_25th_at_9() -> None:
    sunday = dt.date(2026, 3, 8)
    weekly = domain.streak_reminder_at(sunday, "weekly", PARIS).astimezone(PARIS)
    assert (weekly.date(), weekly.time()) == (dt.date(2026, 3, 13), dt.time(9))
    assert weekly.weekday() == 4  # Friday
    monthly = domain.streak_reminder_at(dt.date(2026, 2, 1), "monthly", TOKYO).astimezone(TOKYO)
    assert (monthly.date(), monthly.time()) == (dt.date(2026, 2, 25), dt.time(9))


def test_reminder_lead_covers_the_longest_gap_to_the_period_end() -> None:
    # 31-day month: from the 25th 09:00 to the 1st 00:00 is 6 days 15 hours.
    reminder = domain.streak_reminder_at(dt.date(2026, 1, 1), "monthly", UTC)
    assert dt.datetime(2026, 2, 1, tzinfo=UTC) - reminder <= domain.REMINDER_LEAD["monthly"]
    weekly = domain.streak_reminder_at(dt.date(2026, 3, 8), "weekly", UTC)
    assert dt.datetime(2026, 3, 15, tzinfo=UTC) - weekly <= domain.REMINDER_LEAD["weekly"]


# --- slots ---------------------------------------------------------------------------------


def test_latest_daily_slot_is_today_after_the_time_and_yesterday_before_it() -> None:
    after = domain.latest_daily_slot(local(PARIS, 2026, 3, 10, 17, 5), PARIS, dt.time(17))
    assert after == domain.Slot(local(PARIS, 2026, 3, 10, 17).astimezone(UTC), dt.date(2026, 3, 10))
    before = domain.latest_daily_slot(local(PARIS, 2026, 3, 10, 16, 59), PARIS, dt.time(17))
    assert before.local_date == dt.date(2026, 3, 9)


def test_recap_slot_is_monday_9_local_or_the_1st_at_9() -> None:
    wednesday = local(TOKYO, 2026, 3, 11, 12)
    weekly = domain.latest_recap_slot(wednesday, TOKYO, "weekly")
    assert weekly.local_date == dt.date(2026, 3, 9)  # Monday
    early_monday = local(TOKYO, 2026, 3, 9, 8, 59)
    assert domain.latest_recap_slot(early_monday, TOKYO, "weekly").local_date == dt.date(2026, 3, 2)
    monthly = domain.latest_recap_slot(local(TOKYO, 2026, 3, 1, 8), TOKYO, "monthly")
    assert monthly.local_date == dt.date(2026, 2, 1)


def test_recap_periods_are_the_week_or_month_before_and_the_one_before_that() -> None:
    assert domain.recap_periods(dt.date(2026, 3, 9), "weekly") == (
        dt.date(2026, 3, 2),
        dt.date(2026, 3, 8),
        dt.date(2026, 2, 23),
    )
    assert domain.recap_periods(dt.date(2026, 3, 1), "monthly") == (
        dt.date(2026, 2, 1),
        dt.date(2026, 2, 28),
        dt.date(2026, 1, 1),
    )


def test_zones_with_one_offset_share_a_slot() -> None:
    now = dt.datetime(2026, 3, 10, 18, tzinfo=UTC)
    groups = domain.slots_by_instant(
        now,
        lambda n, z: domain.latest_daily_slot(n, z, dt.time(17)),
        ["Europe/Paris", "Europe/Berlin", "Asia/Tokyo", "America/New_York"],
    )
    paris_slot = local(PARIS, 2026, 3, 10, 17).astimezone(UTC)
    assert sorted(groups[paris_slot][1]) == ["Europe/Berlin", "Europe/Paris"]
    assert len(groups) == 3
    assert (
        len(domain.slots_by_instant(now, lambda n, z: domain.latest_daily_slot(n, z, dt.time(17))))
        < 60
    )


def test_reactivation_targets_map_days_to_message_numbers() -> None:
    targets = domain.reactivation_targets(dt.date(2026, 3, 31))
    assert targets[dt.date(2026, 3, 28)] == (1, 3)
    assert targets[dt.date(2026, 3, 26)] == (2, 5)
    assert targets[dt.date(2026, 3, 24)] == (3, 7)
    assert targets[dt.date(2026, 3, 17)] == (4, 14)
    assert targets[dt.date(2026, 3, 1)] == (5, 30)
    assert len(targets) == 5


# --- who -----------------------------------------------------------------------------------


def recipient(**overrides: object) -> domain.Recipient:
    base: dict[str, object] = {
        "email": "ada@example.com",
        "subscribed": True,
        "control": False,
        "preferences": {},
    }
    base.update(overrides)
    return domain.Recipient(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("overrides", "allowed"),
    [
        ({}, True),
        ({"preferences": {"recap": ["email"]}}, True),
        ({"preferences": {"recap": ["email", "push"]}}, True),
        ({"preferences": {"recap": ["push"]}}, False),
        ({"preferences": {"recap": []}}, False),
        ({"preferences": {"reactivation": []}}, True),  # another type: recap still on
        ({"control": True}, False),
        ({"email": None}, False),
        ({"email": ""}, False),
        ({"subscribed": False}, False),
    ],
)
def test_email_preference_matrix(overrides: dict[str, object], allowed: bool) -> None:
    assert (domain.email_refusal(recipient(**overrides), "recap") is None) is allowed


def test_retries_back_off_and_then_give_up() -> None:
    now = dt.datetime(2026, 3, 10, tzinfo=UTC)
    delays = [domain.retry_at(n, now) for n in range(1, 8)]
    assert delays[0] == now + dt.timedelta(minutes=1)
    finite = [d for d in delays if d is not None]
    assert finite == sorted(finite)
    assert delays[-1] is None
