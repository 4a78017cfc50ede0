"""Streak leaderboards follow streaks that change outside an event in the change's own
transaction (issue 27 item 4): a change of frequency restarts every streak, and staff's reset
and restore set one user's. Before, the boards kept the old lengths until the periodic
`leaderboards-streaks` job came by (every 10 minutes). Each test runs with ranks counted by the
database and with ranks held in Redis (the `rank_store` fixture), through the admin API, the
dashboard and the services."""

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import Client

from apps.accounts.models import Tenant
from apps.leaderboards.jobs import leaderboards_streaks_follow
from apps.leaderboards.models import LeaderboardEntry
from apps.streaks.configuration import streak_settings_update
from apps.streaks.domain import TenantStreakSettings
from apps.streaks.services import streak_restore
from apps.users.models import EndUser
from tests.dashboard.conftest import admin_url
from tests.factories import AttributeFactory, bump

pytestmark = pytest.mark.usefixtures("rank_store")

UTC = dt.UTC
WORDS = [{"key": "words", "threshold": 1}]


def at(day: str, hour: int = 12) -> dt.datetime:
    return dt.datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC)


@pytest.fixture
def clock() -> Iterator[Any]:
    with time_machine.travel(at("2026-03-10"), tick=False) as traveller:
        yield traveller


def write(client: Any, user: str, attrs: dict[str, str] | None = None) -> None:
    body: dict[str, Any] = {"user": {"id": user}, "value": 1}
    if attrs:
        body["user"]["attributes"] = attrs
    response = client.post("/v1/metrics/words/event", body)
    assert response.status_code == 201, response.content


def table(client: Any, key: str = "streaks", **params: Any) -> list[tuple[str, int, int]]:
    response = client.get(f"/v1/leaderboards/{key}", {"limit": 100, **params})
    assert response.status_code == 200, response.content
    return [(r["userId"], r["rank"], r["value"]) for r in response.json()["rankings"]]


def rank_of(client: Any, user: str, key: str = "streaks") -> int | None:
    response = client.get(f"/v1/users/{user}/leaderboards/{key}")
    assert response.status_code == 200, response.content
    return response.json()["rank"]


@pytest.fixture
def staff_client(db: Any) -> Client:
    user = get_user_model().objects.create_superuser(username="staff", password="unused-here")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def streak_board(api_client: Any, metric: Any, clock: Any) -> None:
    """Daily streaks on words and an active streak board. From the 10th, Ann writes every day
    (3 days on the 12th); Bob writes on the 11th and 12th (2 days); Cy only on the 12th."""
    response = api_client.patch(
        "/admin/v1/streaks/settings", {"frequency": "daily", "metrics": WORDS}
    )
    assert response.status_code == 200, response.content
    response = api_client.post(
        "/admin/v1/leaderboards",
        [{"key": "streaks", "name": "Streaks", "rankBy": "streak", "status": "active"}],
    )
    assert response.json()["issues"] == [], response.content
    write(api_client, "ann")
    clock.move_to(at("2026-03-11"))
    write(api_client, "ann")
    write(api_client, "bob")
    clock.move_to(at("2026-03-12"))
    for user in ("ann", "bob", "cy"):
        write(api_client, user)
    assert table(api_client) == [("ann", 1, 3), ("bob", 2, 2), ("cy", 3, 1)]


def test_a_change_of_frequency_drops_every_streak_on_the_boards_at_once(
    api_client: Any, streak_board: None, django_capture_on_commit_callbacks: Any
) -> None:
    # Redis's rank sets are dropped once the change commits (run here, inside the test's
    # transaction, as a commit would).
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.patch("/admin/v1/streaks/settings", {"frequency": "weekly"})
    assert response.status_code == 200, response.content

    # Every streak restarted with the weekly frequency: the board says so now, not after the
    # `leaderboards-streaks` job. Equal values rank by who reached them first, then by user.
    assert sorted(value for _, _, value in table(api_client)) == [0, 0, 0]
    assert api_client.get("/v1/users/ann/streak").json()["length"] == 0
    assert leaderboards_streaks_follow(dt.datetime.now(UTC)) == 0  # nothing left to follow

    # The next event counts with the new frequency, on the board as in the streak.
    write(api_client, "bob")
    assert table(api_client)[0] == ("bob", 1, 1)
    assert rank_of(api_client, "bob") == 1


def test_the_boards_move_with_the_frequency_change_or_not_at_all(
    api_client: Any, tenant: Tenant, streak_board: None
) -> None:
    class Refused(Exception):
        pass

    def change_then_refuse() -> None:
        with transaction.atomic():
            streak_settings_update(tenant, TenantStreakSettings(frequency="monthly"))
            raise Refused(set(LeaderboardEntry.objects.values_list("value", flat=True)))

    with pytest.raises(Refused) as refused:
        change_then_refuse()
    assert refused.value.args[0] == {0}  # inside the change's transaction, the boards moved
    # The change rolled back: so did the boards.
    assert table(api_client) == [("ann", 1, 3), ("bob", 2, 2), ("cy", 3, 1)]


