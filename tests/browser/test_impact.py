"""The Impact Score card of the analytics page, in the browser: the overall difference with its
interval, the not-significant flag and line, the chart of each cohort week's interval (drawn by
charts.js), the per-metric table, at 1280 px and 390 px without sideways scrolling (screenshots
under BROWSER_SCREENSHOTS)."""

import datetime as dt
from decimal import Decimal
from typing import Any

import time_machine

from apps.metrics.configuration import metric_create
from apps.metrics.domain import MetricSettings
from apps.metrics.models import Metric, MetricDailyChange
from apps.users.models import EndUser
from tests.browser.conftest import HEIGHT, SCREENSHOTS, WIDTH, Staff
from tests.browser.test_analytics_time import shots
from tests.factories import EndUserFactory, OrganizationWithKey

NOW = dt.datetime(2024, 4, 15, 12, tzinfo=dt.UTC)


def cohort(metric: Metric, created: str, days: list[str | None], control: bool = False) -> None:
    """One user created at noon UTC on `created` per entry, active that day (None: never)."""
    moment = dt.datetime.combine(dt.date.fromisoformat(created), dt.time(12), dt.UTC)
    for day in days:
        user = EndUserFactory(tenant=metric.tenant, control=control)
        EndUser.objects.filter(pk=user.pk).update(created=moment)
        if day is not None:
            MetricDailyChange.objects.create(
                tenant=metric.tenant,
                user=user,
                metric=metric,
                date=dt.date.fromisoformat(day),
                events=1,
                change=Decimal(1),
            )


def card_shots(staff: Staff, name: str) -> None:
    """The card alone at each width, beside the whole pages `shots` takes."""
    driver = staff.driver
    for width in (1280, 390):
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": width < 500},
        )
        card = staff.find("#card-impact")
        driver.execute_script("arguments[0].scrollIntoView()", card)
        card.screenshot(str(SCREENSHOTS / f"{staff.test_name}-{name}-card-{width}.png"))
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.set_window_size(WIDTH, HEIGHT)


def test_the_impact_score_card(staff: Staff, server: Any) -> None:
    org = OrganizationWithKey("Acme")
    words = metric_create(
        org.tenant, MetricSettings(name="Words", key="words", unit_type="number", units="words")
    )
    lessons = metric_create(
        org.tenant, MetricSettings(name="Lessons", key="lessons", unit_type="number", units="")
    )
    # Three cohort weeks: a clear gain (18/20 against 4/20), a small one (11/20 against 9/20)
    # and a week whose control group is too small (6/8 against 1/3).
    cohort(words, "2024-02-26", ["2024-03-06"] * 18 + [None] * 2)
    cohort(words, "2024-02-27", ["2024-03-08"] * 4 + [None] * 16, control=True)
    cohort(lessons, "2024-03-04", ["2024-03-14"] * 11 + [None] * 9)
    cohort(lessons, "2024-03-05", ["2024-03-15"] * 9 + [None] * 11, control=True)
    cohort(words, "2024-03-12", ["2024-03-22"] * 6 + [None] * 2)
    cohort(words, "2024-03-13", ["2024-03-23"] + [None] * 2, control=True)

    with time_machine.travel(NOW, tick=True):
        staff.go("/dashboard/analytics/")
        card = staff.find("#card-impact")
        staff.driver.execute_script("arguments[0].scrollIntoView()", card)
        text = card.text
        # Overall, any metric: 35/48 against 14/43.
        assert "+40.4" in staff.text("#impact-overall")
        assert "Treated: 72.9 % of 48; control: 32.6 % of 43" in staff.text("#impact-overall")
        assert "Not significant" not in staff.text("#impact-summary")
        assert "points higher than the control group" in staff.text("#impact-summary")
        # Per metric: words 24/48 against 5/43; lessons, 11/48 against 9/43, is not significant.
        rows = [row.text for row in staff.all("#impact-metrics tbody tr")]
        assert rows[0].startswith("Words")
        assert rows[1].startswith("Lessons")
        assert "not significant" not in rows[0].lower()
        assert "not significant" in rows[1].lower()
        assert "Per metric" in text
        # The chart: one interval per cohort week and one for all weeks, drawn by charts.js.
        drawn = staff.driver.execute_script(
            "var chart = Chart.getChart(document.getElementById('chart-impact'));"
            "return chart ? [chart.data.labels.length, chart.data.datasets[1].data] : null;"
        )
        assert drawn is not None
        labels, intervals = drawn
        assert labels == 13  # the 12 default cohort weeks and "All weeks"
        # Weeks of 14 January to 31 March: intervals for the three of 25 February to 10 March.
        assert [bar is not None for bar in intervals] == [False] * 6 + [True] * 3 + [False] * 3 + [
            True
        ]
        shots(staff, "impact")
        card_shots(staff, "impact")

        # A tenant whose control group is empty says so in words, with the flag.
        staff.go("/dashboard/analytics/")
        EndUser.objects.filter(tenant=org.tenant, control=True).update(control=False)
        staff.go("/dashboard/analytics/")
        summary = staff.text("#impact-summary")
        assert summary.startswith("Not significant Not yet significant: no control-group user")
        shots(staff, "impact-no-control")
        card_shots(staff, "impact-no-control")
