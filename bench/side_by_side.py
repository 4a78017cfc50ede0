"""The side-by-side cases of `make bench` (`run.py --compare`): each gamify figure next to the
raw-SQL ceiling (bench/ceiling) doing the same work on the same PostgreSQL, as a ratio.

| gamify case | its ceiling |
|---|---|
| `events` (no features configured) | `ceiling-event`: the six-statement event transaction |
| `events-full` (the full pipeline below) | `ceiling-event`; `ceiling-event-full`: its rows |
| `leaderboard-top100` | `ceiling-top100`: one ORDER BY ... LIMIT 100 |
| `points-read` | `ceiling-points-read`: one indexed lookup |

The full pipeline (issue 13's profile): a daily streak, 2 points systems with 5 triggers and
levels, 3 metric achievements and 2 active leaderboards, all on metric `pipeline`.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cases import (
    BOARD_KEY,
    BOARD_USERS,
    BoardReadWorker,
    Case,
    Check,
    EventsCase,
    EventsWorker,
    LeaderboardReadCase,
    ensure_words_board,
    read_board,
)

CEILING_BOARD = "words-board"
POINTS_USERS = 1000
POINTS_USER = "points-user-{}"
POINTS_KEY = "reader"
PIPELINE_METRIC = "pipeline"
ACTIVE = {"status": "active"}  # triggers are created inactive

# (label, gamify case, ceiling case), in the order of the table.
COMPARISON = [
    ("event, no features configured", "events", "ceiling-event"),
    ("event, full pipeline", "events-full", "ceiling-event"),
    ("event, full pipeline, vs same-work ceiling", "events-full", "ceiling-event-full"),
    ("GET /v1/leaderboards/{key}?limit=100", "leaderboard-top100", "ceiling-top100"),
    ("GET /v1/users/{id}/points/{key}", "points-read", "ceiling-points-read"),
]
# Cases run once each, in this order: the gamify events case before any board or streak exists
# (later configuration would make it pay for those steps), the full pipeline after it; the
# same-work ceiling right before it, starting from the same users (those of `events`).
COMPARE_ORDER = [
    "ceiling-event",
    "events",
    "ceiling-event-full",
    "events-full",
    "ceiling-top100",
    "leaderboard-top100",
    "ceiling-points-read",
    "points-read",
]


def _created(ctx: Any, path: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    status, body = ctx.api("POST", path, items)
    if status != 201 or body.get("issues"):
        raise RuntimeError(f"POST {path} failed: HTTP {status} {body}")
    return list(body["created"])


def _metric_id(ctx: Any, key: str, name: str) -> str:
    ctx.ensure_metric(key, name)
    _, metrics = ctx.api("GET", "/admin/v1/metrics?limit=100")
    return str(next(m["id"] for m in metrics if m["key"] == key))


def _send_all(ctx: Any, path: str, values: dict[str, int]) -> None:
    def send(item: tuple[str, int]) -> int:
        return ctx.api("POST", path, {"user": {"id": item[0]}, "value": item[1]})[0]

    with ThreadPoolExecutor(max(1, min(ctx.args.concurrency, 16))) as pool:
        statuses = Counter(pool.map(send, values.items()))
    if statuses != Counter({201: len(values)}):
        raise RuntimeError(f"seeding {path} failed: statuses {dict(statuses)}")


# --- the ceiling --------------------------------------------------------------------------


class CeilingEventCase(EventsCase):
    name = "ceiling-event"
    summary = "ceiling: the event transaction in six raw SQL statements"
    target = "ceiling"

    def __init__(self, args: Any) -> None:
        super().__init__(args)
        self.path = f"/event/{self.metric_key}"

    def setup(self, ctx: Any) -> None:
        pass

    def worker(self, index: int) -> EventsWorker:
        return EventsWorker(self.path, self.users, self.max_value, self.seed * 3000 + index)

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        sent: Counter[str] = Counter()
        highest: dict[str, Any] = {}
        for w in workers:
            sent.update(w.sent)
            for user_id, total in w.max_total.items():
                highest[user_id] = max(total, highest.get(user_id, total))
        wrong = sum(1 for user_id, total in highest.items() if total != sent[user_id])
        return [Check("ceiling: highest total answered = sum sent", wrong == 0, f"{wrong} off")]

    def verify_database(self, ctx: Any, workers: list[Any]) -> list[Check]:
        return []


class CeilingFullEventCase(CeilingEventCase):
    """The same rows as `events-full` (bench/ceiling/same_work.py), for the same stream of
    events: same users, values and seed."""

    name = "ceiling-event-full"
    summary = "ceiling: the full pipeline's rows in one raw SQL transaction (same work)"
    metric_key = PIPELINE_METRIC

    def __init__(self, args: Any) -> None:
        super().__init__(args)
        self.path = f"/event-full/{self.metric_key}"

    def setup(self, ctx: Any) -> None:
        # gamify's `events-full` finds the users that `events` created: so does this one.
        ctx.db_execute(
            "INSERT INTO same_enduser (created, updated, tenant_id, external_id, public_id,"
            " subscribe_to_emails, device_tokens, attributes, control, notification_preferences,"
            " last_active_at, last_active_on)"
            " SELECT created, updated, 1, external_id, public_id, subscribe_to_emails,"
            " device_tokens, attributes, control, notification_preferences, last_active_at,"
            " last_active_on FROM users_enduser WHERE external_id LIKE 'bench-user-%%'"
        )

    def worker(self, index: int) -> EventsWorker:
        # The seed of `events-full`'s workers: the same users and values in the same order.
        return EventsWorker(self.path, self.users, self.max_value, self.seed * 5000 + index)

    def verify_database(self, ctx: Any, workers: list[Any]) -> list[Check]:
        return same_work_checks(ctx, workers)


def same_work_checks(ctx: Any, workers: list[Any]) -> list[Check]:
    """What the configuration decides, per user, from their metric total T (one day: no
    streak of 3): XP = T + 50 * (T // 500), Coins = T // 10 + 5, the awards add up to the
    totals, one completion per achievement (10, 100, 1,000) reached, one streak; each board
    holds at most 1,000 entries, each equal to its user's total."""
    sent: Counter[str] = Counter()
    unsure: set[str] = set()
    for w in workers:
        sent.update(w.sent)
        unsure.update(w.unsure)
    rows = ctx.db_query(
        "SELECT u.external_id, t.total,"
        " (SELECT total FROM same_pointstotal p WHERE p.user_id = u.id AND p.system_id = 1),"
        " (SELECT total FROM same_pointstotal p WHERE p.user_id = u.id AND p.system_id = 2),"
        " (SELECT sum(awarded) FROM same_pointsaward a WHERE a.user_id = u.id),"
        " (SELECT count(*) FROM same_achievementcompletion c WHERE c.user_id = u.id),"
        " (SELECT count(*) FROM same_streakstate s WHERE s.user_id = u.id)"
        " FROM same_enduser u JOIN same_metrictotal t ON t.user_id = u.id"
    )
    entries = ctx.db_query(
        "SELECT e.leaderboard_id, count(*), count(*) FILTER (WHERE e.value <> CASE"
        " WHEN e.leaderboard_id = 1 THEN t.total ELSE p.total END)"
        " FROM same_leaderboardentry e JOIN same_metrictotal t ON t.user_id = e.user_id"
        " JOIN same_pointstotal p ON p.user_id = e.user_id AND p.system_id = 1"
        " GROUP BY e.leaderboard_id"
    )
    if rows is None or entries is None:
        return [Check("database: the same-work rows", True, "skipped: query failed (see log)")]
    wrong = []
    for user, total, xp, coins, awarded, completions, streaks in rows:
        units = int(total)
        expected = (
            units + 50 * (units // 500),
            units // 10 + 5,
            sum(units >= need for need in (10, 100, 1000)),
        )
        got = (xp, coins, completions)
        if got != expected or awarded != xp + coins or streaks != 1:
            wrong.append(f"{user}: {got} expected {expected}")
        elif user not in unsure and total != sent[user]:
            wrong.append(f"{user}: total {total} sent {sent[user]}")
    boards = {board: (count, off) for board, count, off in entries}
    full = all(count <= 1000 and off == 0 for count, off in boards.values())
    return [
        Check(
            "database: points, awards, completions and streak of every user",
            not wrong,
            f"{len(rows) - len(wrong)}/{len(rows)} users as the rules say"
            + (f"; first: {', '.join(wrong[:3])}" if wrong else ""),
        ),
        Check(
            "database: boards hold at most 1,000 entries, each the user's total",
            full and len(boards) == 2,
            f"entries, mismatched values by board: {boards}",
        ),
    ]


class CeilingTopWorker(BoardReadWorker):
    def next_request(self) -> tuple[str, str, bytes | None]:
        self._pending = ("ranking", "", time.perf_counter())
        return "GET", f"{self.path}?limit={self.limit}", None


class CeilingTopCase(Case):
    name = "ceiling-top100"
    summary = f"ceiling: the top 100 of {BOARD_USERS:,} in one raw SQL query"
    target = "ceiling"
    limit = 100

    def __init__(self, args: Any) -> None:
        self.seed: int = args.seed
        self.ranking: list[dict[str, Any]] = []

    def setup(self, ctx: Any) -> None:
        rng = random.Random(self.seed)
        values = {f"board-user-{n}": rng.randint(1, 1000) for n in range(BOARD_USERS)}
        ctx.db_execute(
            "INSERT INTO ceiling_user (external_id) SELECT unnest(%s::text[])"
            " ON CONFLICT DO NOTHING",
            (list(values),),
        )
        ctx.db_execute(
            "INSERT INTO ceiling_total (user_id, metric, total)"
            " SELECT u.id, %s, v.total FROM unnest(%s::text[], %s::int[]) AS v(external_id, total)"
            " JOIN ceiling_user u USING (external_id) ON CONFLICT DO NOTHING",
            (CEILING_BOARD, list(values), list(values.values())),
        )
        ranked = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
        self.ranking = [
            {"userId": u, "rank": i, "value": v} for i, (u, v) in enumerate(ranked, start=1)
        ]

    def worker(self, index: int) -> BoardReadWorker:
        return CeilingTopWorker(f"/leaderboard/{CEILING_BOARD}", self.ranking, self.limit, index)

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        bad = sum(sum(w.mismatches.values()) for w in workers)
        return [Check("every 200 is the seeded top 100", bad == 0, f"{bad} mismatches")]


class PointsReadWorker:
    """GET one random seeded user's points; every 200 must carry the total read at setup."""

    def __init__(self, path: str, expected: dict[str, int], seed: int) -> None:
        self.path = path
        self.expected = expected
        self.users = sorted(expected)
        self.rng = random.Random(seed)
        self.mismatches = 0
        self._pending = ""

    def next_request(self) -> tuple[str, str, bytes | None]:
        self._pending = self.rng.choice(self.users)
        return "GET", self.path.format(user=self._pending), None

    def record(self, status: int | None, body: bytes) -> None:
        if status != 200:
            return
        try:
            ok = json.loads(body)["total"] == self.expected[self._pending]
        except (ValueError, KeyError, TypeError):
            ok = False
        self.mismatches += not ok


class CeilingPointsCase(Case):
    name = "ceiling-points-read"
    summary = "ceiling: one user's points in one raw SQL query"
    target = "ceiling"

    def __init__(self, args: Any) -> None:
        self.expected: dict[str, int] = {}

    def setup(self, ctx: Any) -> None:
        users = [POINTS_USER.format(n) for n in range(POINTS_USERS)]
        ctx.db_execute(
            "INSERT INTO ceiling_user (external_id) SELECT unnest(%s::text[])"
            " ON CONFLICT DO NOTHING",
            (users,),
        )
        ctx.db_execute(
            "INSERT INTO ceiling_points (user_id, total) SELECT id, id %% 1000 FROM ceiling_user"
            " WHERE external_id = ANY(%s) ON CONFLICT DO NOTHING",
            (users,),
        )
        rows = ctx.db_query(
            "SELECT u.external_id, p.total FROM ceiling_points p"
            " JOIN ceiling_user u ON u.id = p.user_id WHERE u.external_id = ANY(%s)",
            (users,),
        )
        self.expected = {user: int(total) for user, total in rows}

    def worker(self, index: int) -> PointsReadWorker:
        return PointsReadWorker("/users/{user}/points", self.expected, index)

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        bad = sum(w.mismatches for w in workers)
        return [Check("every 200 has the seeded total", bad == 0, f"{bad} mismatches")]


# --- gamify -------------------------------------------------------------------------------


class BoardTopCase(LeaderboardReadCase):
    name = "leaderboard-top100"
    summary = f"GET /v1/leaderboards/{BOARD_KEY}?limit=100 on a {BOARD_USERS:,}-participant board"

    def worker(self, index: int) -> BoardReadWorker:
        return CeilingTopWorker(self.path, self.ranking, self.limit, index)

    def setup(self, ctx: Any) -> None:
        self.seeded = ensure_words_board(ctx, self.seed)
        self.ranking = read_board(ctx)


class PointsReadCase(Case):
    name = "points-read"
    summary = f"GET /v1/users/{{id}}/points/{POINTS_KEY} for {POINTS_USERS:,} users with points"

    def __init__(self, args: Any) -> None:
        self.seed: int = args.seed
        self.expected: dict[str, int] = {}

    def setup(self, ctx: Any) -> None:
        metric_id = _metric_id(ctx, POINTS_KEY, "Reader metric")
        [system] = _created(ctx, "/admin/v1/points", [{"name": "Reader", "key": POINTS_KEY}])
        _created(
            ctx,
            f"/admin/v1/points/{system['id']}/triggers",
            [
                {
                    "type": "metric",
                    "points": 1,
                    "metricId": metric_id,
                    "metricThreshold": 1,
                    **ACTIVE,
                }
            ],
        )
        rng = random.Random(self.seed)
        values = {POINTS_USER.format(n): rng.randint(1, 1000) for n in range(POINTS_USERS)}
        _send_all(ctx, f"/v1/metrics/{POINTS_KEY}/event", values)
        for user in list(values)[:3]:
            status, body = ctx.api("GET", f"/v1/users/{user}/points/{POINTS_KEY}")
            if status != 200:
                raise RuntimeError(f"points read after seeding: HTTP {status} {body}")
        self.expected = dict(values)  # one point per unit

    def worker(self, index: int) -> PointsReadWorker:
        path = "/v1/users/{user}/points/" + POINTS_KEY
        return PointsReadWorker(path, self.expected, self.seed * 4000 + index)

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        bad = sum(w.mismatches for w in workers)
        return [Check("every 200 has the total earned at setup", bad == 0, f"{bad} mismatches")]


class FullPipelineEventsCase(EventsCase):
    name = "events-full"
    summary = (
        "POST /v1/metrics/pipeline/event with a streak, 2 points systems (5 triggers, levels), "
        "3 achievements and 2 active leaderboards configured"
    )
    metric_key = PIPELINE_METRIC

    def worker(self, index: int) -> EventsWorker:
        return EventsWorker(self.path, self.users, self.max_value, self.seed * 5000 + index)

    def setup(self, ctx: Any) -> None:
        metric_id = _metric_id(ctx, PIPELINE_METRIC, "Pipeline")
        status, body = ctx.api(
            "PATCH",
            "/admin/v1/streaks/settings",
            {"frequency": "daily", "metrics": [{"key": PIPELINE_METRIC, "threshold": 1}]},
        )
        if status != 200:
            raise RuntimeError(f"streak settings failed: HTTP {status} {body}")
        xp, coins = _created(
            ctx,
            "/admin/v1/points",
            [{"name": "XP", "key": "xp"}, {"name": "Coins", "key": "coins"}],
        )
        _created(
            ctx,
            f"/admin/v1/points/{xp['id']}/triggers",
            [
                {
                    "type": "metric",
                    "points": 1,
                    "metricId": metric_id,
                    "metricThreshold": 1,
                    **ACTIVE,
                },
                {
                    "type": "metric",
                    "points": 50,
                    "metricId": metric_id,
                    "metricThreshold": 500,
                    **ACTIVE,
                },
                {"type": "streak", "points": 20, "streakLength": 3, **ACTIVE},
            ],
        )
        _created(
            ctx,
            f"/admin/v1/points/{coins['id']}/triggers",
            [
                {
                    "type": "metric",
                    "points": 1,
                    "metricId": metric_id,
                    "metricThreshold": 10,
                    **ACTIVE,
                },
                {"type": "user_creation", "points": 5, **ACTIVE},
            ],
        )
        for system in (xp, coins):
            _created(
                ctx,
                f"/admin/v1/points/{system['id']}/levels",
                [
                    {"key": f"l{n}", "name": f"Level {n}", "points": points}
                    for n, points in enumerate((100, 1000, 10000), start=1)
                ],
            )
        _created(
            ctx,
            "/admin/v1/achievements",
            [
                {
                    "name": f"{value} {PIPELINE_METRIC}",
                    "trigger": "metric",
                    "metricId": metric_id,
                    "metricValue": value,
                    "status": "active",
                }
                for value in (10, 100, 1000)
            ],
        )
        _created(
            ctx,
            "/admin/v1/leaderboards",
            [
                {
                    "name": "Pipeline",
                    "key": "pipeline-board",
                    "rankBy": "metric",
                    "metricId": metric_id,
                    "status": "active",
                },
                {
                    "name": "XP",
                    "key": "xp-board",
                    "rankBy": "points",
                    "pointsSystemId": xp["id"],
                    "status": "active",
                },
            ],
        )


SIDE_BY_SIDE_CASES: dict[str, type[Case]] = {
    case.name: case
    for case in (
        CeilingEventCase,
        CeilingFullEventCase,
        CeilingTopCase,
        CeilingPointsCase,
        BoardTopCase,
        PointsReadCase,
        FullPipelineEventsCase,
    )
}
