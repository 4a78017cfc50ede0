"""The same-work ceiling (bench/ceiling/same_work.py) writes the rows that gamify's full-pipeline
event writes: one random stream of events (new users, same-day and next-day events, points
multiples, achievements, both boards) goes through gamify's API and through the ceiling's view,
on PostgreSQL, and every table the pipeline wrote is compared with its ceiling copy: row
counts, and the values that the rules decide (totals, awards and their keys, marks, levels,
completions, streaks, entries). It also lists the tables gamify's event statements write, so
that a new write in the pipeline fails here until the ceiling does it too.

Run on PostgreSQL (the ceiling is PostgreSQL SQL), e.g. `DATABASE_URL=postgres://postgres@
127.0.0.1:5432/gamify_same .venv/bin/pytest -n 0 bench/test_same_work.py`; skipped on SQLite.
"""

import datetime as dt
import importlib
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from tests.conftest import *  # noqa: F403 - the suite's fixtures (api_client, metric, ...)
from tests.pipeline.test_full_pipeline_query_count import configured  # noqa: F401 - fixture

pytestmark = [pytest.mark.django_db]

CEILING = Path(__file__).resolve().parent / "ceiling"
# gamify's tables and their copies; the API key's last use is authentication's, not the event's.
TABLES = {
    "users_enduser": "same_enduser",
    "metrics_metrictotal": "same_metrictotal",
    "metrics_metricdailychange": "same_metricdailychange",
    "metrics_metricevent": "same_metricevent",
    "streaks_streakstate": "same_streakstate",
    "streaks_streakperiod": "same_streakperiod",
    "achievements_achievementcompletion": "same_achievementcompletion",
    "points_pointsaward": "same_pointsaward",
    "points_pointstotal": "same_pointstotal",
    "points_pointsdailychange": "same_pointsdailychange",
    "points_pointstriggermark": "same_pointstriggermark",
    "leaderboards_leaderboardentry": "same_leaderboardentry",
}
NOT_THE_EVENTS = {"accounts_apikey"}
WRITE = re.compile(r"^(?:WITH|INSERT|UPDATE|DELETE)\b.*", re.S)
WRITTEN = re.compile(r'(?:INSERT INTO|UPDATE|DELETE FROM) "(\w+)"')


def same_work() -> Any:
    if str(CEILING.parent) not in sys.path:
        sys.path.insert(0, str(CEILING.parent))  # the ceiling's project: bench/ceiling
    return importlib.import_module("ceiling.same_work")


def stream(seed: int = 25) -> list[tuple[int, str, int]]:
    """(day, user, value): 6 users over two days; values large enough to cross every
    achievement and several 500-unit multiples."""
    rng = random.Random(seed)
    return [(day, f"u{rng.randrange(6)}", rng.randint(1, 400)) for day in (0, 1) for _ in range(20)]


def rows(table: str, columns: str, order: str) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT {columns} FROM "{table}" ORDER BY {order}')  # noqa: S608
        return [tuple(row) for row in cursor.fetchall()]


def picture(t: dict[str, str]) -> dict[str, Any]:
    """What the rules decide, per table, independent of primary keys and configuration ids."""
    u = f'(SELECT external_id FROM "{t["users_enduser"]}" x WHERE x.id = user_id)'  # noqa: S608
    system = "dense_rank() OVER (ORDER BY system_id)"
    return {
        "users": rows(t["users_enduser"], "external_id, last_active_on", "1"),
        "totals": rows(t["metrics_metrictotal"], f"{u}, total", "1"),
        "daily": rows(t["metrics_metricdailychange"], f"{u}, date, change, events", "1, 2"),
        "events": rows(t["metrics_metricevent"], f"{u}, value, total_after, local_date", "1, 3"),
        "streaks": rows(t["streaks_streakstate"], f"{u}, length, started, settled_through", "1"),
        "periods": rows(t["streaks_streakperiod"], f"{u}, period_start, length, extended", "1, 2"),
        "completions": Counter(r[0] for r in rows(t["achievements_achievementcompletion"], u, "1")),
        "awards": rows(
            t["points_pointsaward"],
            f"{u}, {system}, awarded, total_after, split_part(dedupe_key, ':', 1),"
            " split_part(dedupe_key, ':', 3), local_date",
            "1, 2, 4",
        ),
        "points": rows(t["points_pointstotal"], f"{u}, {system}, total, level_id IS NULL", "1, 2"),
        "points_daily": rows(
            t["points_pointsdailychange"], f"{u}, {system}, date, change", "1, 2, 3"
        ),
        "marks": rows(
            t["points_pointstriggermark"],
            f"{u}, dense_rank() OVER (ORDER BY trigger_id), mark",
            "1, 2",
        ),
        "entries": rows(
            t["leaderboards_leaderboardentry"],
            f"{u}, dense_rank() OVER (ORDER BY leaderboard_id), value",
            "1, 2",
        ),
    }


