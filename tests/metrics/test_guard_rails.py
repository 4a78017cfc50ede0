"""The admin API's side of the metric guard rails (issue 27; the dashboard's side is
tests/dashboard/test_guard_rails.py): a metric users have data in is deleted only when the
request confirms it (`confirm=<key or id>`), and the issue says what users would lose; a metric
the streak or a league cannot do without is not deleted at all."""

from typing import Any

import pytest

from apps.accounts.models import Tenant
from apps.achievements.models import AchievementCompletion
from apps.leaderboards.models import Leaderboard
from apps.metrics.models import Metric, MetricEvent
from tests.admin_issues import admin_issue
from tests.factories import event_body
from tests.guard_rails import achievement_of, board_of, metric_of, streak_on
from tests.leagues.support import metric_league

pytestmark = pytest.mark.django_db
URL = "/admin/v1/metrics"


@pytest.fixture
def words(api_client: Any, tenant: Tenant) -> Metric:
    words = metric_of(api_client, "words", "Words")
    achievement_of(api_client, words, "Week warrior")
    board_of(api_client, words, "Weekly words", "weekly-words")
    for user, value in (("u1", 1), ("u2", 2), ("u1", 3)):
        assert (
            api_client.post("/v1/metrics/words/event", event_body(user, value)).status_code == 201
        )
    return words


def test_deleting_a_metric_with_user_data_is_an_issue_that_says_what_users_lose(
    api_client: Any, words: Metric
) -> None:
    response = api_client.delete(f"{URL}?ids={words.public_id}")

    assert response.status_code == 200
    assert response.json() == {
        "deleted": [],
        "issues": [
            admin_issue(
                "Deleting the metric words takes data from users: 3 events of 2 users are "
                "deleted, 2 users lose the achievement Week warrior and the live leaderboard "
                "Weekly words is deleted, with the rankings of 2 users; confirm with its key "
                "words to delete it",
                id=str(words.public_id),
            )
        ],
    }
    assert MetricEvent.objects.count() == 3
    assert AchievementCompletion.objects.count() == 2
    assert Leaderboard.objects.exists()


@pytest.mark.parametrize("confirm", ["words", "id"])
def test_a_confirmed_delete_removes_the_metric_and_its_user_data(
    api_client: Any, words: Metric, confirm: str
) -> None:
    confirmation = str(words.public_id) if confirm == "id" else "words"

    response = api_client.delete(f"{URL}?ids={words.public_id}&confirm=other,{confirmation}")

    assert response.json() == {"deleted": [{"id": str(words.public_id)}], "issues": []}
    assert not Metric.objects.exists()
    assert not MetricEvent.objects.exists()
    assert not Leaderboard.objects.exists()


def test_a_metric_without_user_data_is_deleted_without_confirmation(
    api_client: Any, tenant: Tenant
) -> None:
    pages = metric_of(api_client, "pages", "Pages")

    response = api_client.delete(f"{URL}?ids={pages.public_id}")

    assert response.json() == {"deleted": [{"id": str(pages.public_id)}], "issues": []}


def test_the_streaks_only_condition_is_not_deleted_even_when_confirmed(
    api_client: Any, words: Metric
) -> None:
    streak_on(api_client, "words")
    assert api_client.post("/v1/metrics/words/event", event_body("u1", 1)).status_code == 201

    body = api_client.delete(f"{URL}?ids={words.public_id}&confirm=words").json()

    assert body["deleted"] == []
    [issue] = body["issues"]
    assert issue["message"] == (
        "The metric words cannot be deleted: it is the streak's only condition, and the streaks "
        "of 1 user could no longer be extended: add another metric to the streak settings first"
    )
    assert Metric.objects.exists()


def test_one_of_several_streak_conditions_is_deleted_when_confirmed(
    api_client: Any, words: Metric
) -> None:
    metric_of(api_client, "pages", "Pages")
    streak_on(api_client, "words", "pages")
    assert api_client.post("/v1/metrics/words/event", event_body("u1", 1)).status_code == 201

    body = api_client.delete(f"{URL}?ids={words.public_id}&confirm=words").json()

    assert body == {"deleted": [{"id": str(words.public_id)}], "issues": []}
    settings = api_client.get("/admin/v1/streaks/settings").json()
    assert settings["metrics"] == [{"key": "pages", "threshold": 1}]


def test_a_metric_a_league_scores_by_is_refused_in_words(api_client: Any, tenant: Tenant) -> None:
    steps = metric_of(api_client, "steps", "Steps")
    metric_league(tenant, steps, name="Step league", key="step-league")

    body = api_client.delete(f"{URL}?ids={steps.public_id}&confirm=steps").json()

    assert body["issues"] == [
        admin_issue(
            "The metric steps cannot be deleted: the league Step league scores by it (delete "
            "the league first)",
            id=str(steps.public_id),
        )
    ]


def test_a_metric_whose_achievement_another_requires_is_refused_in_words(
    api_client: Any, tenant: Tenant
) -> None:
    words = metric_of(api_client, "words", "Words")
    warrior = achievement_of(api_client, words, "Week warrior")
    composite = {
        "name": "All-rounder",
        "trigger": "achievement",
        "achievementIds": [str(warrior.public_id)],
    }
    assert api_client.post("/admin/v1/achievements", [composite]).status_code == 201

    body = api_client.delete(f"{URL}?ids={words.public_id}").json()

    assert body["issues"] == [
        admin_issue(
            "The metric words cannot be deleted: the achievement All-rounder requires an "
            "achievement it triggers",
            id=str(words.public_id),
        )
    ]
    assert Metric.objects.exists()
