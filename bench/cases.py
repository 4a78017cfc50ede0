"""Benchmark cases. Add a case by subclassing `Case` and registering it in `CASES`.

A case does three things:

- `setup(ctx)`: create the configuration (and any seed data) it needs through the admin API,
  once, against the running server, before its warm-up starts;
- `worker(index)`: return a per-thread `CaseWorker` (bench/loadgen.py) that builds each request
  and books each response; workers are not shared between threads, so they need no locks;
- `verify(ctx, workers)`: after the load, while the server still runs, check through the API
  that what the server stored agrees with what the workers sent; return `Check`s;
- `verify_database(ctx, workers)`: the same against the database, after gunicorn has stopped
  (every commit visible). Cases run one after another on one database, so a later case that
  also writes events must account for the earlier ones.

`ctx` is `run.Context`: the base URL, the admin API key, `ctx.api(method, path, body)` for
JSON requests, `ctx.ensure_metric(key, name)`, `ctx.args` (the parsed command line) and
`ctx.db_query(sql, params)` for read-only checks against the benchmark database.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise
from typing import Any


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


class Case:
    name = ""
    summary = ""
    expected_status = 200

    def setup(self, ctx: Any) -> None:
        """Create what the case needs; runs once before the warm-up."""

    def worker(self, index: int) -> Any:
        raise NotImplementedError

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        """Checks through the API, while the server still runs."""
        return []

    def verify_database(self, ctx: Any, workers: list[Any]) -> list[Check]:
        """Checks against the database, after the server has stopped (all commits visible)."""
        return []

    def settings(self) -> dict[str, Any]:
        """Case-specific settings, stored with the result."""
        return {}

    def stats(self, workers: list[Any]) -> dict[str, Any]:
        """Case-specific figures of the run (warm-up included), printed and stored."""
        return {}


# --- events: POST /v1/metrics/{key}/event ---------------------------------------------------


class EventsWorker:
    """Sends events for random users and remembers, per user, what was sent and answered."""

    def __init__(self, path: str, users: int, max_value: int, seed: int) -> None:
        self.path = path
        self.users = users
        self.max_value = max_value
        self.rng = random.Random(seed)
        self.sent: dict[str, int] = defaultdict(int)  # sum of values answered 201
        self.count: Counter[str] = Counter()  # events answered 201
        self.max_total: dict[str, Decimal] = {}  # highest `total` answered
        self.unsure: Counter[str] = Counter()  # requests without a 201: outcome unknown
        self.body_bytes = 0  # of the 201s' bodies
        self._pending: tuple[str, int] = ("", 0)

    def next_request(self) -> tuple[str, str, bytes | None]:
        user_id = f"bench-user-{self.rng.randrange(self.users)}"
        value = self.rng.randint(1, self.max_value)
        self._pending = (user_id, value)
        body = json.dumps({"user": {"id": user_id}, "value": value}).encode()
        return "POST", self.path, body

    def record(self, status: int | None, body: bytes) -> None:
        user_id, value = self._pending
        if status != 201:
            self.unsure[user_id] += 1
            return
        self.sent[user_id] += value
        self.count[user_id] += 1
        self.body_bytes += len(body)
        try:
            total = Decimal(str(json.loads(body)["total"]))
        except (ValueError, KeyError, TypeError):
            self.unsure[user_id] += 1
            return
        if user_id not in self.max_total or total > self.max_total[user_id]:
            self.max_total[user_id] = total


class EventsCase(Case):
    name = "events"
    summary = "POST /v1/metrics/words/event for random users (the synchronous event pipeline)"
    expected_status = 201
    metric_key = "words"
    max_value = 100

    def __init__(self, args: Any) -> None:
        self.users: int = args.users
        self.seed: int = args.seed
        self.verify_users: int = args.verify_users
        self.path = f"/v1/metrics/{self.metric_key}/event"

    def settings(self) -> dict[str, Any]:
        return {
            "endpoint": f"POST {self.path}",
            "users": self.users,
            "values": f"random integers 1..{self.max_value}",
            "seed": self.seed,
        }

    def setup(self, ctx: Any) -> None:
        ctx.ensure_metric(self.metric_key, "Words")

    def stats(self, workers: list[Any]) -> dict[str, Any]:
        users: set[str] = set()
        for w in workers:
            users.update(w.count)
        events = sum(sum(w.count.values()) for w in workers)
        # The database is fresh: each distinct user was created by its first event, which
        # costs more (an INSERT of the user, its total and its rollup) than a later one.
        return {
            "events_201": events,
            "distinct_users": len(users),
            "events_creating_user_pct": round(100.0 * len(users) / events, 1) if events else 0,
            "mean_body_bytes": round(sum(w.body_bytes for w in workers) / events) if events else 0,
        }

    def worker(self, index: int) -> EventsWorker:
        return EventsWorker(self.path, self.users, self.max_value, self.seed * 1000 + index)

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        sent: Counter[str] = Counter()
        count: Counter[str] = Counter()
        unsure: Counter[str] = Counter()
        max_total: dict[str, Decimal] = {}
        for w in workers:
            sent.update(w.sent)
            count.update(w.count)
            unsure.update(w.unsure)
            for user_id, total in w.max_total.items():
                max_total[user_id] = max(total, max_total.get(user_id, total))
        sure = [u for u in sent if u not in unsure]
        checks: list[Check] = []

        # 1. Every 201 reports the user's new total. Values are positive and one user's events
        # are serialized by the user's row lock, so the highest total answered must equal the
        # sum of everything sent for that user: a lost increment shows up here, for every user.
        wrong = [u for u in sure if max_total.get(u) != sent[u]]
        checks.append(
            Check(
                "response totals match the values sent (every user)",
                not wrong,
                f"{len(sure) - len(wrong)}/{len(sure)} users consistent"
                + (f"; first mismatches: {_mismatches(wrong, max_total, sent)}" if wrong else "")
                + (f"; {len(unsure)} users skipped (a request without 201)" if unsure else ""),
            )
        )

        # 2. Read back totals through the API: the busiest user, plus a few random ones.
        if sure and self.verify_users > 0:
            busiest = max(sure, key=lambda u: (count[u], u))
            rng = random.Random(self.seed)
            others = rng.sample(
                sorted(set(sure) - {busiest}), min(len(sure), self.verify_users) - 1
            )
            for user_id in [busiest, *others]:
                status, body = ctx.api("GET", f"/v1/users/{user_id}/metrics/{self.metric_key}")
                current = (
                    Decimal(str(body.get("current")))
                    if status == 200 and isinstance(body, dict)
                    else None
                )
                checks.append(
                    Check(
                        f"GET /v1/users/{user_id}/metrics/{self.metric_key}",
                        current == sent[user_id],
                        f"current={current} sent={sent[user_id]} over {count[user_id]} events"
                        + ("" if status == 200 else f" (HTTP {status}: {body})"),
                    )
                )
        return checks

    def verify_database(self, ctx: Any, workers: list[Any]) -> list[Check]:
        """Checks run against the database after the server has stopped."""
        total_events = sum(sum(w.count.values()) for w in workers)
        total_value = sum(sum(w.sent.values()) for w in workers)
        unsure = sum(sum(w.unsure.values()) for w in workers)
        # This case's metric and users only: other cases of the run write events too.
        rows = ctx.db_query(
            "SELECT (SELECT count(*) FROM metrics_metricevent e"
            "  JOIN metrics_metric m ON m.id = e.metric_id"
            "  JOIN users_enduser u ON u.id = e.user_id"
            "  WHERE m.key = %s AND u.external_id LIKE 'bench-user-%%'),"
            " (SELECT coalesce(sum(t.total), 0) FROM metrics_metrictotal t"
            "  JOIN metrics_metric m ON m.id = t.metric_id"
            "  JOIN users_enduser u ON u.id = t.user_id"
            "  WHERE m.key = %s AND u.external_id LIKE 'bench-user-%%')",
            (self.metric_key, self.metric_key),
        )
        if rows is None:
            return [Check("database totals", True, "skipped: query failed (see log)")]
        events, value = rows[0]
        exact = unsure == 0
        ok = (events == total_events and value == total_value) if exact else events >= total_events
        return [
            Check(
                "database: event rows and sum of totals",
                ok,
                f"rows={events} (201s={total_events}), sum(total)={value} (sent={total_value})"
                + ("" if exact else f"; {unsure} requests without 201, compared as lower bound"),
            )
        ]


def _mismatches(
    users: list[str], got: dict[str, Decimal], sent: Counter[str], limit: int = 5
) -> str:
    return ", ".join(f"{u}: answered {got.get(u)} sent {sent[u]}" for u in users[:limit])


# --- leaderboards: a 1,000-participant metric board ------------------------------------------

BOARD_KEY = "words-board"
BOARD_USERS = 1000  # participants = the board's maximum (reference: maxParticipants <= 1000)
BOARD_USER = "board-user-{}"  # not the events case's users, whose totals would count in


def ensure_words_board(ctx: Any, seed: int) -> dict[str, int] | None:
    """The active metric board `words-board` on metric `words`, with one event for each of
    BOARD_USERS users (values 1..1000, seeded), all through the API. Returns the values sent,
    or None when an earlier case of this run already made the board."""
    ctx.ensure_metric(EventsCase.metric_key, "Words")
    status, boards = ctx.api("GET", "/admin/v1/leaderboards?limit=100")
    if status == 200 and any(b["key"] == BOARD_KEY for b in boards):
        return None
    status, metrics = ctx.api("GET", "/admin/v1/metrics?limit=100")
    metric_id = next(m["id"] for m in metrics if m["key"] == EventsCase.metric_key)
    body = [
        {
            "name": "Words",
            "key": BOARD_KEY,
            "rankBy": "metric",
            "metricId": metric_id,
            "status": "active",
        }
    ]
    status, created = ctx.api("POST", "/admin/v1/leaderboards", body)
    if status != 201 or created.get("issues"):
        raise RuntimeError(f"creating leaderboard {BOARD_KEY!r} failed: HTTP {status} {created}")
    rng = random.Random(seed)
    values = {BOARD_USER.format(n): rng.randint(1, 1000) for n in range(BOARD_USERS)}

    def send(item: tuple[str, int]) -> int:
        user_id, value = item
        path = f"/v1/metrics/{EventsCase.metric_key}/event"
        return ctx.api("POST", path, {"user": {"id": user_id}, "value": value})[0]

    with ThreadPoolExecutor(max(1, min(ctx.args.concurrency, 16))) as pool:
        statuses = Counter(pool.map(send, values.items()))
    if statuses != Counter({201: BOARD_USERS}):
        raise RuntimeError(f"seeding {BOARD_KEY!r} failed: statuses {dict(statuses)}")
    return values


def read_board(ctx: Any) -> list[dict[str, Any]]:
    """The whole current run of the board, in rank order, through the application API."""
    status, body = ctx.api("GET", f"/v1/leaderboards/{BOARD_KEY}?limit=1000")
    if status != 200:
        raise RuntimeError(f"GET /v1/leaderboards/{BOARD_KEY} failed: HTTP {status} {body}")
    return list(body["rankings"])


def board_checks(rankings: list[dict[str, Any]], expected: dict[str, int], what: str) -> Check:
    """The board holds exactly the expected users, with the expected values, in rank order."""
    got = {r["userId"]: r["value"] for r in rankings}
    wrong = sorted(u for u in expected if got.get(u) != expected[u])
    ordered = all(a["value"] >= b["value"] for a, b in pairwise(rankings))
    ranks = [r["rank"] for r in rankings] == list(range(1, len(rankings) + 1))
    ok = not wrong and set(got) == set(expected) and ordered and ranks
    detail = (
        f"{len(rankings)} participants, {len(expected) - len(wrong)}/{len(expected)} values as "
        f"expected, ordered by value {ordered}, ranks 1..n {ranks}"
    )
    if wrong:
        detail += "; first mismatches: " + ", ".join(
            f"{u}: {got.get(u)} expected {expected[u]}" for u in wrong[:5]
        )
    return Check(what, ok, detail)


class BoardReadWorker:
    """Alternates the ranking page and one random participant's rank, and compares every
    answer with the board as read at setup (nothing writes to it meanwhile)."""

    def __init__(self, path: str, ranking: list[dict[str, Any]], limit: int, seed: int) -> None:
        self.path = path
        self.limit = limit
        self.page = [(r["userId"], r["rank"], r["value"]) for r in ranking[:limit]]
        self.by_user = {r["userId"]: (r["rank"], r["value"]) for r in ranking}
        self.users = sorted(self.by_user)
        self.rng = random.Random(seed)
        self.turn = 0
        self.count: Counter[str] = Counter()
        self.mismatches: Counter[str] = Counter()
        self.examples: list[str] = []
        self.seconds: dict[str, float] = defaultdict(float)
        self._pending: tuple[str, str, float] = ("", "", 0.0)

    def next_request(self) -> tuple[str, str, bytes | None]:
        self.turn += 1
        if self.turn % 2:
            kind, user_id, path = "ranking", "", f"{self.path}?limit={self.limit}"
        else:
            user_id = self.rng.choice(self.users)
            kind, path = "user", f"/v1/users/{user_id}/leaderboards/{BOARD_KEY}"
        self._pending = (kind, user_id, time.perf_counter())
        return "GET", path, None

    def record(self, status: int | None, body: bytes) -> None:
        kind, user_id, started = self._pending
        self.seconds[kind] += time.perf_counter() - started
        self.count[kind] += 1
        if status != 200:
            return
        try:
            data = json.loads(body)
            if kind == "ranking":
                got: Any = [(r["userId"], r["rank"], r["value"]) for r in data["rankings"]]
                ok = got == self.page
            else:
                got = (data["rank"], data["value"])
                ok = got == self.by_user[user_id]
        except (ValueError, KeyError, TypeError) as exc:
            got, ok = repr(exc), False
        if not ok:
            self.mismatches[kind] += 1
            if len(self.examples) < 3:
                self.examples.append(f"{kind} {user_id}: {str(got)[:200]}")


class LeaderboardReadCase(Case):
    name = "leaderboard-read"
    summary = (
        f"GET /v1/leaderboards/{BOARD_KEY}?limit=100 and GET /v1/users/{{id}}/leaderboards/"
        f"{BOARD_KEY}, alternately, on a {BOARD_USERS:,}-participant metric board"
    )
    expected_status = 200
    limit = 100

    def __init__(self, args: Any) -> None:
        self.seed: int = args.seed
        self.path = f"/v1/leaderboards/{BOARD_KEY}"
        self.seeded: dict[str, int] | None = None
        self.ranking: list[dict[str, Any]] = []

    def settings(self) -> dict[str, Any]:
        return {
            "endpoints": [
                f"GET {self.path}?limit={self.limit}",
                f"GET /v1/users/{{id}}/leaderboards/{BOARD_KEY} (id uniform over participants)",
            ],
            "participants": BOARD_USERS,
            "seed_values": "one event per participant, random integers 1..1000",
            "seed": self.seed,
        }

    def setup(self, ctx: Any) -> None:
        self.seeded = ensure_words_board(ctx, self.seed)
        self.ranking = read_board(ctx)

    def worker(self, index: int) -> BoardReadWorker:
        return BoardReadWorker(self.path, self.ranking, self.limit, self.seed * 1000 + index)

    def stats(self, workers: list[Any]) -> dict[str, Any]:
        stats: dict[str, Any] = {}
        for kind in ("ranking", "user"):
            count = sum(w.count[kind] for w in workers)
            seconds = sum(w.seconds[kind] for w in workers)
            stats[f"{kind}_requests"] = count
            # Timed by the worker (warm-up included): the split of the mixed latency.
            stats[f"{kind}_mean_ms"] = round(1000 * seconds / count, 1) if count else None
        return stats

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        checks = []
        if self.seeded is not None:
            checks.append(board_checks(self.ranking, self.seeded, "board after seeding"))
        mismatches: Counter[str] = Counter()
        for w in workers:
            mismatches.update(w.mismatches)
        examples = [e for w in workers for e in w.examples][:3]
        checks.append(
            Check(
                "every 200 matches the board read at setup",
                not mismatches,
                f"mismatches: ranking {mismatches['ranking']}, user {mismatches['user']}"
                + (f"; e.g. {examples}" if examples else ""),
            )
        )
        checks.append(
            board_checks(
                read_board(ctx),
                {r["userId"]: r["value"] for r in self.ranking},
                "board unchanged by the reads",
            )
        )
        return checks


class RankedEventsWorker(EventsWorker):
    """EventsWorker for the board's participants; also books the board's rank in each 201."""

    def __init__(self, path: str, max_value: int, seed: int) -> None:
        super().__init__(path, BOARD_USERS, max_value, seed)
        self.ranked = 0  # 201s whose `leaderboards` held the board with a rank
        self.moved = 0  # ... whose rank differed from previousRank

    def next_request(self) -> tuple[str, str, bytes | None]:
        user_id = BOARD_USER.format(self.rng.randrange(self.users))
        value = self.rng.randint(1, self.max_value)
        self._pending = (user_id, value)
        return "POST", self.path, json.dumps({"user": {"id": user_id}, "value": value}).encode()

    def record(self, status: int | None, body: bytes) -> None:
        super().record(status, body)
        if status != 201:
            return
        try:
            board = json.loads(body)["leaderboards"][BOARD_KEY]
        except (ValueError, KeyError, TypeError):
            return
        if board.get("rank") is not None:
            self.ranked += 1
            self.moved += board["rank"] != board.get("previousRank")


class EventsRankedCase(Case):
    name = "events-ranked"
    summary = (
        f"POST /v1/metrics/words/event for the participants of the active {BOARD_USERS:,}-user "
        f"board {BOARD_KEY} (every event re-ranks)"
    )
    expected_status = 201
    max_value = 100

    def __init__(self, args: Any) -> None:
        self.seed: int = args.seed
        self.path = f"/v1/metrics/{EventsCase.metric_key}/event"
        self.before: dict[str, int] = {}

    def settings(self) -> dict[str, Any]:
        return {
            "endpoint": f"POST {self.path}",
            "board": f"{BOARD_KEY}: rankBy metric, perpetual, active, {BOARD_USERS} participants",
            "users": f"{BOARD_USERS} board participants (--users is not used)",
            "values": f"random integers 1..{self.max_value}",
            "seed": self.seed,
        }

    def setup(self, ctx: Any) -> None:
        ensure_words_board(ctx, self.seed)
        self.before = {r["userId"]: r["value"] for r in read_board(ctx)}

    def worker(self, index: int) -> RankedEventsWorker:
        return RankedEventsWorker(self.path, self.max_value, self.seed * 2000 + index)

    def stats(self, workers: list[Any]) -> dict[str, Any]:
        events = sum(sum(w.count.values()) for w in workers)
        ranked = sum(w.ranked for w in workers)
        moved = sum(w.moved for w in workers)
        return {
            "events_201": events,
            "ranked_pct": round(100.0 * ranked / events, 1) if events else 0,
            "rank_changed_pct": round(100.0 * moved / events, 1) if events else 0,
        }

    def _expected(self, workers: list[Any]) -> tuple[dict[str, int], int]:
        expected = dict(self.before)
        unsure = 0
        for w in workers:
            for user_id, value in w.sent.items():
                expected[user_id] += value
            unsure += sum(w.unsure.values())
        return expected, unsure

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        expected, unsure = self._expected(workers)
        events = sum(sum(w.count.values()) for w in workers)
        ranked = sum(w.ranked for w in workers)
        checks = [
            Check(
                "every 201 ranks the user on the board",
                ranked == events,
                f"{ranked}/{events} events answered with the board's rank",
            )
        ]
        if unsure:
            checks.append(Check("board values", True, f"skipped: {unsure} requests without 201"))
        else:
            checks.append(board_checks(read_board(ctx), expected, "board = before + events sent"))
        return checks

    def verify_database(self, ctx: Any, workers: list[Any]) -> list[Check]:
        expected, unsure = self._expected(workers)
        rows = ctx.db_query(
            "SELECT count(*), coalesce(sum(e.value), 0) FROM leaderboards_leaderboardentry e"
            " JOIN leaderboards_leaderboard b ON b.id = e.leaderboard_id WHERE b.key = %s",
            (BOARD_KEY,),
        )
        if rows is None or unsure:
            return [Check("database: board entries", True, "skipped (query failed or unsure)")]
        count, total = rows[0]
        want = sum(expected.values())
        return [
            Check(
                "database: board entries and sum of values",
                count == len(expected) and total == want,
                f"entries={count} (expected {len(expected)}), sum={total} (expected {want})",
            )
        ]


CASES: dict[str, type[Case]] = {
    "events": EventsCase,
    "leaderboard-read": LeaderboardReadCase,
    "events-ranked": EventsRankedCase,
}