def test_a_change_that_keeps_the_frequency_keeps_the_boards(
    api_client: Any, streak_board: None
) -> None:
    response = api_client.patch("/admin/v1/streaks/settings", {"evaluationMode": "OR"})
    assert response.status_code == 200, response.content
    assert table(api_client) == [("ann", 1, 3), ("bob", 2, 2), ("cy", 3, 1)]


def test_the_dashboards_frequency_change_drops_the_boards_too(
    api_client: Any,
    staff_client: Client,
    streak_board: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from apps.streaks.models import StreakSettings

    settings = StreakSettings.objects.get()
    url = admin_url(StreakSettings, "change", settings.pk)
    form = {
        "frequency": "weekly",
        "evaluation_mode": "AND",
        "conditions-metric": ["words"],
        "conditions-threshold": ["1"],
        "_confirm_frequency": "1",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(url, form)
    assert response.status_code == 302, response.context["form"].errors
    assert sorted(value for _, _, value in table(api_client)) == [0, 0, 0]


def test_a_reset_drops_the_user_on_the_boards_at_once(api_client: Any, streak_board: None) -> None:
    response = api_client.post("/admin/v1/streaks/reset", {"users": [{"id": "ann"}]})
    assert response.json()["resetUsers"] == ["ann"]

    assert table(api_client) == [("bob", 1, 2), ("cy", 2, 1), ("ann", 3, 0)]
    assert rank_of(api_client, "ann") == 3


def test_a_restore_lifts_the_user_on_the_boards_at_once(
    api_client: Any, streak_board: None, clock: Any
) -> None:
    # Ann misses the 13th and 14th: the job drops her to 0 on the board.
    clock.move_to(at("2026-03-15", 1))
    assert leaderboards_streaks_follow(dt.datetime.now(UTC)) == 3
    assert {user: value for user, _, value in table(api_client)} == {"ann": 0, "bob": 0, "cy": 0}

    response = api_client.post("/admin/v1/streaks/restore", {"users": [{"id": "ann"}]})
    assert response.json() == {"restoredUsers": ["ann"], "issues": []}

    assert table(api_client)[0] == ("ann", 1, 3)
    assert rank_of(api_client, "ann") == 1
    assert api_client.get("/v1/users/ann/streak").json()["length"] == 3
    assert leaderboards_streaks_follow(dt.datetime.now(UTC)) == 0


def test_the_dashboards_restore_lifts_the_user_on_the_boards(
    api_client: Any,
    staff_client: Client,
    streak_board: None,
    clock: Any,
    tenant: Tenant,
) -> None:
    """The "Streaks lost" page's restore button posts to the end-user page's restore action."""
    from django.urls import reverse

    api_client.post("/admin/v1/streaks/reset", {"users": [{"id": "bob"}]})
    assert ("bob", 3, 0) in table(api_client)
    bob = EndUser.objects.get(tenant=tenant, external_id="bob")

    response = staff_client.post(reverse("admin:users_enduser_streak_restore", args=[bob.pk]))
    assert response.status_code == 302

    assert table(api_client) == [("ann", 1, 3), ("bob", 2, 2), ("cy", 3, 1)]


def test_a_restore_enters_a_user_the_board_does_not_hold(
    api_client: Any, tenant: Tenant, streak_board: None, clock: Any
) -> None:
    # Dee wrote on the 11th and 12th before a board that only admits "pro" users let her in.
    plan = str(AttributeFactory(tenant=tenant, key="plan", type="user").public_id)
    bump(tenant)
    response = api_client.post(
        "/admin/v1/leaderboards",
        [
            {
                "key": "pros",
                "name": "Pros",
                "rankBy": "streak",
                "status": "active",
                "userAttributes": [{"attributeId": plan, "attributeValue": "pro"}],
            }
        ],
    )
    assert response.json()["issues"] == [], response.content
    write(api_client, "dee", {"plan": "pro"})  # the 12th: on the board with 1
    api_client.post("/admin/v1/streaks/reset", {"users": [{"id": "dee"}]})
    LeaderboardEntry.objects.filter(user__external_id="dee").delete()  # displaced meanwhile
    assert table(api_client, "pros") == []

    dee = EndUser.objects.get(tenant=tenant, external_id="dee")
    assert streak_restore(tenant, dee)

    assert table(api_client, "pros") == [("dee", 1, 1)]
    assert ("dee", 4, 1) in table(api_client)


def test_other_tenants_boards_are_untouched(
    api_client: Any,
    other_tenant_client: Any,
    metric: Any,
    other_tenant: Tenant,
    clock: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from tests.factories import MetricFactory

    MetricFactory(tenant=other_tenant, key="words")
    bump(other_tenant)
    for client in (api_client, other_tenant_client):
        client.patch("/admin/v1/streaks/settings", {"frequency": "daily", "metrics": WORDS})
        client.post(
            "/admin/v1/leaderboards",
            [{"key": "streaks", "name": "Streaks", "rankBy": "streak", "status": "active"}],
        )
        write(client, "ann")

    with django_capture_on_commit_callbacks(execute=True):
        api_client.patch("/admin/v1/streaks/settings", {"frequency": "weekly"})

    assert table(api_client) == [("ann", 1, 0)]
    assert table(other_tenant_client) == [("ann", 1, 1)]
