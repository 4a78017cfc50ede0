"""The analytics page's range in the URL (presets and ?start=&end=), each total beside the
previous period of the same length, and every chart's data as CSV."""

import csv
import datetime as dt
import io
import re
from typing import Any

import pytest
import time_machine
from django.test import Client

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from apps.analytics.chart_csv import CHARTS
from apps.metrics.models import Metric
from apps.points.models import PointsLevel, PointsSystem
from tests.analytics.test_dashboard import TODAY, URL, active, embedded, page
from tests.factories import EndUserFactory, bump


def rows(response: Any) -> list[list[str]]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.reader(io.StringIO(response.content.decode())))


def test_a_custom_range_is_kept_in_the_url(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    active(tenant, metric, "2024-02-01", events=3)
    active(tenant, metric, "2024-02-05", events=4)

    response = page(staff_client, start="2024-02-01", end="2024-02-07")

    data = embedded(response)
    assert data["range"] == {
        "name": "custom",
        "start": "2024-02-01",
        "end": "2024-02-07",
        "days": 7,
    }
    assert [day["events"] for day in data["events"]["days"]] == [3, 0, 0, 0, 4, 0, 0]
    html = response.content.decode()
    # The picker shows the range it was given, so submitting it again asks for the same one.
    assert 'name="start" value="2024-02-01"' in html
    assert 'name="end" value="2024-02-07"' in html
    assert "Feb. 1, 2024 to Feb. 7, 2024" in html
    assert "compared with Jan. 25, 2024 to Jan. 31, 2024" in html
    # No preset is marked current, and the CSV links carry the range.
    assert 'class="current"' not in html
    assert "?start=2024-02-01&amp;end=2024-02-07&amp;format=csv&amp;chart=events" in html


def test_start_alone_runs_to_today_and_presets_stay_named(
    staff_client: Client, tenant: Tenant
) -> None:
    data = embedded(page(staff_client, start="2024-03-01"))
    assert (data["range"]["start"], data["range"]["end"]) == ("2024-03-01", "2024-03-10")
    html = page(staff_client, range="7d").content.decode()
    assert "?range=7d&amp;format=csv&amp;chart=events" in html


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"start": "2024-03-05", "end": "2024-03-01"}, "start must not be after end"),
        ({"start": "2020-01-01", "end": "2024-03-01"}, "start to end may span at most 1096 days"),
        ({"start": "yesterday"}, "start must be a date (YYYY-MM-DD)"),
        ({"end": "2024-03-01"}, "start is required with end (YYYY-MM-DD)"),
    ],
)
def test_a_refused_range_says_why_and_shows_the_default(
    staff_client: Client, tenant: Tenant, params: dict[str, str], reason: str
) -> None:
    response = page(staff_client, **params)

    assert response.status_code == 200
    assert embedded(response)["range"]["days"] == 30
    html = response.content.decode()
    assert f'id="analytics-range-error">{reason}; showing the last 30 days instead.' in html


def summary(html: str, key: str) -> tuple[int, str]:
    found = re.search(
        rf'id="summary-{key}"><div class="dash-value">(\d+)</div>.*?'
        r'class="analytics-change analytics-change-(\w+)"',
        html,
        re.S,
    )
    assert found, key
    return int(found.group(1)), found.group(2)


def test_each_total_is_compared_with_the_previous_period(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    # The 7 days to 10 Mar against the 7 days before (26 Feb to 3 Mar).
    active(tenant, metric, "2024-02-26", events=2)
    active(tenant, metric, "2024-03-03", events=2)
    active(tenant, metric, "2024-03-04", events=5)
    active(tenant, metric, "2024-02-25", events=100)  # before both

    html = page(staff_client, range="7d").content.decode()

    assert summary(html, "events") == (5, "up")
    assert summary(html, "active-users") == (1, "down")
    assert "+25%" in html  # 5 events against 4
    assert "vs 4" in html
    assert "compared with Feb. 26, 2024 to March 3, 2024" in html


def test_every_chart_has_a_csv_link_that_answers_csv(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    system = PointsSystem.objects.create(tenant=tenant, key="xp", name="Experience")
    PointsLevel.objects.create(system=system, key="gold", name="Gold tier", points=100)
    Achievement.objects.create(
        tenant=tenant, name="=First words", trigger="api", key="fw", status="active"
    )
    bump(tenant)
    active(tenant, metric, "2024-03-09", events=4)

    html = page(staff_client, range="7d").content.decode()
    links = re.findall(r'class="analytics-csv" href="([^"]+)"', html)

    assert {re.search(r"chart=([\w-]+)", link).group(1) for link in links} == set(CHARTS)
    for link in links:
        with time_machine.travel(TODAY, tick=False):
            response = staff_client.get(URL + link.replace("&amp;", "&"))
        assert len(rows(response)) >= 1
        assert response["Content-Disposition"].endswith('-2024-03-04-to-2024-03-10.csv"')


def test_csv_content(staff_client: Client, tenant: Tenant, metric: Metric) -> None:
    active(tenant, metric, "2024-03-09", events=4)
    active(tenant, metric, "2024-03-10", events=2)
    Achievement.objects.create(
        tenant=tenant, name="=HYPERLINK()", trigger="api", key="fw", status="active"
    )
    bump(tenant)
    EndUserFactory(tenant=tenant)

    def chart(name: str, **params: str) -> list[list[str]]:
        return rows(page(staff_client, format="csv", chart=name, **params))

    assert chart("events", start="2024-03-08", end="2024-03-10") == [
        ["date", "metric_key", "metric_name", "events", "sum_of_values"],
        ["2024-03-08", "words", "Words", "0", "0.0"],
        ["2024-03-09", "words", "Words", "4", "4.0"],
        ["2024-03-10", "words", "Words", "2", "2.0"],
    ]
    assert chart("active-users", range="7d")[-2:] == [
        ["2024-03-09", "1", "1"],
        ["2024-03-10", "1", "2"],
    ]
    assert chart("new-users", start="2024-03-10", end="2024-03-10") == [
        ["date", "new_users"],
        ["2024-03-10", "0"],  # the factories' users are created on the real date
    ]
    # A name a spreadsheet would run as a formula is written as text.
    assert chart("rarity")[1][:2] == ["fw", "'=HYPERLINK()"]
    assert chart("streak-lengths")[0] == ["length", "min", "max", "users"]


def test_an_unknown_chart_is_404(staff_client: Client, tenant: Tenant) -> None:
    assert page(staff_client, format="csv", chart="nope").status_code == 404


def test_the_previous_period_has_the_same_length() -> None:
    from apps.analytics.selectors import DateRange

    period = DateRange(dt.date(2024, 3, 1), dt.date(2024, 3, 10))
    assert period.previous() == DateRange(dt.date(2024, 2, 20), dt.date(2024, 2, 29))
