"""Joining under concurrency, on PostgreSQL where row locks are real: never a cohort over its
size, one open cohort per tier, never a user in two cohorts of a week."""

import datetime as dt
from collections import Counter
from typing import Any

import pytest
import time_machine
from rest_framework.test import APIClient

from apps.leagues.choices import ScoreBy, Status
from apps.leagues.configuration import league_create
from apps.leagues.domain import LeagueSettings
from apps.leagues.models import LeagueCohort, LeagueEntry
from tests.concurrency import POSTGRES_ONLY, run_all
from tests.factories import MetricFactory, OrganizationWithKey

pytestmark = [*POSTGRES_ONLY]

MONDAY = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)
THREADS, USERS_EACH = 40, 5  # 200 users, 40 connections at once


@pytest.mark.parametrize("size", [30, 5])  # 5: cohorts opened by racing joiners all along
@pytest.mark.django_db(transaction=True)
def test_200_users_racing_into_the_last_places_fill_cohorts_exactly(size: int) -> None:
    org = OrganizationWithKey("Race")
    metric = MetricFactory(tenant=org.tenant, key="words")
    league = league_create(
        org.tenant,
        LeagueSettings(
            name="Weekly",
            key="weekly",
            score_by=ScoreBy.METRIC,
            metric_id=str(metric.public_id),
            status=Status.ACTIVE,
            cohort_size=size,
        ),
    )

    def client() -> APIClient:
        api = APIClient()
        api.credentials(HTTP_X_API_KEY=org.admin_key)
        return api

    def send(api: APIClient, user: str) -> int:
        body = {"user": {"id": user}, "value": 1}
        return int(api.post("/v1/metrics/words/event", body, format="json").status_code)

    with time_machine.travel(MONDAY, tick=True):
        early = client()
        for i in range(25):  # with 30 a cohort, the first has 5 places left
            assert send(early, f"early-{i}") == 201

        def racer(thread: int) -> list[Any]:
            api = client()
            return [send(api, f"racer-{thread}-{n}") for n in range(USERS_EACH)]

        results = run_all([lambda t=t: racer(t) for t in range(THREADS)])

    assert [r for r in results if not isinstance(r, list)] == []
    assert Counter(code for r in results for code in r) == {201: THREADS * USERS_EACH}
    cohorts = list(LeagueCohort.objects.filter(league=league).order_by("number"))
    entries = Counter(LeagueEntry.objects.filter(league=league).values_list("cohort", flat=True))
    assert sum(entries.values()) == 225
    assert LeagueEntry.objects.values("user").distinct().count() == 225
    full, rest = divmod(225, size)
    count = full + (1 if rest else 0)
    assert [c.number for c in cohorts] == list(range(1, count + 1))
    assert all(c.members == entries[c.pk] for c in cohorts)
    assert [c.members for c in cohorts] == [size] * full + ([rest] if rest else [])
    assert [c.open for c in cohorts] == [False] * full + ([True] if rest else [])
