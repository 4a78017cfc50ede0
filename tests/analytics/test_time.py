"""What "today" is on the home page, the analytics page and the admin analytics API: the
tenant's reporting-zone date, with events counted on each user's own local date. Users in
Pacific/Kiritimati (UTC+14) and America/Los_Angeles (UTC-8 in November) around UTC midnight:
the three show the same counts, and the home page accounts for the events already dated
tomorrow by users ahead of the reporting zone."""

import datetime as dt
import re
from typing import Any

import pytest
import time_machine
from django.test import Client

from apps.accounts.models import Tenant
from apps.accounts.services import settings_update
from apps.achievements.models import Achievement, AchievementCompletion
from apps.metrics.models import Metric
from apps.users.models import EndUser
from tests.analytics.test_dashboard import embedded

KIRITIMATI = "Pacific/Kiritimati"
LOS_ANGELES = "America/Los_Angeles"


def utc(day: int, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, minute, tzinfo=dt.UTC)


# 23:40 UTC on 28 Nov 2026: 13:40 on 29 Nov in Kiritimati, 15:40 on 28 Nov in Los Angeles.
EVENING = utc(28, 23, 40)


def event(client: Any, when: dt.datetime, user: str, tz: str) -> None:
    with time_machine.travel(when, tick=False):
        response = client.post(
            "/v1/metrics/words/event", {"user": {"id": user, "tz": tz}, "value": 1}
        )
    assert response.status_code == 201, response.content


@pytest.fixture
def around_midnight(api_client: Any, metric: Metric) -> None:
    """Each event with the user's local date it carries."""
    event(api_client, utc(28, 5), "kiri", KIRITIMATI)  # 28 Nov, 19:00 local
    event(api_client, utc(28, 12), "kiri", KIRITIMATI)  # 29 Nov, 02:00 local
    event(api_client, utc(28, 23, 30), "kiri", KIRITIMATI)  # 29 Nov, 13:30 local
    event(api_client, utc(28, 7), "la", LOS_ANGELES)  # 27 Nov, 23:00 local
    event(api_client, utc(28, 8), "la", LOS_ANGELES)  # 28 Nov, 00:00 local
    event(api_client, utc(28, 23, 30), "la", LOS_ANGELES)  # 28 Nov, 15:30 local


def card(html: str, card_id: str) -> int:
    found = re.search(rf'id="{card_id}"><div class="dash-value">(\d+)<', html)
    assert found, f"no card {card_id}"
    return int(found.group(1))


def everywhere(api_client: Any, staff_client: Client, at: dt.datetime) -> dict[str, Any]:
    """Today's events and active users as each of the three shows them."""
    with time_machine.travel(at, tick=False):
        home = staff_client.get("/dashboard/").content.decode()
        charts = embedded(staff_client.get("/dashboard/analytics/", {"range": "7d"}))
        overview = api_client.get("/admin/v1/analytics/overview").json()
        events = api_client.get("/admin/v1/analytics/events", {"range": "7d"}).json()
        active = api_client.get("/admin/v1/analytics/active-users", {"range": "7d"}).json()
    return {
        "home": (card(html=home, card_id="home-events-today"), card(home, "home-dau")),
        "page": (
            charts["events"]["days"][-1]["events"],
            charts["activeUsers"]["days"][-1]["dau"],
        ),
        "api": (overview["days"][-1]["events"], overview["dau"]),
        "api series": (events["days"][-1]["events"], active["days"][-1]["dau"]),
        "today": {
            overview["date"],
            charts["range"]["end"],
            events["end"],
            active["days"][-1]["date"],
        },
        "home_html": home,
        "page_events": [day["events"] for day in charts["events"]["days"]],
        "api_events": [day["events"] for day in events["days"]],
    }


def same_everywhere(seen: dict[str, Any]) -> tuple[int, int]:
    assert seen["home"] == seen["page"] == seen["api"] == seen["api series"]
    assert seen["page_events"] == seen["api_events"]
    assert len(seen["today"]) == 1
    return seen["home"]


