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
from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal
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
        rows = ctx.db_query(
            "SELECT (SELECT count(*) FROM metrics_metricevent),"
            " (SELECT coalesce(sum(total), 0) FROM metrics_metrictotal)"
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


CASES: dict[str, type[Case]] = {
    "events": EventsCase,
}