def both_ways(client: Any, ceiling: Any) -> tuple[Counter[str], list[tuple[int, int]]]:
    """The stream through gamify's API and the ceiling's view, answer by answer; the tables
    gamify's statements wrote and the sizes of both bodies."""
    factory = RequestFactory()
    start = dt.datetime.now(dt.UTC).replace(hour=12) + dt.timedelta(days=1)
    written: Counter[str] = Counter()
    sizes: list[tuple[int, int]] = []
    for day, user, value in stream():
        body = {"user": {"id": user}, "value": value}
        with time_machine.travel(start + dt.timedelta(days=day), tick=False):
            with CaptureQueriesContext(connection) as queries:
                mine = client.post("/v1/metrics/words/event", body)
            assert mine.status_code == 201, mine.content
            request = factory.post("/", json.dumps(body), content_type="application/json")
            theirs = ceiling.event(request, "pipeline")
            assert theirs.status_code == 201, theirs.content
        for query in queries.captured_queries:
            if WRITE.match(query["sql"]):
                written.update(set(WRITTEN.findall(query["sql"])) - NOT_THE_EVENTS)
        a, b = mine.json(), json.loads(theirs.content)
        assert b["total"] == a["total"]
        assert b["currentStreak"]["length"] == a["currentStreak"]["length"]
        assert len(b["achievements"]) == len(a["achievements"])
        assert {k: v["added"] for k, v in b["points"].items()} == {
            {"c": "coins"}.get(k, k): v["added"] for k, v in a["points"].items()
        }
        places = ("rank", "previousRank", "threshold")
        assert [[v[k] for k in places] for v in b["leaderboards"].values()] == [
            [v[k] for k in places] for v in a["leaderboards"].values()
        ], (user, value)
        sizes.append((len(mine.content), len(theirs.content)))
    return written, sizes


@pytest.fixture
def ceiling(settings: Any) -> Any:
    if connection.vendor != "postgresql":
        pytest.skip("the ceiling is PostgreSQL SQL")
    settings.LEADERBOARD_RANKS_REDIS_URL = ""  # ranks counted by PostgreSQL, as the ceiling does
    with connection.cursor() as cursor:
        cursor.execute((CEILING / "schema.sql").read_text())
    return same_work()


def test_the_same_work_ceiling_writes_what_the_full_pipeline_writes(
    configured,  # noqa: F811 - fixture
    ceiling,
):
    written, sizes = both_ways(configured, ceiling)
    # Every table gamify's events wrote has its copy, and no other.
    assert set(written) == set(TABLES), written
    assert picture({k: k for k in TABLES}) == picture(TABLES)
    # The bodies are of the same shape and about the same size: the ceiling spells the bench's
    # names (`pipeline-board`, `Coins`, ...), longer than this configuration's (`w`, `c`);
    # `make bench` prints both cases' mean body size.
    ratio = sum(b for _, b in sizes) / sum(a for a, _ in sizes)
    assert 0.9 < ratio < 1.15, sizes


def test_on_full_boards_newcomers_displace_the_lowest_in_both(
    configured,  # noqa: F811 - fixture
    ceiling,
    monkeypatch,
):
    # Boards of 3 participants for 6 users: newcomers beat the lowest entry or stay out.
    response = configured.get("/admin/v1/leaderboards?limit=100")
    assert response.status_code == 200, response.content
    changes = [{"id": board["id"], "maxParticipants": 3} for board in response.json()]
    response = configured.patch("/admin/v1/leaderboards", changes)
    assert response.status_code == 200, response.content
    monkeypatch.setattr(ceiling, "MAX_PARTICIPANTS", 3)
    both_ways(configured, ceiling)
    assert picture({k: k for k in TABLES}) == picture(TABLES)
