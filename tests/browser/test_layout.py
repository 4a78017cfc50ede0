"""The dashboard's theme in the browser, at a laptop's width (1280 px) and a phone's (390 px):
the end-user page, the analytics page, a leaderboard's live rankings and the configuration
forms fit the screen (the page never scrolls sideways), their tables become cards on the phone,
the sidebar puts the internals under "System", and the tenant switcher names tenants by name.
Screenshots of each page at both widths are saved (conftest.py)."""

from apps.leaderboards.configuration import leaderboard_create
from apps.leaderboards.domain import LeaderboardSettings
from apps.leaderboards.models import Leaderboard
from apps.leagues.models import League
from apps.metrics.models import Metric
from apps.points.models import PointsSystem
from apps.users.models import EndUser
from tests.browser.conftest import Staff
from tests.browser.test_support_views import WIDTHS, page_fits, shot_at, world
from tests.leagues.support import metric_league

PHONE = 390


def table_display(staff: Staff, css: str) -> str:
    """How the first table matching `css` is laid out at a phone's width."""
    staff.driver.set_window_size(PHONE, 900)
    shown = staff.driver.execute_script(
        "var t = document.querySelector(arguments[0]);"
        " return t ? getComputedStyle(t).display : 'missing';",
        css,
    )
    return str(shown)


def test_pages_fit_a_phone_and_their_tables_become_cards(staff: Staff) -> None:
    org, _client = world()
    tenant = org.tenant
    words = Metric.objects.get(tenant=tenant, key="words")
    board = leaderboard_create(
        tenant,
        LeaderboardSettings(
            name="Top writers",
            key="top-writers",
            rank_by="metric",
            metric_id=str(words.public_id),
            status="active",
        ),
    )
    league = metric_league(tenant, words)
    system = PointsSystem.objects.get(tenant=tenant, key="xp")
    alice = EndUser.objects.get(tenant=tenant, external_id="alice")

    staff.go("/dashboard/")
    # The switcher names the tenant by its name first, then where it is.
    switcher = staff.text("#tenant-switcher")
    assert f"{tenant.name} · Acme / Production / default tenant" in switcher, switcher

    pages = {
        "user-page": f"/dashboard/users/enduser/{alice.pk}/change/",
        "analytics": "/dashboard/analytics/",
        "live-rankings": f"/dashboard/leaderboards/leaderboard/{board.pk}/rankings/",
        "metric-form": "/dashboard/metrics/metric/add/",
        "points-form": f"/dashboard/points/pointssystem/{system.pk}/change/",
        "league-form": f"/dashboard/leagues/league/{league.pk}/change/",
        "end-users": "/dashboard/users/enduser/",
    }
    for name, path in pages.items():
        staff.go(path)
        staff.find("#content")
        for width in WIDTHS:
            assert page_fits(staff, width), (name, width)
            shot_at(staff, name, width)

    # Chart.js sizes a canvas in pixels and re-fits it a frame after the window narrows: a
    # canvas still at its wider size keeps to its box and never pushes the page sideways.
    staff.go(pages["analytics"])
    staff.find("#chart-impact")
    staff.driver.set_window_size(1280, 900)
    staff.driver.execute_script(
        "document.querySelectorAll('#content canvas').forEach(c => { c.style.width = '2000px'; })"
    )
    assert staff.no_horizontal_scroll()

    # The user page's tables (points, latest events) are cards on a phone, tables on a laptop.
    staff.go(pages["user-page"])
    staff.find("table.dash-cards-table")
    assert table_display(staff, "#content-main table.dash-cards-table") == "block"
    staff.driver.set_window_size(1280, 900)
    shown = staff.driver.execute_script(
        "return getComputedStyle(document.querySelector('#content-main table')).display"
    )
    assert shown == "table"
    # A table swapped in later (the live rankings' refresh) becomes a card too.
    staff.driver.execute_script(
        "document.getElementById('content').insertAdjacentHTML('beforeend',"
        ' \'<table id="swapped"><thead><tr><th>Rank</th></tr></thead>'
        "<tbody><tr><td>1</td></tr></tbody></table>')"
    )
    cell = staff.find("#swapped.dash-cards-table td[data-label='Rank']")
    assert cell.text == "1"
    # Every moment on it carries its zone.
    profile = staff.text("#user-profile")
    assert "UTC" in profile, profile
    # The league's pickers name the metric first, its key second.
    staff.go(pages["league-form"])
    labels = [o.text for o in staff.all('select[name="metric_id"] option')]
    assert "Words (words)" in labels, labels
    assert Leaderboard.objects.filter(pk=board.pk).exists()
    assert League.objects.filter(pk=league.pk).exists()


def test_the_sidebar_keeps_the_internals_under_system_for_superusers(staff: Staff) -> None:
    world()
    staff.go("/dashboard/")
    sidebar = staff.find("#nav-sidebar")
    headings = [
        " ".join(h.get_attribute("textContent").split()).removesuffix(" chevron_right")
        for h in staff.all("#nav-sidebar h2")
    ]
    assert headings[:3] == ["Analytics", "Users", "Metrics"], headings
    assert headings[-1] == "System", headings
    links = {
        a.get_attribute("href").split("/dashboard/")[1]: a.get_attribute("textContent").strip()
        for a in sidebar.find_elements("css selector", "a[href*='/dashboard/']")
    }
    for internal in ("auth/group/", "axes/accessattempt/", "streaks/streakstate/"):
        assert internal in links, (internal, links)
    assert "points/pointstotal/" in links
    # Each internal is listed once, under System, not beside the features.
    system = staff.all("#nav-sidebar h2")[-1].find_element("xpath", "..")
    inside = system.get_attribute("innerHTML")
    for internal in ("auth/group/", "axes/accessattempt/", "streaks/streakstate/"):
        assert internal in inside, internal
    for width in WIDTHS:
        shot_at(staff, "home", width)
