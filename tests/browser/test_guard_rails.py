"""The guard rails in the browser (issue 27): a staff member opens the delete confirmation of a
metric users have data in, reads what they would lose, is refused for a mistyped key and deletes
it by typing the key; the points system's archive confirmation offers to deactivate the live
leaderboard that ranks by it. Users' data comes from the official SDK, which also sees the admin
API's side: the same delete is an issue in the envelope until `confirm` names the key.
Screenshots at 1280 px and 390 px (conftest.py's SCREENSHOTS)."""

from typing import Any

from trophy import UpsertedUser

from apps.achievements.configuration import achievement_create
from apps.achievements.domain import AchievementSettings
from apps.leaderboards.configuration import leaderboard_create
from apps.leaderboards.domain import LeaderboardSettings
from apps.leaderboards.models import Leaderboard
from apps.metrics.configuration import metric_create
from apps.metrics.domain import MetricSettings
from apps.metrics.models import Metric, MetricEvent
from apps.points.configuration import points_system_create, points_trigger_create
from apps.points.domain import PointsSystemSettings, PointsTriggerSettings
from apps.points.models import PointsSystem
from tests.browser.conftest import HEIGHT, SCREENSHOTS, WIDTH, Staff
from tests.factories import OrganizationWithKey

WRITERS = [("alice", 40), ("bob", 25), ("chloe", 12), ("dan", 7)]


def shot_at(staff: Staff, name: str, width: int) -> None:
    """A full-page screenshot at `width` px (the page's own width, the browser's bars aside),
    checked for horizontal scrolling first."""
    driver = staff.driver
    driver.set_window_size(width, HEIGHT)
    inner = driver.execute_script("return window.innerWidth")
    driver.set_window_size(width + (width - int(inner)), HEIGHT)
    assert staff.no_horizontal_scroll(), f"{name} scrolls sideways at {width} px"
    height, bars = driver.execute_script(
        "return [document.documentElement.scrollHeight, window.outerHeight - window.innerHeight]"
    )
    driver.set_window_size(width + (width - int(inner)), max(HEIGHT, int(height) + int(bars)))
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{staff.test_name}-{len(staff.shots) + 1:02d}-{name}-{width}.png"
    driver.save_screenshot(str(path))
    staff.shots.append(path)
    driver.set_window_size(WIDTH, HEIGHT)


def test_deleting_a_metric_with_user_data_is_confirmed_by_its_key(
    staff: Staff, make_client: Any
) -> None:
    org = OrganizationWithKey("Acme")
    tenant = org.tenant
    words = metric_create(tenant, MetricSettings(name="Words written", key="words"))
    achievement_create(
        tenant,
        AchievementSettings(
            name="Week warrior",
            trigger="metric",
            metric_id=str(words.public_id),
            metric_value=10,
            status="active",
        ),
    )
    leaderboard_create(
        tenant,
        LeaderboardSettings(
            name="Weekly words",
            key="weekly-words",
            rank_by="metric",
            metric_id=str(words.public_id),
            status="active",
        ),
    )
    coins, _ = points_system_create(tenant, PointsSystemSettings(key="coins", name="Coins"))
    points_trigger_create(
        tenant,
        coins,
        PointsTriggerSettings(
            type="metric",
            points=5,
            metric_id=str(words.public_id),
            metric_threshold=1,
            status="active",
        ),
    )
    leaderboard_create(
        tenant,
        LeaderboardSettings(
            name="Weekly coins",
            key="weekly-coins",
            rank_by="points",
            points_system_id=str(coins.public_id),
            status="active",
        ),
    )
    client = make_client(org.admin_key)
    for user, count in WRITERS:
        client.metrics.event(key="words", user=UpsertedUser(id=user, tz="UTC"), value=count)

    # The admin API through the SDK: an issue in the envelope, nothing deleted, until confirmed.
    response = client.admin.metrics.delete(ids=[str(words.public_id)])
    assert response.deleted == []
    [issue] = response.issues
    assert "3 users lose the achievement Week warrior" in issue.message

    # The dashboard: the losses in words, and the key to type.
    staff.go(f"/dashboard/metrics/metric/{words.pk}/delete/")
    guard = staff.text(".deletion-guard")
    assert "What users lose with metric Words written" in guard
    for loss in (
        "4 events of 4 users are deleted",
        "3 users lose the achievement Week warrior",
        "The live leaderboard Weekly words is deleted, with the rankings of 4 users",
        "1 trigger of the points system Coins is deleted",
    ):
        assert loss in guard
    shot_at(staff, "metric-delete", 1280)
    shot_at(staff, "metric-delete", 390)

    staff.fill(f"confirm-{words.pk}", "Words written")
    staff.submit("input.deletion-button")
    assert "The key you typed does not match: nothing was deleted." in staff.errors()
    assert MetricEvent.objects.count() == 4
    shot_at(staff, "metric-delete-mistyped", 390)

    # Archiving Coins would leave Weekly coins live: the page offers to deactivate it.
    staff.go(f"/dashboard/points/pointssystem/{coins.pk}/delete/")
    assert "The active leaderboard Weekly coins ranks by it" in staff.text(".deletion-dependants")
    shot_at(staff, "points-archive", 1280)
    shot_at(staff, "points-archive", 390)
    staff.fill(f"confirm-{coins.pk}", "coins")
    staff.check("deactivate_dependants")
    staff.submit("input.deletion-button")
    assert PointsSystem.objects.get().status == "archived"
    assert Leaderboard.objects.get(key="weekly-coins").status == "inactive"

    staff.go(f"/dashboard/metrics/metric/{words.pk}/delete/")
    staff.fill(f"confirm-{words.pk}", "words")
    staff.submit("input.deletion-button")
    assert any("was deleted successfully" in m for m in staff.messages()), staff.messages()
    assert not Metric.objects.exists()