def test_in_utc_today_is_the_utc_date_and_users_ahead_are_counted_tomorrow(
    api_client: Any, staff_client: Client, tenant: Tenant, around_midnight: None
) -> None:
    seen = everywhere(api_client, staff_client, EVENING)

    # 28 Nov: Kiritimati's morning event and both of Los Angeles's 28 Nov events.
    assert same_everywhere(seen) == (3, 2)
    assert seen["today"] == {"2026-11-28"}
    assert seen["page_events"][-2:] == [1, 3]  # 27 Nov (LA's late event), 28 Nov
    # Kiritimati's two events of 29 Nov are not lost: the home page says where they are.
    home = seen["home_html"]
    assert "+ 2 already on a later date for users ahead of UTC" in home
    assert "Today is <strong>Nov. 28, 2026</strong> in the reporting zone UTC" in home
    assert "Nov. 28, 2026, 11:40 p.m. UTC" in home


def test_in_kiritimati_today_is_already_the_next_day(
    api_client: Any, staff_client: Client, tenant: Tenant, around_midnight: None
) -> None:
    settings_update(tenant, reporting_tz=KIRITIMATI)

    seen = everywhere(api_client, staff_client, EVENING)

    assert same_everywhere(seen) == (2, 1)  # Kiritimati's 29 Nov; LA is still on 28 Nov
    assert seen["today"] == {"2026-11-29"}
    assert seen["page_events"][-3:] == [1, 3, 2]
    home = seen["home_html"]
    assert "already on a later date" not in home
    assert "Nov. 29, 2026, 1:40 p.m. +14" in home


def test_in_los_angeles_today_is_the_afternoon_of_the_28th(
    api_client: Any, staff_client: Client, tenant: Tenant, around_midnight: None
) -> None:
    settings_update(tenant, reporting_tz=LOS_ANGELES)

    seen = everywhere(api_client, staff_client, EVENING)

    assert same_everywhere(seen) == (3, 2)
    assert seen["today"] == {"2026-11-28"}
    assert "Nov. 28, 2026, 3:40 p.m. PST" in seen["home_html"]


def test_just_after_utc_midnight_the_new_day_starts_everywhere_at_once(
    api_client: Any, staff_client: Client, tenant: Tenant, around_midnight: None
) -> None:
    seen = everywhere(api_client, staff_client, utc(29, 0, 20))

    assert same_everywhere(seen) == (2, 1)
    assert seen["today"] == {"2026-11-29"}
    assert seen["page_events"][-3:] == [1, 3, 2]


def test_completions_are_counted_on_the_reporting_zones_date(
    api_client: Any, staff_client: Client, tenant: Tenant
) -> None:
    """A completion carries a moment, not a user's date: 05:00 UTC on 28 Nov is 28 Nov in
    Kiritimati's reporting zone, 12:00 UTC is 29 Nov there; on the page and in the API
    alike."""
    achievement = Achievement.objects.create(
        tenant=tenant, name="First words", trigger="api", key="fw", status="active"
    )
    user = EndUser.objects.create(tenant=tenant, external_id="kiri", tz=KIRITIMATI)
    other = EndUser.objects.create(tenant=tenant, external_id="la", tz=LOS_ANGELES)
    for who, when in ((user, utc(28, 5)), (other, utc(28, 12))):
        AchievementCompletion.objects.create(
            tenant=tenant, user=who, achievement=achievement, completed_at=when
        )

    def days(zone: str) -> tuple[list[int], list[int]]:
        settings_update(tenant, reporting_tz=zone)
        with time_machine.travel(EVENING, tick=False):
            page = embedded(staff_client.get("/dashboard/analytics/", {"range": "7d"}))
            api = api_client.get("/admin/v1/analytics/achievements", {"range": "7d"}).json()
        return (
            [day["completions"] for day in page["achievements"]["days"]][-2:],
            [day["completions"] for day in api["days"]][-2:],
        )

    assert days("UTC") == ([0, 2], [0, 2])  # 27, 28 Nov
    assert days(KIRITIMATI) == ([1, 1], [1, 1])  # 28, 29 Nov (from 10:00 UTC)
