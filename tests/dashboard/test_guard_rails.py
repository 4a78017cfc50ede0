"""The dashboard's guard rails (issue 27, apps/core/guards.py): deleting what users have data
in asks for its key and says what they lose; a change that would leave a feature unusable is
refused with its reason, or deactivates the dependants in the same step when staff tick it. The
admin API's side of each rule is in tests/<app>/test_guard_rails.py."""

from typing import Any

import pytest
from django.test import Client

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement, AchievementCompletion
from apps.leaderboards.models import Leaderboard
from apps.leagues.models import League
from apps.metrics.models import Metric, MetricEvent
from apps.points.choices import SystemStatus
from apps.points.models import PointsSystem
from apps.streaks.models import StreakCondition, StreakSettings
from tests.dashboard.conftest import admin_url, message_texts
from tests.dashboard.test_streaks import settings_form
from tests.factories import event_body
from tests.guard_rails import (
    achievement_of,
    board_of,
    metric_of,
    points_league_of,
    streak_on,
    system_of,
)
from tests.leagues.support import metric_league

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_data(api_client: Any, tenant: Tenant) -> dict[str, Any]:
    """Words, counted by the achievement Week warrior and the live leaderboard Weekly words;
    two users sent three events."""
    words = metric_of(api_client, "words", "Words")
    warrior = achievement_of(api_client, words, "Week warrior")
    weekly = board_of(api_client, words, "Weekly words", "weekly-words")
    for user, value in (("u1", 1), ("u2", 2), ("u1", 3)):
        assert (
            api_client.post("/v1/metrics/words/event", event_body(user, value)).status_code == 201
        )
    return {"metric": words, "achievement": warrior, "board": weekly}


def test_deleting_a_metric_with_user_data_says_what_users_lose_and_asks_for_its_key(
    staff_client: Client, with_data: dict[str, Any]
) -> None:
    metric = with_data["metric"]
    url = admin_url(Metric, "delete", metric.pk)

    page = staff_client.get(url).content.decode()

    assert "What users lose with metric Words" in page
    for loss in (
        "3 events of 2 users are deleted",
        "2 users lose the achievement Week warrior",
        "The live leaderboard Weekly words is deleted, with the rankings of 2 users",
    ):
        assert loss in page
    assert f'name="confirm-{metric.pk}"' in page
    assert "type its key <code>words</code>" in page

    for typed in ("", "Words", "word"):
        response = staff_client.post(url, {"post": "yes", f"confirm-{metric.pk}": typed})
        assert response.status_code == 200
        assert "The key you typed does not match: nothing was deleted." in response.content.decode()
    assert MetricEvent.objects.count() == 3
    assert AchievementCompletion.objects.count() == 2

    response = staff_client.post(url, {"post": "yes", f"confirm-{metric.pk}": "words"})

    assert response.status_code == 302
    assert not Metric.objects.exists()
    assert not MetricEvent.objects.exists()
    assert not Achievement.objects.exists()
    assert not Leaderboard.objects.exists()


def test_a_metric_without_user_data_is_deleted_as_before(
    staff_client: Client, api_client: Any, tenant: Tenant
) -> None:
    metric = metric_of(api_client, "pages", "Pages")
    url = admin_url(Metric, "delete", metric.pk)

    page = staff_client.get(url).content.decode()

    assert "What users lose" not in page
    assert 'name="confirm-' not in page
    assert staff_client.post(url, {"post": "yes"}).status_code == 302
    assert not Metric.objects.exists()


def test_deleting_an_achievement_users_completed_asks_for_its_name_and_offers_locking(
    staff_client: Client, with_data: dict[str, Any]
) -> None:
    achievement = with_data["achievement"]
    url = admin_url(Achievement, "delete", achievement.pk)

    page = staff_client.get(url).content.decode()

    assert "2 users lose the achievement Week warrior" in page
    assert "type its name <code>Week warrior</code>" in page
    assert (
        f'<a href="{admin_url(Achievement, "change", achievement.pk)}#id_status">lock it</a>'
        in (page)
    )
    assert staff_client.post(url, {"post": "yes"}).status_code == 200
    assert AchievementCompletion.objects.count() == 2

    confirmed = {"post": "yes", f"confirm-{achievement.pk}": "Week warrior"}
    assert staff_client.post(url, confirmed).status_code == 302
    assert not Achievement.objects.exists()


def test_deleting_a_live_leaderboard_asks_for_its_key_and_offers_deactivating(
    staff_client: Client, with_data: dict[str, Any]
) -> None:
    board = with_data["board"]
    url = admin_url(Leaderboard, "delete", board.pk)

    page = staff_client.get(url).content.decode()

    assert "The live leaderboard Weekly words is deleted, with the rankings of 2 users" in page
    assert "deactivate it</a> (status Inactive)" in page
    assert staff_client.post(url, {"post": "yes"}).status_code == 200
    assert Leaderboard.objects.exists()

    confirmed = {"post": "yes", f"confirm-{board.pk}": "weekly-words"}
    assert staff_client.post(url, confirmed).status_code == 302
    assert not Leaderboard.objects.exists()


def test_deleting_selected_metrics_asks_for_the_key_of_each_with_user_data(
    staff_client: Client, api_client: Any, with_data: dict[str, Any]
) -> None:
    words, pages = with_data["metric"], metric_of(api_client, "pages", "Pages")
    selection = {"action": "delete_selected", "_selected_action": [words.pk, pages.pk]}

    page = staff_client.post(admin_url(Metric), selection).content.decode()

    assert f'name="confirm-{words.pk}"' in page
    assert f'name="confirm-{pages.pk}"' not in page
    response = staff_client.post(admin_url(Metric), {**selection, "post": "yes"})
    assert "A key you typed does not match: nothing was deleted." in response.content.decode()
    assert Metric.objects.count() == 2

    confirmed = {**selection, "post": "yes", f"confirm-{words.pk}": "words"}
    response = staff_client.post(admin_url(Metric), confirmed, follow=True)

    assert message_texts(response) == ["Successfully deleted 2 metrics."]
    assert not Metric.objects.exists()


