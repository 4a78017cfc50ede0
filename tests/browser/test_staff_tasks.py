"""The main staff tasks end to end, in the browser: configure a metric, a streak, a points
system with a trigger and levels, an achievement and a leaderboard; send events through the API
with the official SDK; find the results on the user page, the live leaderboard and the
analytics page. Screenshots of each step are saved (see conftest.py)."""

from typing import Any

from django.utils import timezone
from trophy import UpsertedUser

from apps.achievements.models import Achievement
from apps.leaderboards.models import Leaderboard
from apps.metrics.models import Metric
from apps.points.models import PointsLevel, PointsSystem, PointsTrigger
from apps.streaks.models import StreakSettings
from tests.browser.conftest import Staff
from tests.factories import OrganizationWithKey


def saved(staff: Staff) -> None:
    assert not staff.errors(), staff.errors()
    assert staff.all("ul.messagelist li.success"), staff.messages()


def test_a_new_staff_member_configures_everything_and_sees_the_results(
    staff: Staff, make_client: Any
) -> None:
    org = OrganizationWithKey("Acme")
    today = timezone.localdate()

    # A metric.
    staff.go("/dashboard/metrics/metric/add/")
    staff.fill("key", "words")
    staff.fill("name", "Words written")
    staff.fill("units", "words")
    staff.shot("metric-form")
    staff.submit()
    saved(staff)
    assert Metric.objects.get(key="words").units == "words"

    # A daily streak on that metric.
    staff.go("/dashboard/streaks/streaksettings/add/")
    staff.pick("frequency", "daily")
    staff.click("[data-add-row]")
    staff.pick("conditions-metric", "words")
    staff.fill("conditions-threshold", "1")
    staff.shot("streak-form")
    staff.submit()
    saved(staff)
    assert StreakSettings.objects.get(tenant=org.tenant).frequency == "daily"

    # A points system, then its trigger and levels on its page.
    staff.go("/dashboard/points/pointssystem/add/")
    staff.fill("name", "Experience")
    staff.fill("key", "xp")
    staff.submit('input[name="_continue"]')
    saved(staff)
    staff.click("#triggers-group .add-row a")
    staff.pick("triggers-0-type", "metric")
    staff.pick("triggers-0-metric_id", "words")
    staff.fill("triggers-0-metric_threshold", "100")
    staff.fill("triggers-0-points", "10")
    staff.pick("triggers-0-status", "active")
    for row, (name, key, points) in enumerate([("Bronze", "bronze", 20), ("Silver", "silver", 50)]):
        staff.click("#levels-group .add-row a")
        staff.fill(f"levels-{row}-name", name)
        staff.fill(f"levels-{row}-key", key)
        staff.fill(f"levels-{row}-points", str(points))
    staff.shot("points-system")
    staff.submit()
    assert not staff.errors(), staff.errors()
    system = PointsSystem.objects.get(key="xp")
    assert PointsTrigger.objects.get(system=system).status == "active"
    assert PointsLevel.objects.filter(system=system).count() == 2

    # An achievement for 500 words.
    staff.go("/dashboard/achievements/achievement/add/")
    staff.pick("trigger", "metric")
    staff.fill("name", "Novelist")
    staff.pick("metric_id", "Words written")
    staff.fill("metric_value", "500")
    staff.pick("status", "active")
    staff.shot("achievement-form")
    staff.submit()
    saved(staff)
    assert Achievement.objects.get(name="Novelist").status == "active"

    # A leaderboard of words written.
    staff.go("/dashboard/leaderboards/leaderboard/add/")
    staff.fill("name", "Top writers")
    staff.fill("key", "top-writers")
    staff.pick("rank_by", "metric")
    staff.pick("metric", "Words written")
    staff.pick("status", "active")
    staff.fill("start", today.isoformat())
    staff.fill("max_participants", "100")
    staff.shot("leaderboard-form")
    staff.submit()
    saved(staff)
    board = Leaderboard.objects.get(key="top-writers")

    # The customer's backend sends events with the official SDK.
    client = make_client(org.admin_key)
    for user, name, values in (("alice", "Alice Moreau", [200, 200, 200]), ("bob", "Bob", [150])):
        for value in values:
            client.metrics.event(
                key="words", user=UpsertedUser(id=user, name=name, tz="UTC"), value=value
            )

    # The live leaderboard.
    staff.go(f"/dashboard/leaderboards/leaderboard/{board.pk}/rankings/")
    rows = [row.text for row in staff.all("table.lb-table tbody tr")]
    assert len(rows) == 2, rows
    assert "alice" in rows[0], rows
    assert "600 words" in rows[0], rows
    assert "bob" in rows[1], rows
    assert "150 words" in rows[1], rows
    assert staff.no_horizontal_scroll()
    staff.shot("live-leaderboard")

    # The user, found by name, with everything that happened to them.
    staff.go("/dashboard/")
    staff.fill("q", "Moreau")
    staff.submit('#home-user-search input[type="submit"]')
    staff.click("#result_list tbody tr a")
    page = staff.text("#content")
    for expected in ("alice", "Words written", "600", "Novelist", "Experience", "Top writers"):
        assert expected in page, expected
    assert staff.no_horizontal_scroll()
    staff.shot("user-page")

    # Analytics: the events and active users appear in the charts' data.
    staff.go("/dashboard/analytics/?range=7d")
    assert staff.all("canvas")
    staff.driver.execute_script("window.scrollTo(0, 0)")
    data = staff.driver.page_source
    assert today.isoformat() in data
    assert staff.no_horizontal_scroll()
    staff.shot("analytics")

    # The home page counts them.
    staff.go("/dashboard/")
    numbers = staff.text("#home-numbers")
    assert "2\nusers" in numbers, numbers
    assert "4\nevents today" in numbers, numbers
    staff.shot("home")
