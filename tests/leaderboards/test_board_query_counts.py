"""Statement counts of the leaderboard paths, pinned, and the same at any board size (issue 13):
a page of rankings is two statements (the API key, the page); an event costs each active board
three when the user is on it (the entry, the update, and one aggregate for both ranks and the
threshold), two when Redis holds the ranks (apps/leaderboards/ranks.py)."""

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

# `sql`: make unit runs these on PostgreSQL too, whose statements differ (apps/core/db.py).
pytestmark = [pytest.mark.django_db, pytest.mark.sql]

PER_BOARD = {"postgres": 3, "redis": 2}


@pytest.fixture
def board(api_client, metric) -> Any:
    item = {
        "name": "Top",
        "key": "top",
        "rankBy": "metric",
        "metricId": str(metric.public_id),
        "status": "active",
    }
    response = api_client.post("/admin/v1/leaderboards", [item])
    assert response.status_code == 201, response.content
    return api_client


def join(client: Any, users: range) -> None:
    for n in users:
        body = {"user": {"id": f"u{n}", "name": f"User {n}"}, "value": n + 1}
        assert client.post("/v1/metrics/words/event", body).status_code == 201


def page(client: Any, limit: int = 100) -> tuple[list[dict[str, Any]], int]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/v1/leaderboards/top?limit={limit}")
    assert response.status_code == 200, response.content
    return response.json()["rankings"], len(queries.captured_queries)


def test_a_page_costs_the_same_statements_at_any_size(board):
    join(board, range(3))
    small, few = page(board)
    join(board, range(3, 150))
    full, many = page(board)
    assert few == many == 2
    assert [r["userId"] for r in small] == ["u2", "u1", "u0"]
    assert len(full) == 100
    assert full[0] == {"userId": "u149", "userName": "User 149", "rank": 1, "value": 150}
    assert full[-1]["rank"] == 100


def event_queries(client: Any, user: str, value: int = 1) -> tuple[int, dict[str, Any]]:
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/v1/metrics/words/event", {"user": {"id": user}, "value": value})
    assert response.status_code == 201, response.content
    return len(queries.captured_queries), response.json()


def test_an_event_costs_a_board_the_same_statements_at_any_size(
    rank_store, board, api_client, metric
):
    join(board, range(5))
    without_board = event_queries(api_client, "u0")[0]  # warm: same path, board included
    small, body = event_queries(api_client, "u0", 10)
    assert body["leaderboards"]["top"]["rank"] == 1
    assert body["leaderboards"]["top"]["previousRank"] == 5
    join(board, range(5, 80))
    large, body = event_queries(api_client, "u1", 100)
    ranks = body["leaderboards"]["top"]
    # u1 had 2: behind u2..u79 (3..80) and u0 (12).
    assert (ranks["rank"], ranks["previousRank"]) == (1, 80)
    assert small == large == without_board


def test_board_statements_on_top_of_a_plain_event(rank_store, api_client, metric):
    def plain() -> int:
        return event_queries(api_client, "solo")[0]

    plain()
    before = plain()
    item = {"name": "Top", "key": "top", "rankBy": "metric", "metricId": str(metric.public_id)}
    response = api_client.post("/admin/v1/leaderboards", [{**item, "status": "active"}])
    assert response.status_code == 201, response.content
    plain()  # enters the board
    assert plain() - before == PER_BOARD[rank_store]
