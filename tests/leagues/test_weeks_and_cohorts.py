"""Joining, scoring and finishing a league week through the event API."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.leagues.choices import Zone
from apps.leagues.models import League, LeagueCohort, LeagueEntry
from apps.leagues.services import cohorts_finish
from apps.metrics.models import Metric
from tests.leagues.support import metric_league

pytestmark = pytest.mark.django_db

MONDAY = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)  # a week ending Sunday 24:00 UTC


THREE_TIERS = [
    {"name": "Bronze", "promote": 2, "demote": 0},
    {"name": "Silver", "promote": 2, "demote": 2},
    {"name": "Gold", "promote": 0, "demote": 2},
]


def league_of(tenant: Tenant, metric: Metric, **settings: Any) -> League:
    """An active league of cohorts of 5 in three tiers (2 up, 2 down), unless told otherwise."""
    return metric_league(tenant, metric, **{"cohort_size": 5, "tiers": THREE_TIERS, **settings})


def send(api_client: Any, metric: Metric, user: str, value: Any) -> None:
    response = api_client.post(
        f"/v1/metrics/{metric.key}/event", {"user": {"id": user}, "value": value}
    )
    assert response.status_code == 201, response.content


def test_first_events_fill_cohorts_in_join_order_and_a_full_one_closes(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    with time_machine.travel(MONDAY, tick=False):
        for i in range(7):
            send(api_client, metric, f"u{i}", 10)
        send(api_client, metric, "u0", 5)
    cohorts = list(LeagueCohort.objects.filter(league=league).order_by("number"))
    assert [(c.number, c.members, c.open, c.tier) for c in cohorts] == [
        (1, 5, False, 0),
        (2, 2, True, 0),
    ]
    first = LeagueEntry.objects.filter(cohort=cohorts[0]).order_by("joined_at", "pk")
    assert [e.user.external_id for e in first] == [f"u{i}" for i in range(5)]
    assert LeagueEntry.objects.get(user__external_id="u0").score == Decimal(15)
    assert LeagueEntry.objects.count() == 7


def test_the_week_end_places_promotes_and_next_week_joins_the_earned_tier(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league = league_of(tenant, metric)
    with time_machine.travel(MONDAY, tick=False):
        for i, value in enumerate([50, 40, 30, 20, 10]):
            send(api_client, metric, f"u{i}", value)
    assert cohorts_finish(MONDAY + dt.timedelta(days=6)) == 0  # the week is still running
    finished_at = dt.datetime(2026, 11, 30, 0, 0, tzinfo=dt.UTC)
    assert cohorts_finish(finished_at) == 1
    assert cohorts_finish(finished_at) == 0  # once
    results = {
        e.user.external_id: (e.placement, e.zone, e.next_tier)
        for e in LeagueEntry.objects.filter(league=league)
    }
    assert results == {
        "u0": (1, Zone.PROMOTION, 1),
        "u1": (2, Zone.PROMOTION, 1),
        "u2": (3, Zone.SAFE, 0),
        "u3": (4, Zone.SAFE, 0),
        "u4": (5, Zone.SAFE, 0),
    }
    with time_machine.travel(finished_at + dt.timedelta(hours=1), tick=False):
        send(api_client, metric, "u0", 1)
        send(api_client, metric, "u4", 1)
    week2 = LeagueEntry.objects.filter(week_start=finished_at)
    assert {e.user.external_id: e.tier for e in week2} == {"u0": 1, "u4": 0}


def test_a_new_week_before_the_job_ran_joins_the_tier_the_rules_give(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    league_of(tenant, metric)
    with time_machine.travel(MONDAY, tick=False):
        for i, value in enumerate([50, 40, 30]):
            send(api_client, metric, f"u{i}", value)
    with time_machine.travel(dt.datetime(2026, 11, 30, 0, 1, tzinfo=dt.UTC), tick=False):
        send(api_client, metric, "u1", 1)
    assert LeagueEntry.objects.get(user__external_id="u1", placement=None, tier=1)
