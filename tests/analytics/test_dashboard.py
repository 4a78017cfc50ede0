"""The dashboard's analytics page: staff only, the selected tenant's series embedded for the
charts, the vendored Chart.js served as a static file."""

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from apps.metrics.models import Metric, MetricDailyChange
from apps.points.models import PointsLevel, PointsSystem
from tests.dashboard.conftest import switch_tenant
from tests.factories import EndUserFactory, MetricFactory, OrganizationWithKey, bump

TODAY = dt.datetime(2024, 3, 10, 12, tzinfo=dt.UTC)
URL = "/dashboard/analytics/"


def active(tenant: Tenant, metric: Metric, day: str, events: int = 1) -> None:
    MetricDailyChange.objects.create(
        tenant=tenant,
        user=EndUserFactory(tenant=tenant),
        metric=metric,
        date=dt.date.fromisoformat(day),
        events=events,
        change=events,
    )


def page(client: Client, **params: Any) -> Any:
    with time_machine.travel(TODAY, tick=False):
        return client.get(URL, params)


def embedded(response: Any) -> dict[str, Any]:
    html = response.content.decode()
    start = html.index('<script id="analytics-data" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start : html.index("</script>", start)])


def test_the_page_is_the_admin_analytics_url() -> None:
    assert reverse("admin:analytics") == URL


def test_staff_see_charts_of_the_selected_tenant(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    active(tenant, metric, "2024-03-09", events=4)
    active(tenant, metric, "2024-03-10", events=2)

    response = page(staff_client)

    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/analytics/vendor/chartjs/chart.umd.min.js" in html
    assert "/static/analytics/charts.js" in html
    for canvas in (
        "chart-active-users",
        "chart-new-users",
        "chart-events",
        "chart-metric-totals",
        "chart-retention",
        "chart-streak-lengths",
        "chart-streak-activity",
        "chart-achievements",
        "chart-leaderboards",
    ):
        assert f'id="{canvas}"' in html
    data = embedded(response)
    assert data["range"] == {"name": "30d", "start": "2024-02-10", "end": "2024-03-10", "days": 30}
    assert data["activeUsers"]["days"][-1] == {"date": "2024-03-10", "dau": 1, "mau": 2}
    assert [m["events"] for m in data["events"]["metrics"]] == [6]
    assert set(data) >= {"newUsers", "retention", "streaks", "points", "achievements"}
    # The range selector marks the current range.
    assert '<a href="?range=30d" class="current" aria-current="page">30 days</a>' in html


@pytest.mark.parametrize(
    ("chosen", "name", "days"), [("7d", "7d", 7), ("90d", "90d", 90), ("x", "30d", 30)]
)
def test_the_range_selector_picks_the_days(
    staff_client: Client, tenant: Tenant, chosen: str, name: str, days: int
) -> None:
    data = embedded(page(staff_client, range=chosen))
    assert (data["range"]["name"], data["range"]["days"]) == (name, days)
    assert len(data["activeUsers"]["days"]) == days


def test_the_whole_range(staff_client: Client, tenant: Tenant, metric: Metric) -> None:
    active(tenant, metric, "2024-01-01")
    data = embedded(page(staff_client, range="all"))
    assert data["range"]["start"] == "2024-01-01"


def test_points_and_rarity_tables_are_shown(staff_client: Client, tenant: Tenant) -> None:
    system = PointsSystem.objects.create(tenant=tenant, key="xp", name="Experience")
    PointsLevel.objects.create(system=system, key="gold", name="Gold tier", points=100)
    Achievement.objects.create(
        tenant=tenant, name="First words", trigger="api", key="fw", status="active"
    )
    bump(tenant)
    EndUserFactory(tenant=tenant)

    html = page(staff_client).content.decode()

    assert "Points: Experience" in html
    assert 'class="chart-points"' in html
    assert "Gold tier" in html
    assert "First words" in html


def test_another_tenant_is_shown_once_selected(
    staff_client: Client, tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    active(tenant, metric, "2024-03-10", events=5)
    theirs = MetricFactory(tenant=other_tenant, key="steps")
    active(other_tenant, theirs, "2024-03-10", events=1)

    assert [m["key"] for m in embedded(page(staff_client))["events"]["metrics"]] == ["words"]
    switch_tenant(staff_client, other_tenant)
    data = embedded(page(staff_client))
    assert [m["key"] for m in data["events"]["metrics"]] == ["steps"]
    assert data["events"]["days"][-1]["events"] == 1


def test_staff_of_another_organization_never_see_this_tenant(
    tenant: Tenant, metric: Metric
) -> None:
    rival = OrganizationWithKey("Zenith")
    member = get_user_model().objects.create_user(username="rival", is_staff=True)
    rival.organization.staff.add(member)
    client = Client()
    client.force_login(member)
    active(tenant, metric, "2024-03-10", events=5)

    data = embedded(page(client))

    assert data["events"]["metrics"] == []
    assert data["activeUsers"]["days"][-1]["dau"] == 0


def test_staff_without_a_tenant_get_a_page_without_charts(db: Any) -> None:
    loner = get_user_model().objects.create_user(username="loner", is_staff=True)
    client = Client()
    client.force_login(loner)

    response = page(client)

    assert response.status_code == 200
    assert 'id="analytics-data"' not in response.content.decode()
    assert "No tenant to show" in response.content.decode()


def test_the_page_requires_a_staff_login(client: Client, tenant: Tenant) -> None:
    response = page(client)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))

    user = get_user_model().objects.create_user(username="customer", password="x")
    client.force_login(user)
    assert page(client).status_code == 302


def test_chart_js_is_vendored_with_its_license_and_version() -> None:
    found = finders.find("analytics/vendor/chartjs/chart.umd.min.js")
    assert found is not None
    folder = Path(found).parent
    version = (folder / "VERSION").read_text()
    assert "Chart.js 4." in version
    assert "MIT" in (folder / "LICENSE.md").read_text()
    assert Path(found).read_text()[:200].count("Chart.js v4.") == 1
