"""The week-end job finishes a whole chunk of full cohorts in one transaction: 200 cohorts of 30
are 6,000 entries, whose results are written in one statement on PostgreSQL. Written with
bulk_update, they needed 13 bound parameters an entry, past the 65,535 PostgreSQL takes (the
job failed on every chunk of more than ~168 full cohorts of 30), and PostgreSQL's CASE made
the statement's time grow with the square of the chunk (bench/leagues_week_end.py)."""

import datetime as dt
import random
from decimal import Decimal
from typing import Any

import pytest
from django.db.models import Count, Max, Min, Q

from apps.accounts.models import Tenant
from apps.leagues.choices import Zone
from apps.leagues.models import LeagueCohort, LeagueEntry
from apps.leagues.services import FINISH_CHUNK, cohorts_finish
from apps.metrics.models import Metric
from apps.points.configuration.systems import points_system_create
from apps.points.domain import PointsSystemSettings
from apps.users.models import EndUser
from tests.leagues.support import metric_league

# `sql`: make unit runs it on PostgreSQL too, where the results' write is hand-written.
pytestmark = [pytest.mark.django_db, pytest.mark.sql]

SIZE = 30


def test_a_chunk_of_full_cohorts_is_finished_in_one_go(tenant: Tenant, metric: Metric) -> None:
    system, _ = points_system_create(tenant, PointsSystemSettings(key="xp", name="XP"))
    league = metric_league(
        tenant,
        metric,
        cohort_size=SIZE,
        rewards=[{"from_place": 1, "points": 10, "points_system_id": str(system.public_id)}],
    )
    start = dt.datetime(2026, 1, 4, 0, 0, tzinfo=dt.UTC)  # a finished week
    end = start + dt.timedelta(days=7)
    cohorts = LeagueCohort.objects.bulk_create(
        LeagueCohort(
            league=league,
            week_start=start,
            week_end=end,
            tier=n % 10,
            number=n // 10 + 1,
            capacity=SIZE,
            members=SIZE,
            open=False,
        )
        for n in range(FINISH_CHUNK)
    )
    users = EndUser.objects.bulk_create(
        EndUser(tenant=tenant, external_id=f"u{n}") for n in range(FINISH_CHUNK * SIZE)
    )
    if users[0].pk is None:  # a database that does not return the keys of a bulk insert
        users = list(EndUser.objects.filter(tenant=tenant).order_by("pk"))
    rng = random.Random(26)
    entries: list[Any] = [
        LeagueEntry(
            cohort=cohorts[n // SIZE],
            league=league,
            week_start=start,
            user=user,
            tier=cohorts[n // SIZE].tier,
            score=Decimal(rng.randrange(100)),  # ties, and some idle users
            reached_at=start + dt.timedelta(seconds=rng.randrange(7 * 86400)),
            joined_at=start,
        )
        for n, user in enumerate(users)
    ]
    LeagueEntry.objects.bulk_create(entries)

    assert cohorts_finish(end) == FINISH_CHUNK
    assert cohorts_finish(end) == 0  # once

    per_cohort = LeagueEntry.objects.values("cohort").annotate(
        n=Count("pk"),
        places=Count("placement", distinct=True),
        lo=Min("placement"),
        hi=Max("placement"),
    )
    assert {(c["n"], c["places"], c["lo"], c["hi"]) for c in per_cohort} == {(SIZE, SIZE, 1, SIZE)}
    assert not LeagueCohort.objects.filter(Q(finished_at__isnull=True) | Q(open=True)).exists()
    assert not LeagueEntry.objects.filter(Q(zone__isnull=True) | Q(next_tier__isnull=True)).exists()
    # Each cohort's winner, and only they, earned the reward, due for the rewards job.
    due = LeagueEntry.objects.filter(rewards_due=True)
    assert due.count() == FINISH_CHUNK
    assert set(due.values_list("placement", flat=True)) == {1}
    assert due.first().rewards[0]["points"] == 10  # type: ignore[union-attr]
    # The standing order: score, then who reached it first, then the user.
    for cohort in cohorts[:5]:
        ranked = sorted(
            LeagueEntry.objects.filter(cohort=cohort),
            key=lambda e: (-e.score, e.reached_at, e.user_id),
        )
        assert [e.placement for e in ranked] == list(range(1, SIZE + 1))
        top, bottom = ranked[0], ranked[-1]
        if cohort.tier < 9 and top.score > 0:
            assert (top.zone, top.next_tier) == (Zone.PROMOTION, cohort.tier + 1)
        if cohort.tier > 0:
            assert bottom.zone == Zone.DEMOTION
