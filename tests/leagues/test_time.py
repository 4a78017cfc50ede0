"""League weeks in time: one instant for everyone, read in the tenant's reporting zone, across
DST changes and both sides of the date line."""

import datetime as dt
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.leagues.domain import minutes_parse, week_of
from apps.leagues.models import LeagueEntry
from apps.metrics.models import Metric
from apps.users.models import EndUser
from tests.leagues.test_weeks_and_cohorts import league_of

UTC = dt.UTC


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


def test_the_default_week_ends_sunday_at_24_00_utc() -> None:
    week = week_of(utc(2026, 11, 29, 23, 59), ends_on="sunday", ends_at=1440, tz_name="UTC")
    assert (week.start, week.end) == (utc(2026, 11, 23), utc(2026, 11, 30))
    after = week_of(utc(2026, 11, 30), ends_on="sunday", ends_at=1440, tz_name="UTC")
    assert after.start == week.end


def test_a_boundary_in_the_reporting_zone_is_one_instant_for_every_user() -> None:
    # Friday 18:00 in New York (EST, UTC-5) is 23:00 UTC: Saturday 13:00 in Kiritimati
    # (UTC+14) and Friday 12:00 in Pago Pago (UTC-11), the same moment.
    week = week_of(utc(2026, 12, 2), ends_on="friday", ends_at=18 * 60, tz_name="America/New_York")
    assert week.end == utc(2026, 12, 4, 23)
    assert week.end.astimezone(dt.timezone(dt.timedelta(hours=14))).hour == 13


@pytest.mark.parametrize(
    ("moment", "hours"),
    [
        (utc(2026, 3, 5), 167),  # the week in which New York springs forward (8 March)
        (utc(2026, 10, 29), 169),  # the week in which it falls back (1 November)
        (utc(2026, 6, 10), 168),
    ],
)
def test_weeks_across_dst_changes_are_167_168_or_169_hours(moment: dt.datetime, hours: int) -> None:
    week = week_of(moment, ends_on="sunday", ends_at=1440, tz_name="America/New_York")
    assert week.end - week.start == dt.timedelta(hours=hours)
    local = week.end.astimezone(dt.timezone(dt.timedelta(hours=-5)))
    assert week.start <= moment < week.end
    assert local.weekday() in (0, 6)  # midnight Sunday/Monday local (EST or EDT)


def test_a_boundary_in_a_skipped_hour_falls_an_hour_later() -> None:
    # 02:30 on 8 March 2026 does not exist in New York: read as 03:30 EDT (07:30 UTC).
    week = week_of(utc(2026, 3, 5), ends_on="sunday", ends_at=150, tz_name="America/New_York")
    assert week.end == utc(2026, 3, 8, 7, 30)


@pytest.mark.parametrize(("text", "minutes"), [("00:00", 0), ("18:30", 1110), ("24:00", 1440)])
def test_week_end_times_read_from_00_00_to_24_00(text: str, minutes: int) -> None:
    assert minutes_parse(text) == minutes


@pytest.mark.parametrize("text", ["24:01", "7:00", "12:60", "noon", ""])
def test_other_week_end_times_are_refused(text: str) -> None:
    from apps.core.errors import ValidationError

    with pytest.raises(ValidationError):
        minutes_parse(text)


@pytest.mark.django_db
def test_users_on_both_sides_of_the_date_line_share_one_week(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    tenant.reporting_tz = "Europe/Berlin"
    tenant.save()
    league_of(tenant, metric)
    # Sunday 23:30 in Berlin (22:30 UTC): Monday 12:30 in Kiritimati, Sunday 11:30 in Pago
    # Pago; the week ends for both half an hour later.
    with time_machine.travel(utc(2026, 11, 29, 22, 30), tick=False):
        for user, tz in (("kiri", "Pacific/Kiritimati"), ("pago", "Pacific/Pago_Pago")):
            body = {"user": {"id": user, "tz": tz}, "value": 1}
            assert api_client.post(f"/v1/metrics/{metric.key}/event", body).status_code == 201
    entries = list(LeagueEntry.objects.all())
    assert {e.week_start for e in entries} == {utc(2026, 11, 22, 23)}
    assert len({e.cohort_id for e in entries}) == 1
    with time_machine.travel(utc(2026, 11, 29, 23, 0), tick=False):
        body = {"user": {"id": "kiri"}, "value": 1}
        assert api_client.post(f"/v1/metrics/{metric.key}/event", body).status_code == 201
    assert EndUser.objects.get(external_id="kiri").tz == "Pacific/Kiritimati"
    assert LeagueEntry.objects.filter(user__external_id="kiri").count() == 2  # a new week