def test_archiving_a_points_system_users_have_points_in_asks_for_its_key(
    staff_client: Client, api_client: Any, with_data: dict[str, Any]
) -> None:
    system = system_of(api_client, with_data["metric"], "coins", "Coins")
    assert api_client.post("/v1/metrics/words/event", event_body("u3", 1)).status_code == 201
    url = admin_url(PointsSystem, "delete", system.pk)

    page = staff_client.get(url).content.decode()

    assert "The Coins points of 1 user leave the APIs for good (the ledger is kept)" in page
    assert "To archive it anyway, type its key <code>coins</code>" in page
    assert staff_client.post(url, {"post": "yes"}).status_code == 200
    assert PointsSystem.objects.get().status == SystemStatus.ACTIVE

    assert (
        staff_client.post(url, {"post": "yes", f"confirm-{system.pk}": "coins"}).status_code == 302
    )
    assert PointsSystem.objects.get().status == SystemStatus.ARCHIVED


def test_the_streaks_only_condition_metric_cannot_be_deleted(
    staff_client: Client, api_client: Any, with_data: dict[str, Any]
) -> None:
    metric = with_data["metric"]
    streak_on(api_client, "words")
    assert api_client.post("/v1/metrics/words/event", event_body("u1", 1)).status_code == 201
    url = admin_url(Metric, "delete", metric.pk)

    page = staff_client.get(url)

    content = page.content.decode()
    assert page.context["title"] == "Cannot delete metric"
    assert "it is the streak&#x27;s only condition, and the streaks of 1 user could no longer" in (
        content
    )
    assert "add another metric to the streak settings first" in content
    assert 'class="deletion-button"' not in content
    response = staff_client.post(url, {"post": "yes", f"confirm-{metric.pk}": "words"}, follow=True)
    [message] = message_texts(response)
    assert message.startswith("The metric words cannot be deleted: it is the streak's only")
    assert Metric.objects.exists()


def test_the_last_streak_condition_cannot_be_removed_while_users_have_a_streak(
    staff_client: Client, api_client: Any, with_data: dict[str, Any]
) -> None:
    streak_on(api_client, "words")
    assert api_client.post("/v1/metrics/words/event", event_body("u1", 1)).status_code == 201
    url = admin_url(StreakSettings, "change", StreakSettings.objects.get().pk)

    response = staff_client.post(url, settings_form(conditions=[], freezes_enabled=None))

    assert response.status_code == 200
    assert response.context["form"].errors["conditions"] == [
        "1 user has a streak that nobody could extend without a condition; keep at least one metric"
    ]
    assert StreakCondition.objects.count() == 1


def test_archiving_a_system_a_live_leaderboard_ranks_by_is_refused_or_deactivates_it(
    staff_client: Client, api_client: Any, with_data: dict[str, Any], tenant: Tenant
) -> None:
    system = system_of(api_client, with_data["metric"], "coins", "Coins")
    board = board_of(api_client, None, "Weekly coins", "weekly-coins", system=system)
    url = admin_url(PointsSystem, "delete", system.pk)

    page = staff_client.get(url).content.decode()

    assert "The active leaderboard Weekly coins ranks by it" in page
    assert 'name="deactivate_dependants"' in page
    assert "the leaderboard Weekly coins is deactivated (its rankings are kept)" in page
    response = staff_client.post(url, {"post": "yes"}, follow=True)
    [message] = message_texts(response)
    assert message.startswith(
        "The points system coins cannot be archived: the active leaderboard Weekly coins ranks by"
    )
    assert PointsSystem.objects.get().status == SystemStatus.ACTIVE

    response = staff_client.post(url, {"post": "yes", "deactivate_dependants": "yes"})

    assert response.status_code == 302
    assert PointsSystem.objects.get().status == SystemStatus.ARCHIVED
    board.refresh_from_db()
    assert board.status == "inactive"
    listed = [b["key"] for b in api_client.get("/v1/leaderboards").json()]
    assert "weekly-coins" not in listed


def test_archiving_a_system_a_league_scores_by_is_refused_or_archives_it(
    staff_client: Client, api_client: Any, with_data: dict[str, Any], tenant: Tenant
) -> None:
    system = system_of(api_client, with_data["metric"], "coins", "Coins")
    league = points_league_of(tenant, system)
    url = admin_url(PointsSystem, "delete", system.pk)

    page = staff_client.get(url).content.decode()

    assert "The active league Coin league scores by it" in page
    assert "the league Coin league is archived (its history is kept)" in page
    staff_client.post(url, {"post": "yes"})
    assert PointsSystem.objects.get().status == SystemStatus.ACTIVE

    staff_client.post(url, {"post": "yes", "deactivate_dependants": "yes"})

    assert PointsSystem.objects.get().status == SystemStatus.ARCHIVED
    league.refresh_from_db()
    assert league.status == "archived"


def test_a_metric_a_league_scores_by_cannot_be_deleted_and_the_page_says_why(
    staff_client: Client, api_client: Any, tenant: Tenant
) -> None:
    metric = metric_of(api_client, "steps", "Steps")
    metric_league(tenant, metric, name="Step league", key="step-league")
    url = admin_url(Metric, "delete", metric.pk)

    page = staff_client.get(url).content.decode()

    assert "Metric steps: the league Step league scores by it (delete the league first)" in page
    staff_client.post(url, {"post": "yes"})
    assert Metric.objects.exists()
    assert League.objects.exists()
