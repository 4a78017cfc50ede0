"""The dashboard's theme and display rules: the internals under a "System" section that only
superusers see, names before keys in titles, pickers and the tenant switcher, and every moment
written with its zone, in the tenant's reporting zone and the formats of the staff member's
locale (the browser's Accept-Language)."""

import datetime as dt
import re
from typing import Any

from django.contrib.auth.models import Permission
from django.test import Client

from apps.accounts.models import Tenant
from apps.metrics.models import Metric, MetricEvent
from apps.points import configuration
from apps.points.domain import PointsSystemSettings
from tests.dashboard.conftest import admin_url, org_staff, record_events
from tests.factories import EndUserFactory

INTERNALS = ("/dashboard/auth/group/", "/dashboard/axes/accessattempt/")
STATE = ("/dashboard/streaks/streakstate/", "/dashboard/points/pointstotal/")


def sidebar(response: Any) -> str:
    content = response.content.decode()
    return content.split('id="nav-sidebar"')[1].split('id="main"')[0]


def test_superusers_find_the_internals_under_system(staff_client: Client, tenant: Tenant) -> None:
    response = staff_client.get("/dashboard/")
    nav = sidebar(response)
    heading = re.search(r"<h2[^>]*>\s*System\b", nav)
    assert heading is not None
    features, system = nav[: heading.start()], nav[heading.start() :]
    for url in (*INTERNALS, *STATE):
        assert url in system, url
        assert url not in features, url
    # The features come first, in the order staff come for them.
    assert features.index("/dashboard/analytics/") < features.index("/dashboard/users/enduser/")
    assert features.index("/dashboard/users/enduser/") < features.index("/dashboard/metrics/")


def test_other_staff_see_no_system_section(org: Any, tenant: Tenant) -> None:
    member = org_staff(org, username="member")
    for codename in ("view_streakstate", "view_pointstotal", "view_metric", "view_group"):
        member.user_permissions.add(Permission.objects.get(codename=codename))
    client = Client()
    client.force_login(member)
    response = client.get("/dashboard/")
    nav = sidebar(response)
    assert "/dashboard/metrics/metric/" in nav
    assert re.search(r"<h2[^>]*>\s*System\b", nav) is None
    for url in (*INTERNALS, *STATE):
        assert url not in response.content.decode(), url
    # The pages themselves keep their permissions: support may still open the streak states.
    assert client.get(STATE[0]).status_code == 200


def test_the_switcher_and_titles_name_things_by_name_then_key(
    staff_client: Client, tenant: Tenant, other_tenant: Tenant, metric: Metric
) -> None:
    page = staff_client.get("/dashboard/").content.decode()
    assert f">{tenant.name} · {tenant.environment} / default tenant</option>" in page
    assert f">{other_tenant.name} · {other_tenant.environment} / customer-b</option>" in page
    change = staff_client.get(admin_url(Metric, "change", metric.pk)).content.decode()
    assert f"{metric.name} ({metric.key})" in change
    # A points trigger's metric picker: the name, then the key.
    system, _ = configuration.points_system_create(
        tenant, PointsSystemSettings(key="xp", name="XP")
    )
    form = staff_client.get(admin_url(type(system), "change", system.pk)).content.decode()
    assert f">{metric.name} ({metric.key})</option>" in form


def events_page(client: Client, **headers: Any) -> str:
    return client.get(admin_url(MetricEvent), **headers).content.decode()


def test_moments_carry_the_reporting_zone_in_the_staff_members_formats(
    staff_client: Client, tenant: Tenant, metric: Metric
) -> None:
    tenant.reporting_tz = "Europe/Paris"
    tenant.save(update_fields=["reporting_tz"])
    user = EndUserFactory(tenant=tenant, external_id="alice")
    record_events(tenant, user, metric, 1, start=dt.datetime(2026, 1, 15, 12, 0, tzinfo=dt.UTC))

    # No Accept-Language: the server's language (en-us).
    assert "Jan. 15, 2026, 1 p.m. CET" in events_page(staff_client)
    assert "15 Jan 2026, 1 p.m. CET" in events_page(staff_client, HTTP_ACCEPT_LANGUAGE="en-GB")
    german = events_page(staff_client, HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9")
    assert "15. Januar 2026 13:00 CET" in german
    # Only the formats: the dashboard's words stay English.
    assert "Metric events" in german
    # The end-user page says the same, in the same format.
    page = staff_client.get(admin_url(type(user), "change", user.pk)).content.decode()
    assert "Jan. 15, 2026, 1 p.m. CET" in page


def test_the_api_is_not_localized(api_client: Any, metric: Metric) -> None:
    response = api_client.get("/admin/v1/metrics", HTTP_ACCEPT_LANGUAGE="de")
    assert response.status_code == 200
    assert "Accept-Language" not in response.get("Vary", "")
