"""A ranking split into sub-boards (LEADERBOARD_RANKS_SUBBOARDS, apps/leaderboards/ranks.py)
answers exactly as one set does: ranks, standings, pages and neighbours, for random boards
full of ties (of value and of time, broken by user id as domain.RANK_ORDER says), on one Redis
node and on a Redis Cluster."""

import datetime as dt
import itertools
import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from apps.leaderboards import ranks
from apps.leaderboards.sql import Standing
from tests.conftest import RANKS_REDIS, redis_answers

pytestmark = pytest.mark.django_db

AT = dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC)
DAY = AT.date()
VALUES = [Decimal(v) for v in ("-2", "0", "1", "1.5", "3", "1000")]
MOMENTS = [AT, AT + dt.timedelta(microseconds=1), AT + dt.timedelta(seconds=1)]
_boards = itertools.count(10**9)


@pytest.fixture(params=["node", pytest.param("cluster", marks=pytest.mark.redis_cluster)])
def store(request: Any, settings: Any) -> Iterator[str]:
    """Ranks in one Redis node (REDIS_URL), then in the session's Redis Cluster."""
    if request.param == "node":
        if not redis_answers():
            pytest.skip("needs Redis on 127.0.0.1:6379")
        settings.LEADERBOARD_RANKS_REDIS_URL = RANKS_REDIS
    else:
        cluster = request.getfixturevalue("redis_cluster_session")
        settings.LEADERBOARD_RANKS_REDIS_URL = cluster.url
    ranks.reset()
    if request.param == "cluster":
        # The boards here live in Redis alone (no rows in PostgreSQL): the cluster's epoch is
        # seen now, so that no first sight of it makes them stale (empty) halfway.
        conn = ranks._redis()
        assert conn is not None
        conn.cluster_epoch(fresh=True)
    yield str(request.param)
    if request.param == "cluster":
        ranks.forget_all()


def random_place(rng: random.Random) -> ranks.Place:
    return (rng.choice(VALUES), rng.choice(MOMENTS))


class Board:
    """One ranking held at once as one set and as sub-boards of several sizes (their keys
    differ by the count), with the truth beside them: a dict user -> place."""

    def __init__(self, counts: list[int]) -> None:
        self.run = ranks.RunKey(next(_boards), DAY, "")
        self.counts = counts
        self.places: dict[int, ranks.Place] = {}
        for count in counts:
            with self.split(count):
                assert ranks.rebuild(self.run)  # no rows in PostgreSQL: empty and ready

    def split(self, count: int) -> Any:
        return override_settings(LEADERBOARD_RANKS_SUBBOARDS=count)

    def each(self, ask: Any) -> list[Any]:
        """What every split answers to `ask()`."""
        answers = []
        for count in self.counts:
            with self.split(count):
                answers.append(ask())
        return answers

    def fill(self, places: dict[int, ranks.Place]) -> None:
        self.places.update(places)
        for count in self.counts:
            with self.split(count):
                ranks.change(self.run, list(places.items()))

    def members(self) -> list[str]:
        return sorted(ranks.member(*place, user) for user, place in self.places.items())

    def truth(self, user: int, old: ranks.Place | None, new: ranks.Place | None) -> Standing:
        others = [ranks.member(*p, u) for u, p in self.places.items() if u != user]

        def ahead(place: ranks.Place | None) -> int:
            if place is None:
                return 0
            mine = ranks.member(*place, user)
            return sum(other < mine for other in others)

        lowest = ranks.member_value(max(others)) if others else None
        return Standing(ahead(old), ahead(new), len(others), lowest)


