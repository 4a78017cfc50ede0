"""Time on the home page and the analytics page, in the browser: at 23:40 UTC, with users in
Pacific/Kiritimati and America/Los_Angeles, staff read today's counts on users' local dates
with the reporting zone named, pick a custom range that the URL keeps, see each total beside
the previous period, and download a chart's data as CSV. Screenshots at 1280 px and 390 px
(conftest.py saves them under BROWSER_SCREENSHOTS)."""

import datetime as dt
from pathlib import Path
from typing import Any

import time_machine
from rest_framework.test import APIClient

from apps.accounts.services import settings_update
from apps.metrics.configuration import metric_create
from apps.metrics.domain import MetricSettings
from tests.browser.conftest import HEIGHT, SCREENSHOTS, WIDTH, Staff
from tests.factories import OrganizationWithKey

EVENING = dt.datetime(2026, 11, 28, 23, 40, tzinfo=dt.UTC)
WIDTHS = (1280, 390)


def event(client: APIClient, when: dt.datetime, user: str, tz: str, value: int = 1) -> None:
    with time_machine.travel(when, tick=False):
        response = client.post(
            "/v1/metrics/words/event",
            {"user": {"id": user, "tz": tz}, "value": value},
            format="json",
        )
    assert response.status_code == 201, response.content


def activity(org: OrganizationWithKey) -> None:
    """Two weeks of writing by users on both sides of the date line, busier this week."""
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    for days_ago in range(13, -1, -1):
        day = EVENING - dt.timedelta(days=days_ago)
        for hour in (5, 12, 23) if days_ago < 7 else (5,):
            event(client, day.replace(hour=hour, minute=10), "kiri", "Pacific/Kiritimati", 30)
        for hour in (7, 8) if days_ago < 7 else (8,):
            event(client, day.replace(hour=hour, minute=30), "la", "America/Los_Angeles", 20)
    event(client, EVENING - dt.timedelta(minutes=5), "newbie", "Europe/Paris", 5)


def shots(staff: Staff, name: str) -> list[Path]:
    """The page at each width in WIDTHS, full height, and whether it scrolls sideways."""
    driver = staff.driver
    taken = []
    for width in WIDTHS:
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": width < 500},
        )
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {
                "width": width,
                "height": min(int(height), 6000),
                "deviceScaleFactor": 1,
                "mobile": width < 500,
            },
        )
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{staff.test_name}-{name}-{width}.png"
        driver.save_screenshot(str(path))
        assert staff.no_horizontal_scroll(), f"{name} scrolls sideways at {width} px"
        taken.append(path)
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.set_window_size(WIDTH, HEIGHT)
    return taken


def test_today_and_ranges_in_the_reporting_zone(staff: Staff, server: Any) -> None:
    org = OrganizationWithKey("Acme")
    metric_create(
        org.tenant,
        MetricSettings(name="Words", key="words", unit_type="number", units="words"),
    )
    activity(org)

    with time_machine.travel(EVENING, tick=True):
        staff.go("/dashboard/")
        today = staff.text("#home-numbers")
        assert "Today is Nov. 28, 2026 in the reporting zone UTC" in today
        assert "Nov. 28, 2026, 11:40 p.m. UTC" in today
        assert "already on a later date for users ahead of UTC" in today
        shots(staff, "home-utc")

        staff.go("/dashboard/analytics/?range=7d")
        staff.find("#chart-events")
        assert "Nov. 22, 2026 to Nov. 28, 2026" in staff.text("#analytics-range")
        shots(staff, "analytics-7d")

        # A custom range from the picker is in the URL, and back in the picker.
        staff.fill("start", "11/16/2026")
        staff.fill("end", "11/22/2026")
        staff.submit("#analytics-range-form input[type=submit]")
        assert "start=2026-11-16&end=2026-11-22" in staff.driver.current_url
        assert staff.field("start").get_attribute("value") == "2026-11-16"
        assert "Nov. 16, 2026 to Nov. 22, 2026" in staff.text("#analytics-range")
        assert "compared with Nov. 9, 2026 to Nov. 15, 2026" in staff.text("#analytics-range")
        csv_link = staff.find("#card-events .analytics-csv").get_attribute("href") or ""
        assert "start=2026-11-16&end=2026-11-22&format=csv&chart=events" in csv_link
        shots(staff, "analytics-custom")

    # The reporting zone set on the tenant's page moves "today" to Kiritimati's date.
    settings_update(org.tenant, reporting_tz="Pacific/Kiritimati")
    with time_machine.travel(EVENING, tick=True):
        staff.go("/dashboard/")
        assert "Today is Nov. 29, 2026 in the reporting zone Pacific/Kiritimati" in staff.text(
            "#home-numbers"
        )
        assert "Nov. 29, 2026, 1:40 p.m. +14" in staff.text("#home-numbers")
        shots(staff, "home-kiritimati")
