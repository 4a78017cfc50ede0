"""Issue 30, "Performance": an event of a user with 3 active quests costs at most 1 more SQL
statement than the same event without quests on PostgreSQL: the user's progress is read with
the other steps' rows (apps/core/db.load_together, one statement) and the rows the event moves
are written in one upsert. SQLite reads each step's rows apart: one statement more there. A
completion pays its reward on top, once per quest and period."""

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from apps.quests.models import QuestProgress
from tests.quests.support import quest, system

# `sql`: make unit runs these on PostgreSQL too, whose statements differ (apps/core/db.py).
pytestmark = [pytest.mark.django_db, pytest.mark.sql]

NOON = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)
EXTRA = 1 if connection.vendor == "postgresql" else 2


def count(client: Any, user: str, value: int = 1) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/v1/metrics/words/event", {"user": {"id": user}, "value": value})
    assert response.status_code == 201, response.content
    return len(queries.captured_queries)


def test_an_event_moving_three_quests_costs_one_statement_more(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    # Points with a trigger: the steps read the user's rows before they compute, and the
    # quests' read joins that one statement. (A tenant whose other steps read nothing pays the
    # quests' read on its own: 2 statements.)
    system(
        tenant, "xp", type="metric", points=1, metric_id=str(metric.public_id), metric_threshold=1
    )
    with time_machine.travel(NOON, tick=False):
        for user in ("u0", "u1", "warm-up"):
            count(api_client, user)
        without = count(api_client, "u0")
        assert count(api_client, "u1") == without

        goal = {"kind": "metric", "metric_id": str(metric.public_id), "target": 1000}
        quest(tenant, "a", [goal])
        quest(tenant, "b", [goal, {"kind": "active_days", "target": 3}], cadence="weekly")
        quest(tenant, "c", [goal], cadence="monthly")
        count(api_client, "warm-up")  # the new configuration version is loaded once per process
        # The first moves insert the rows, the next update them: the same one statement.
        first = count(api_client, "u0")
        again = count(api_client, "u0")
    assert QuestProgress.objects.filter(user__external_id="u0").count() == 3
    assert first - without <= EXTRA, (first, without)
    assert again - without <= EXTRA, (again, without)


def test_an_event_that_moves_no_quest_writes_nothing(
    api_client: Any, tenant: Tenant, metric: Metric
) -> None:
    with time_machine.travel(NOON, tick=False):
        count(api_client, "u0")
        without = count(api_client, "u0")
        quest(
            tenant,
            "pages",
            [{"kind": "metric", "metric_id": str(metric.public_id), "target": 5}],
            status="inactive",
        )
        count(api_client, "warm-up")
        # No active quest: nothing is read, nothing written.
        assert count(api_client, "u0") == without