def check(board: Board, rng: random.Random, asked: int) -> None:
    members = board.members()
    users = list(board.places)
    # The whole order, in pages of several sizes.
    for size in (37, len(members) + 1):
        for offset in range(0, len(members) + 1, size):
            want = members[offset : offset + size]
            assert board.each(
                lambda offset=offset, size=size: ranks.page(board.run, offset, size)
            ) == [want] * len(board.counts)
    for user in rng.sample(users, min(asked, len(users))):
        place = board.places[user]
        want_rank = members.index(ranks.member(*place, user)) + 1
        assert board.each(lambda user=user, place=place: ranks.rank(board.run, user, place)) == [
            want_rank
        ] * len(board.counts)
        k = rng.choice([0, 1, 3])
        first = max(0, want_rank - 1 - k)
        want_window = ranks.Window(want_rank - 1, first, members[first : want_rank + k])
        assert board.each(lambda user=user, k=k: ranks.neighbours(board.run, user, k)) == [
            want_window
        ] * len(board.counts)
        # A standing at two other places, as an event reads it (the user left out).
        old, new = rng.choice([place, None]), rng.choice([random_place(rng), None])
        want = board.truth(user, old, new)
        assert board.each(
            lambda user=user, old=old, new=new: ranks.standing(
                board.run, user, old, new, locked=False
            )
        ) == [want] * len(board.counts)
    # Someone not on the board.
    stranger = 10**12
    assert board.each(lambda: ranks.neighbours(board.run, stranger, 2)) == [
        ranks.Window(None, 0, [])
    ] * len(board.counts)


@pytest.mark.parametrize("seed", [1, 2])
def test_sub_boards_rank_as_one_board_for_many_users(settings, store, seed):
    rng = random.Random(seed)
    board = Board([1, 2, 3, 7])
    board.fill({user: random_place(rng) for user in rng.sample(range(1, 10**6), 2000)})
    check(board, rng, asked=60)


@hypothesis_settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    places=st.dictionaries(
        st.integers(1, 10**9),
        st.tuples(st.sampled_from(VALUES), st.sampled_from(MOMENTS)),
        max_size=120,
    ),
    count=st.integers(2, 9),
    seed=st.integers(0, 1000),
)
def test_sub_boards_rank_as_one_board_for_any_board(settings, store, places, count, seed):
    board = Board([1, count])
    board.fill(places)
    check(board, random.Random(seed), asked=15)


def test_events_move_users_alike_on_one_board_and_on_sub_boards(settings, store):
    """The hot path: an event reads the user's standing at their old and new place and moves
    them in the same call; every split answers each event as the truth does."""
    rng = random.Random(7)
    board = Board([1, 4])
    for _ in range(300):
        user = rng.randrange(1, 60)
        old = board.places.get(user)
        new = random_place(rng)
        want = board.truth(user, old, new)
        moved = Standing(want.ahead_before, want.ahead_after, want.others, want.lowest_other, True)
        assert (
            board.each(
                lambda user=user, old=old, new=new: ranks.standing(
                    board.run, user, old, new, move=True
                )
            )
            == [moved] * 2
        )
        board.places[user] = new
    check(board, rng, asked=20)


def test_a_user_stays_in_one_sub_board_and_users_spread_over_all():
    seen = {ranks.subboard(user, 5) for user in range(1, 200)}
    assert seen == set(range(5))
    assert [ranks.subboard(12345, 5)] * 3 == [ranks.subboard(12345, 5) for _ in range(3)]
    assert ranks.subboard(12345, 1) == 0


def test_a_cluster_url_names_its_startup_nodes():
    assert ranks.cluster_nodes("redis://127.0.0.1:6379/3") is None
    assert ranks.cluster_nodes("redis+cluster://10.0.0.1:7000,10.0.0.2:7001") == (
        [("10.0.0.1", 7000), ("10.0.0.2", 7001)],
        {"ssl": False},
    )
    assert ranks.cluster_nodes("rediss+cluster://app:s%40cret@[::1]:7000/0") == (
        [("::1", 7000)],
        {"ssl": True, "username": "app", "password": "s@cret"},
    )
    with pytest.raises(ImproperlyConfigured):
        ranks.cluster_nodes("redis+cluster://127.0.0.1:7000/3")  # a cluster has database 0 only
    with pytest.raises(ImproperlyConfigured):
        ranks.cluster_nodes("redis+cluster://127.0.0.1")


def test_every_key_of_a_ranking_shares_a_hash_tag_and_sub_boards_have_their_own():
    run = ranks.RunKey(5, DAY, "country=fr")
    tags = {key[key.index("{") : key.index("}") + 1] for key in run.keys(0, 1)[:4]}
    assert len(tags) == 1
    split = {ranks.RunKey(5, DAY, "country=fr").keys(sub, 4)[0] for sub in range(4)}
    assert len({key[key.index("{") : key.index("}") + 1] for key in split}) == 4
    assert "{" not in run.keys()[4]  # the epoch key: one for the installation
