"""Issue 26, "Performance": an event of a user in a league costs at most 2 more SQL statements
than the same event without leagues. The leagues step adds one statement for a user already in
this week's cohort (the entry's score UPDATE, apps/leagues/sql.py); the week's first event
joins, which costs a few more, once a week. Neither grows with the league's users or cohorts."""

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Tenant
from apps.leagues.models import LeagueCohort, LeagueEntry
from apps.metrics.models import Metric
from tests.factories import MetricFactory, bump
from tests.leagues.support import metric_league

# `sql`: make unit runs these on PostgreSQL too, whose statements differ (apps/core/db.py).
pytestmark = [pytest.mark.django_db, pytest.mark.sql]

# What a user already in this week's cohort adds: the entry's score UPDATE ... RETURNING.
IN_COHORT_EXTRA = 1
# What the week's first event adds when the open cohort of the user's tier has a seat: the
# score UPDATE that finds no entry, the user's last week (their tier), the seat (UPDATE of the
# open cohort) and the entry's INSERT.
JOIN_EXTRA = 4
# ... and when no cohort of the tier is open (the first joiner, or the one after a full one
# closed it): the seat UPDATE finds none, then the new cohort's INSERT (its first seat).
JOIN_OPENING_EXTRA = 5
COHORT_SIZE = 5  # the smallest allowed: a few joins fill a cohort and open the next


def count(client: Any, user: str, value: int = 3) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/v1/metrics/words/event", {"user": {"id": user}, "value": value})
    assert response.status_code == 201, response.content
    return len(queries.captured_queries)


def test_an_event_in_a_league_costs_one_statement_more_and_joining_a_few(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    # Without a league: users that exist, with their totals and rollups (an event of a new
    # user costs more, in both cases).
    users = [f"u{n}" for n in range(2 * COHORT_SIZE + 2)]
    for user in users:
        count(api_client, user)
    without = count(api_client, "u0")
    assert count(api_client, "u1") == without

    metric_league(tenant, metric, cohort_size=COHORT_SIZE)
    count(api_client, "warm-up")  # the new configuration version is loaded once per process
    # "warm-up" opened the first cohort; u0..u3 fill it, u4 opens the second.
    joins = [count(api_client, user) for user in users]
    opening = {0: False, COHORT_SIZE - 1: True, 2 * COHORT_SIZE - 1: True}
    for index, cost in enumerate(joins):
        want = JOIN_OPENING_EXTRA if opening.get(index) else JOIN_EXTRA
        assert cost - without == want, (index, joins, without)
    assert LeagueCohort.objects.count() == 3
    assert LeagueEntry.objects.count() == len(users) + 1

    # In this week's cohort: one statement more, for every user, in any cohort.
    in_cohort = [count(api_client, user) for user in users]
    assert in_cohort == [without + IN_COHORT_EXTRA] * len(users)
    assert IN_COHORT_EXTRA <= 2  # the bound


def test_an_event_of_another_metric_costs_nothing_more(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    """A league scores one metric: events of the others do not pay for it."""
    other = MetricFactory(tenant=tenant, key="pages", name="Pages")
    bump(tenant)
    path = f"/v1/metrics/{other.key}/event"

    def pages(user: str) -> int:
        with CaptureQueriesContext(connection) as queries:
            response = api_client.post(path, {"user": {"id": user}, "value": 1})
        assert response.status_code == 201, response.content
        return len(queries.captured_queries)

    pages("a")
    without = pages("a")
    metric_league(tenant, metric, cohort_size=COHORT_SIZE)
    pages("a")  # the configuration is loaded again
    assert pages("a") == without
