"""League webhooks end to end, to a local receiver: league.joined, league.rank_changed
(throttled like Trophy's rank webhooks) and league.finished."""

import datetime as dt
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from apps.pipeline.leagues import leagues_week_end
from tests.leagues.test_weeks_and_cohorts import MONDAY, league_of
from tests.webhooks.test_webhooks import committed, endpoint, run

pytestmark = pytest.mark.django_db


def send(api_client: Any, metric: Metric, when: dt.datetime, user: str, value: int) -> None:
    with time_machine.travel(when, tick=False), committed():
        body = {"user": {"id": user}, "value": value}
        response = api_client.post(f"/v1/metrics/{metric.key}/event", body)
    assert response.status_code == 201, response.content


def test_joined_rank_changed_and_finished(
    api_client: Any, tenant: Tenant, metric: Metric, receiver: Any
) -> None:
    league_of(tenant, metric)
    endpoint(
        api_client,
        receiver.url,
        events=["league.joined", "league.rank_changed", "league.finished"],
    )
    minute = dt.timedelta(minutes=1)
    send(api_client, metric, MONDAY, "ada", 5)
    send(api_client, metric, MONDAY + minute, "bob", 3)
    send(api_client, metric, MONDAY + 2 * minute, "bob", 10)  # overtakes ada: told at once
    send(api_client, metric, MONDAY + 3 * minute, "bob", 1)  # no move: nothing
    send(api_client, metric, MONDAY + 4 * minute, "ada", 20)  # ada back on top
    requests = receiver.wait_for(4)
    bodies = [r.json for r in requests]
    assert [(b["type"], b["user"]["id"], b["rank"]) for b in bodies] == [
        ("league.joined", "ada", 1),
        ("league.joined", "bob", 2),
        ("league.rank_changed", "bob", 1),
        ("league.rank_changed", "ada", 1),
    ]
    joined, overtook = bodies[0], bodies[2]
    assert joined["league"]["key"] == "weekly"
    assert joined["cohort"]["tier"] == {"index": 0, "name": "Bronze"}
    assert joined["week"] == {"start": "2026-11-23T00:00:00Z", "end": "2026-11-30T00:00:00Z"}
    assert "previousRank" not in joined
    assert (overtook["previousRank"], overtook["score"], overtook["zone"]) == (2, 13, "promotion")
    assert bodies[3]["previousRank"] == 2

    week_end = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    with time_machine.travel(week_end, tick=False), committed():
        leagues_week_end(week_end)
    run(week_end)
    finished = [r.json for r in receiver.wait_for(6)[4:]]
    assert {(b["type"], b["user"]["id"], b["placement"]) for b in finished} == {
        ("league.finished", "ada", 1),
        ("league.finished", "bob", 2),
    }
    ada = next(b for b in finished if b["user"]["id"] == "ada")
    assert (ada["zone"], ada["newTier"], ada["left"], ada["rewards"]) == (
        "promotion",
        {"index": 1, "name": "Silver"},
        False,
        [],
    )


def test_an_endpoint_that_did_not_ask_for_league_events_hears_none(
    api_client: Any, tenant: Tenant, metric: Metric, receiver: Any
) -> None:
    league_of(tenant, metric)
    endpoint(api_client, receiver.url, events=["leaderboard.rank_changed"])
    send(api_client, metric, MONDAY, "ada", 5)
    from apps.webhooks.models import WebhookEvent

    assert not WebhookEvent.objects.exists()
