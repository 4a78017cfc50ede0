"""LEADERBOARD_MAX_PARTICIPANTS: Trophy's 1,000 stays the default and the default limit; an
operator who raises it gets boards past 1,000 participants that rank, page, displace and trim
as small ones do (ranks counted by PostgreSQL and held in Redis alike)."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from django.core.management import call_command

from apps.leaderboards.models import Leaderboard, LeaderboardEntry
from apps.users.models import EndUser

# `sql`: displacement and moves are hand-written statements; make unit runs them on PostgreSQL.
pytestmark = [pytest.mark.django_db, pytest.mark.sql, pytest.mark.usefixtures("rank_store")]

ADMIN = "/admin/v1/leaderboards"
PARTICIPANTS = 1200


def board_item(metric: Any, most: int) -> dict[str, Any]:
    return {
        "name": "Big",
        "key": "big",
        "rankBy": "metric",
        "metricId": str(metric.public_id),
        "status": "active",
        "maxParticipants": most,
    }


def test_past_1000_is_refused_unless_the_operator_raises_the_limit(api_client, metric, settings):
    refused = api_client.post(ADMIN, [board_item(metric, 1001)]).json()
    assert refused["created"] == []
    assert "maxParticipants" in str(refused["issues"])
    settings.LEADERBOARD_MAX_PARTICIPANTS = 1_000_000
    created = api_client.post(ADMIN, [board_item(metric, 1_000_000)]).json()
    assert created["issues"] == []
    assert created["created"][0]["maxParticipants"] == 1_000_000
    too_many = api_client.post(ADMIN, [{**board_item(metric, 1_000_001), "key": "x"}]).json()
    assert too_many["created"] == []


@pytest.fixture
def big_board(api_client, metric, tenant, settings) -> Leaderboard:
    """A 1,500-place board holding 1,200 participants: user p{n} has value n + 1."""
    settings.LEADERBOARD_MAX_PARTICIPANTS = 10_000
    assert api_client.post(ADMIN, [board_item(metric, 1500)]).status_code == 201
    board = Leaderboard.objects.get(key="big")
    users = EndUser.objects.bulk_create(
        EndUser(tenant=tenant, external_id=f"p{n}") for n in range(PARTICIPANTS)
    )
    reached = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    LeaderboardEntry.objects.bulk_create(
        LeaderboardEntry(
            leaderboard=board,
            run_start=board.start,
            user=user,
            value=Decimal(n + 1),
            reached_at=reached,
        )
        for n, user in enumerate(users)
    )
    return board


def test_a_board_past_1000_ranks_and_pages_to_its_end(api_client, big_board):
    assert api_client.get("/v1/users/p0/leaderboards/big").json()["rank"] == PARTICIPANTS
    assert api_client.get("/v1/users/p1199/leaderboards/big").json()["rank"] == 1
    page = api_client.get("/v1/leaderboards/big?offset=1150&limit=100").json()["rankings"]
    assert [(r["userId"], r["rank"], r["value"]) for r in page[:2]] == [
        ("p49", 1151, 50),
        ("p48", 1152, 50 - 1),
    ]
    assert len(page) == 50
    assert page[-1] == {"userId": "p0", "userName": None, "rank": 1200, "value": 1}
    around = api_client.get("/v1/leaderboards/big?userId=p11&limit=3").json()
    assert [r["userId"] for r in around["rankings"]] == ["p11", "p10", "p9"]


def test_a_newcomer_enters_a_big_board_with_its_rank(api_client, big_board):
    body = api_client.post(
        "/v1/metrics/words/event", {"user": {"id": "new"}, "value": 600.5}
    ).json()["leaderboards"]["big"]
    # Ahead: p600 .. p1199 (values 601 .. 1200).
    assert (body["rank"], body["previousRank"], body["threshold"]) == (601, None, 0)
    assert api_client.get("/v1/users/new/leaderboards/big").json()["rank"] == 601


def test_lowering_the_maximum_trims_and_ranks_stay_right(api_client, big_board):
    api_client.get("/v1/users/p5/leaderboards/big")  # the ranks are in use (and in Redis)
    updated = api_client.patch(ADMIN, [{"id": str(big_board.public_id), "maxParticipants": 1000}])
    assert updated.json()["issues"] == []
    assert LeaderboardEntry.objects.filter(leaderboard=big_board).count() == 1000
    assert api_client.get("/v1/users/p200/leaderboards/big").json()["rank"] == 1000
    body = api_client.post(
        "/v1/metrics/words/event", {"user": {"id": "late"}, "value": 1000.5}
    ).json()["leaderboards"]["big"]
    # Full: the newcomer beats p200 (201), who leaves; p201 (202) is now the lowest. Ahead of
    # the newcomer: p1000 .. p1199 (1001 .. 1200).
    assert (body["rank"], body["threshold"]) == (201, 202)
    assert api_client.get("/v1/users/p200/leaderboards/big").json()["rank"] is None


def test_the_rebuild_command_fills_redis_from_postgres(api_client, big_board, rank_store):
    if rank_store == "postgres":
        with pytest.raises(Exception, match="LEADERBOARD_RANKS_REDIS_URL"):
            call_command("leaderboard_ranks_rebuild")
        return
    call_command("leaderboard_ranks_rebuild")
    from apps.leaderboards import ranks

    run = ranks.RunKey(big_board.pk, big_board.start, "")
    conn = ranks._redis()
    assert conn is not None
    assert conn.client.zcard(run.keys()[0]) == PARTICIPANTS + 1  # and the marker
    assert api_client.get("/v1/users/p600/leaderboards/big").json()["rank"] == 600
