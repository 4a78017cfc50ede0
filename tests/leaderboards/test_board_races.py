"""A user's entry displaced by another user's transaction between the read and the write
(found by `make bench` at 2,000 users on 1,000-place boards: the event answered 500)."""

from typing import Any

import pytest

from apps.leaderboards import services
from apps.leaderboards.models import LeaderboardEntry

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("rank_store")]


def send(client: Any, user: str, value: int) -> dict[str, Any]:
    response = client.post("/v1/metrics/words/event", {"user": {"id": user}, "value": value})
    assert response.status_code == 201, response.content
    return dict(response.json()["leaderboards"]["top"])


def test_an_entry_displaced_meanwhile_re_enters_with_the_run_gain(api_client, metric, monkeypatch):
    item = {
        "name": "Top",
        "key": "top",
        "rankBy": "metric",
        "metricId": str(metric.public_id),
        "status": "active",
        "maxParticipants": 3,
    }
    assert api_client.post("/admin/v1/leaderboards", [item]).status_code == 201
    for user, value in (("a", 1), ("b", 5), ("c", 6)):
        send(api_client, user, value)

    real = services.entries_move

    def displaced_after_the_read(moves: list[tuple[int, Any, Any]]) -> set[int]:
        """The user's entry was read; another user's newcomer takes the place now."""
        LeaderboardEntry.objects.filter(pk__in=[pk for pk, _, _ in moves]).delete()
        return real(moves)

    monkeypatch.setattr(services, "entries_move", displaced_after_the_read)
    board = send(api_client, "a", 10)  # a had 1, gains 10: re-enters with the run's 11
    monkeypatch.undo()
    assert (board["rank"], board["previousRank"]) == (1, None)
    ranking = api_client.get("/v1/leaderboards/top").json()["rankings"]
    assert [(r["userId"], r["value"]) for r in ranking] == [("a", 11), ("c", 6), ("b", 5)]
