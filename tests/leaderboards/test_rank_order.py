"""The rank order is stated once (apps/leaderboards/domain.py, RANK_ORDER) and every copy of it
ranks a board with ties alike: Python's sort key, the ORM's order, the hand-written statements
(the standing's "ahead of" counts, the lowest entry a newcomer displaces, the daily snapshot),
the Redis members' byte order and Redis's own ranks and pages. `make unit` runs this module on
SQLite and, when PostgreSQL answers, on PostgreSQL too (marker `sql`); the Redis copy runs
when Redis answers (`rank_store`)."""

import datetime as dt
import random
from decimal import Decimal
from typing import Any

import pytest

from apps.leaderboards import ranks, selectors, sql
from apps.leaderboards.domain import RANK_ORDER, rank_order_by, rank_sort_key
from apps.leaderboards.models import Leaderboard, LeaderboardEntry, LeaderboardSnapshot
from apps.users.models import EndUser

pytestmark = [pytest.mark.django_db, pytest.mark.sql]

RUN = dt.date(2026, 3, 1)
AT = dt.datetime(2026, 3, 1, 9, tzinfo=dt.UTC)
GROUP = ""


def later(seconds: float) -> dt.datetime:
    return AT + dt.timedelta(seconds=seconds)


# (value, reached_at) of each participant, with every kind of tie: same value reached at other
# moments, same value at the same moment (the user id decides), negative and fractional
# values, large ones (SQLite keeps 15 significant digits of an amount).
PLACES = [
    (Decimal(10), later(5)),
    (Decimal(10), later(1)),
    (Decimal(10), later(1)),
    (Decimal(10), later(1)),
    (Decimal("10.000001"), later(9)),
    (Decimal("9.999999"), later(0)),
    (Decimal(0), later(3)),
    (Decimal(0), later(3)),
    (Decimal(-2), later(0.000001)),
    (Decimal(-2), later(0)),
    (Decimal("-2.5"), later(0)),
    (Decimal("123456789.123456"), later(7)),
    (Decimal("-123456789.123456"), later(7)),
    (Decimal(3), later(86400 * 400)),
]


@pytest.fixture
def board(tenant: Any, rank_store: str) -> tuple[Leaderboard, list[dict[str, Any]]]:
    lb = Leaderboard.objects.create(
        tenant=tenant, key="ties", name="Ties", rank_by="metric", status="active", start=RUN
    )
    users = [EndUser.objects.create(tenant=tenant, external_id=f"u{n}") for n in range(len(PLACES))]
    # Entries written in a shuffled order, so that no copy gets the answer from insertion order.
    rows = list(zip(users, PLACES, strict=True))
    random.Random(24).shuffle(rows)
    places = []
    for user, (value, reached_at) in rows:
        LeaderboardEntry.objects.create(
            leaderboard=lb,
            run_start=RUN,
            group=GROUP,
            user=user,
            value=value,
            reached_at=reached_at,
        )
        places.append({"value": value, "reached_at": reached_at, "user_id": user.pk})
    return lb, places


def python_order(places: list[dict[str, Any]]) -> list[int]:
    return [p["user_id"] for p in sorted(places, key=rank_sort_key)]


def test_python_sort_key_is_the_stated_order(board):
    _, places = board
    expected = sorted(
        places, key=lambda p: (-p["value"], p["reached_at"], p["user_id"])
    )  # higher value, then earlier, then lower user id
    assert python_order(places) == [p["user_id"] for p in expected]
    assert rank_order_by() == ["-value", "reached_at", "user_id"]


def test_the_orm_order_agrees(board):
    lb, places = board
    found = list(selectors.ordered(lb.pk, RUN, GROUP).values_list("user_id", flat=True))
    assert found == python_order(places)


def test_the_standing_statement_and_redis_rank_agree(board):
    lb, places = board
    run = ranks.RunKey(lb.pk, RUN, GROUP)
    expected = python_order(places)
    by_user = {p["user_id"]: p for p in places}
    for rank, user_pk in enumerate(expected, start=1):
        place = (by_user[user_pk]["value"], by_user[user_pk]["reached_at"])
        assert sql.standing(lb.pk, RUN, GROUP, user_pk, place, None).ahead_before == rank - 1
        # ranks.rank: Redis when it holds the ranks (rank_store "redis"), else the statement.
        assert ranks.rank(run, user_pk, place) == rank


def test_the_standing_of_a_new_place_agrees(board):
    lb, places = board
    # A user who is not on the board, at each place between and on the others: ahead of them
    # are those the Python order puts before it.
    outsider = max(p["user_id"] for p in places) + 1
    for other in places:
        new = {**other, "user_id": outsider}
        ahead = sum(rank_sort_key(p) < rank_sort_key(new) for p in places)
        place = (new["value"], new["reached_at"])
        found = sql.standing(lb.pk, RUN, GROUP, outsider, None, place)
        assert (found.ahead_before, found.ahead_after) == (0, ahead)


def test_displacing_takes_the_last_ranked_first(board):
    lb, places = board
    expected = python_order(places)
    removed = [
        sql.displace_lowest(lb.pk, RUN, GROUP, 0, Decimal("1E18")) for _ in range(len(places))
    ]
    assert removed == list(reversed(expected))


def test_the_snapshot_ranks_agree(board):
    lb, places = board
    assert sql.snapshot_run(lb.pk, RUN, RUN) == len(places)
    ranked = LeaderboardSnapshot.objects.filter(leaderboard=lb).order_by("rank")
    assert list(ranked.values_list("user_id", flat=True)) == python_order(places)
    assert list(ranked.values_list("rank", flat=True)) == list(range(1, len(places) + 1))


def test_redis_members_sort_and_page_in_rank_order(board, rank_store):
    lb, places = board
    expected = python_order(places)
    members = [ranks.member(p["value"], p["reached_at"], p["user_id"]) for p in places]
    # All members have score 0: Redis orders them by their bytes.
    assert [ranks.member_user(m) for m in sorted(members)] == expected
    assert {ranks.member_value(m) for m in members} == {p["value"] for p in places}
    page = ranks.page(ranks.RunKey(lb.pk, RUN, GROUP), 0, len(places))
    if rank_store == "redis":
        assert page is not None
        assert [ranks.member_user(m) for m in page] == expected
    else:
        assert page is None  # no Redis: the ORM's order answers (test_the_orm_order_agrees)


def test_the_rank_index_serves_the_order():
    # The index behind ORDER BY rank: the run's columns, then the leading keys of the order.
    (index,) = LeaderboardEntry._meta.indexes
    assert index.fields[:3] == ["leaderboard", "run_start", "group"]
    assert index.fields[3:] == rank_order_by()[: len(index.fields) - 3]
    assert [k.field for k in RANK_ORDER][-1] == "user_id"  # ranks are 1..n: a unique last key
