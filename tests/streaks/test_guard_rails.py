"""The admin API's side of the streak guard rail (issue 27): the streak settings keep at least one
condition while users hold a streak, since without one nobody could extend it."""

from typing import Any

import pytest

from apps.accounts.models import Tenant
from apps.streaks.models import StreakCondition
from tests.factories import event_body
from tests.guard_rails import metric_of, streak_on

pytestmark = pytest.mark.django_db
URL = "/admin/v1/streaks/settings"


def test_the_last_condition_stays_while_users_have_a_streak(
    api_client: Any, tenant: Tenant
) -> None:
    metric_of(api_client, "words", "Words")
    streak_on(api_client, "words")
    assert api_client.post("/v1/metrics/words/event", event_body("u1")).status_code == 201

    response = api_client.patch(URL, {"metrics": []})

    assert response.status_code == 422
    assert response.json() == {
        "error": "metrics: 1 user has a streak that nobody could extend without a condition; "
        "keep at least one metric"
    }
    assert StreakCondition.objects.count() == 1


def test_without_streaking_users_the_conditions_may_be_emptied(
    api_client: Any, tenant: Tenant
) -> None:
    metric_of(api_client, "words", "Words")
    streak_on(api_client, "words")

    response = api_client.patch(URL, {"metrics": []})

    assert response.status_code == 200
    assert response.json()["metrics"] == []


def test_with_customization_on_the_conditions_may_be_emptied(
    api_client: Any, tenant: Tenant
) -> None:
    metric_of(api_client, "words", "Words")
    streak_on(api_client, "words")
    assert api_client.post("/v1/metrics/words/event", event_body("u1")).status_code == 201

    response = api_client.patch(URL, {"metrics": [], "customizationEnabled": True})

    assert response.status_code == 200
