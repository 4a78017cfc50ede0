"""The admin API's side of the achievement guard rail (issue 27): an achievement users completed
is deleted only when the request confirms it by its key, its name (one without a key) or its
id; the issue says who loses it."""

from typing import Any

import pytest

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement
from tests.admin_issues import admin_issue
from tests.factories import event_body
from tests.guard_rails import achievement_of, metric_of

pytestmark = pytest.mark.django_db
URL = "/admin/v1/achievements"


def test_an_achievement_users_completed_is_deleted_only_when_confirmed(
    api_client: Any, tenant: Tenant
) -> None:
    words = metric_of(api_client, "words", "Words")
    warrior = achievement_of(api_client, words, "Week warrior")
    for user in ("u1", "u2"):
        assert api_client.post("/v1/metrics/words/event", event_body(user)).status_code == 201

    refused = api_client.delete(f"{URL}?ids={warrior.public_id}").json()

    assert refused == {
        "deleted": [],
        "issues": [
            admin_issue(
                "Deleting the achievement Week warrior takes data from users: 2 users lose the "
                "achievement Week warrior; confirm with its name Week warrior to delete it",
                id=str(warrior.public_id),
            )
        ],
    }
    body = api_client.delete(f"{URL}?ids={warrior.public_id}&confirm=Week%20warrior").json()
    assert body == {"deleted": [{"id": str(warrior.public_id)}], "issues": []}
    assert not Achievement.objects.exists()


def test_an_achievement_nobody_completed_is_deleted_as_before(
    api_client: Any, tenant: Tenant
) -> None:
    words = metric_of(api_client, "words", "Words")
    warrior = achievement_of(api_client, words, "Week warrior")

    body = api_client.delete(f"{URL}?ids={warrior.public_id}").json()

    assert body == {"deleted": [{"id": str(warrior.public_id)}], "issues": []}
