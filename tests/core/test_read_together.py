"""apps/core/db.read_together: the steps' reads in one statement on PostgreSQL give the same
instances, field for field, as the ORM reading them one by one."""

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.core.db import CompiledSelect, Load, load_together, read_together
from apps.leaderboards.models import Leaderboard, LeaderboardEntry
from apps.streaks.models import StreakPause, StreakState
from apps.users.models import EndUser

# `sql`: make unit runs these on PostgreSQL too, whose statements differ (apps/core/db.py).
pytestmark = [pytest.mark.django_db, pytest.mark.sql]

STATE = CompiledSelect(StreakState, "{m[user]} = %s")
PAUSES = CompiledSelect(StreakPause, "{m[user]} = %s")
ENTRIES = CompiledSelect(LeaderboardEntry, "{m[user]} = %s")


def fields(instance: object) -> dict[str, object]:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


@pytest.fixture
def rows(tenant):
    user = EndUser.objects.create(tenant=tenant, external_id="u", tz="Europe/Paris")
    StreakState.objects.create(
        tenant=tenant,
        user=user,
        frequency="daily",
        length=3,
        started=dt.date(2026, 11, 20),
        settled_through=dt.date(2026, 11, 22),
        extended_at=dt.datetime(2026, 11, 22, 8, 30, 15, 123456, tzinfo=dt.UTC),
        tz="Europe/Paris",
        pref_thresholds={"words": 1.5, "nested": [0.1, 2, {"x": 3.25}]},
    )
    for start in (dt.date(2026, 12, 1), dt.date(2026, 11, 1)):
        StreakPause.objects.create(tenant=tenant, user=user, start=start, end=start)
    board = Leaderboard.objects.create(
        tenant=tenant, key="b", name="B", rank_by="metric", start=dt.date(2026, 1, 1)
    )
    LeaderboardEntry.objects.create(
        leaderboard=board,
        run_start=dt.date(2026, 1, 1),
        group="",
        user=user,
        value=Decimal("1234567.000001"),
        reached_at=dt.datetime(2026, 11, 23, 1, 2, 3, 4, tzinfo=dt.UTC),
    )
    return user


def test_read_together_equals_reading_one_by_one(rows):
    reads = [(STATE, [rows.pk]), (PAUSES, [rows.pk]), (ENTRIES, [rows.pk])]
    together = read_together(reads)
    apart = [select.many(params) for select, params in reads]
    assert [len(found) for found in together] == [1, 2, 1]
    for got, expected in zip(together, apart, strict=True):
        key = lambda instance: instance.pk  # noqa: E731 - the UNION keeps no order
        assert [fields(i) for i in sorted(got, key=key)] == [
            fields(i) for i in sorted(expected, key=key)
        ]
    state = together[0][0]
    assert state.pref_thresholds == {"words": 1.5, "nested": [0.1, 2, {"x": 3.25}]}
    assert isinstance(state.pref_thresholds["words"], float)
    assert together[2][0].value == Decimal("1234567.000001")


def test_loads_are_one_statement_on_postgresql(rows):
    with CaptureQueriesContext(connection) as queries:
        state, entries = load_together(
            Load(((STATE, [rows.pk]), (PAUSES, [rows.pk])), lambda found: found),
            Load(((ENTRIES, [rows.pk]),), lambda found: len(found[0])),
        )
    assert [len(found) for found in state] == [1, 2]
    assert entries == 1
    expected = 1 if connection.vendor == "postgresql" else 3
    assert len(queries.captured_queries) == expected


def test_nothing_stored_reads_nothing(rows):
    with CaptureQueriesContext(connection) as queries:
        (made,) = load_together(
            Load(((STATE, [rows.pk]),), lambda found: found), nothing_stored=True
        )
    assert made == [[]]
    assert queries.captured_queries == []
