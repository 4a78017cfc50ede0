"""The 1,000,000-participant board of issue 13 (`run.py --million`, `make bench-million`).

Setup seeds, in SQL (a million events through the API would take the whole run), one million
end-users and their entries on the active metric board `million-board` (maxParticipants
1,000,000, which the server allows with LEADERBOARD_MAX_PARTICIPANTS), then fills Redis with
`manage.py leaderboard_ranks_rebuild`. The cases:

- `million-rank`: `GET /v1/users/{id}/leaderboards/million-board` for random participants;
  target p99 <= 20 ms.
- `million-top100`: `GET /v1/leaderboards/million-board?limit=100`; target p99 <= 20 ms.
- `million-events`: events of random participants (each one re-ranks); target >= 80 % of
  `events-ranked`'s throughput (the same on a 1,000-participant board).
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from typing import Any

from cases import BOARD_KEY, BOARD_USER, BOARD_USERS, Case, Check, EventsWorker, ensure_words_board

MILLION = 1_000_000
MILLION_KEY = "million-board"
MILLION_METRIC = "million"
MILLION_USER = "m-{}"  # external ids m-0 .. m-999999
# (label, case, reference case or None, p99 target ms or None, ratio target or None)
MILLION_TABLE = [
    ("rank read, 1,000 participants", "thousand-rank", None, None, None),
    ("rank read, 1,000,000 participants", "million-rank", None, 20.0, None),
    ("top-100 page, 1,000 participants", "thousand-top100", None, None, None),
    ("top-100 page, 1,000,000 participants", "million-top100", None, 20.0, None),
    ("events re-ranking, 1,000 participants", "events-ranked", None, None, None),
    ("events re-ranking, 1,000,000 participants", "million-events", "events-ranked", None, 0.8),
]
MILLION_ORDER = [
    "thousand-rank",
    "thousand-top100",
    "events-ranked",
    "million-rank",
    "million-top100",
    "million-events",
]


def ensure_million_board(ctx: Any) -> None:
    """The board, its participants and their ranks in Redis, once per run."""
    status, boards = ctx.api("GET", "/admin/v1/leaderboards?limit=100")
    if status == 200 and any(b["key"] == MILLION_KEY for b in boards):
        return
    ctx.ensure_metric(MILLION_METRIC, "Million")
    _, metrics = ctx.api("GET", "/admin/v1/metrics?limit=100")
    metric_id = next(m["id"] for m in metrics if m["key"] == MILLION_METRIC)
    item = {
        "name": "Million",
        "key": MILLION_KEY,
        "rankBy": "metric",
        "metricId": metric_id,
        "status": "active",
        "maxParticipants": MILLION,
    }
    status, created = ctx.api("POST", "/admin/v1/leaderboards", [item])
    if status != 201 or created.get("issues"):
        raise RuntimeError(f"creating {MILLION_KEY!r} failed: HTTP {status} {created}")
    started = time.monotonic()
    # Users of the board's tenant; values 1..1,000,000 spread by a multiplicative hash, reached
    # over the last day (seconds apart), so ranks have few ties.
    ctx.db_execute(
        "INSERT INTO users_enduser (tenant_id, external_id, subscribe_to_emails, device_tokens,"
        " attributes, control, notification_preferences, created, updated)"
        " SELECT b.tenant_id, 'm-' || n, true, '[]', '{}', false, '{}', now(), now()"
        " FROM generate_series(0, %s - 1) n, leaderboards_leaderboard b WHERE b.key = %s",
        (MILLION, MILLION_KEY),
    )
    ctx.db_execute(
        "INSERT INTO leaderboards_leaderboardentry"
        ' (leaderboard_id, run_start, "group", user_id, value, reached_at)'
        " SELECT b.id, b.start, '', u.id, 1 + (u.id * 2654435761) %% 1000000,"
        "        now() - make_interval(secs => (u.id %% 86400))"
        " FROM users_enduser u JOIN leaderboards_leaderboard b ON b.tenant_id = u.tenant_id"
        " WHERE b.key = %s AND u.external_id LIKE 'm-%%'",
        (MILLION_KEY,),
    )
    ctx.db_execute("ANALYZE users_enduser; ANALYZE leaderboards_leaderboardentry")
    seeded = time.monotonic() - started
    out = ctx.manage("leaderboard_ranks_rebuild")
    print(
        f"   seeded {MILLION:,} participants in {seeded:.0f} s; "
        f"{out.strip()} in {time.monotonic() - started - seeded:.0f} s"
    )


class _ReadWorker:
    """GETs for random participants; counts answers that are not what they must be."""

    def __init__(self, seed: int, top: bool, board: str, user: str, users: int) -> None:
        self.rng = random.Random(seed)
        self.top = top
        self.board, self.user, self.users = board, user, users
        self.bad = 0
        self.answered = 0

    def next_request(self) -> tuple[str, str, bytes | None]:
        if self.top:
            return "GET", f"/v1/leaderboards/{self.board}?limit=100", None
        user = self.user.format(self.rng.randrange(self.users))
        return "GET", f"/v1/users/{user}/leaderboards/{self.board}", None

    def record(self, status: int | None, body: bytes) -> None:
        if status != 200:
            return
        self.answered += 1
        try:
            data = json.loads(body)
            if self.top:
                ranks = [r["rank"] for r in data["rankings"]]
                ok = ranks == list(range(1, 101))
            else:
                ok = isinstance(data["rank"], int) and 1 <= data["rank"] <= self.users
        except (ValueError, KeyError, TypeError):
            ok = False
        self.bad += not ok


class MillionRankCase(Case):
    name = "million-rank"
    summary = f"GET /v1/users/{{id}}/leaderboards/{MILLION_KEY}, {MILLION:,} participants"
    top = False
    board, user, users = MILLION_KEY, MILLION_USER, MILLION

    def __init__(self, args: Any) -> None:
        self.seed: int = args.seed

    def setup(self, ctx: Any) -> None:
        ensure_million_board(ctx)

    def worker(self, index: int) -> _ReadWorker:
        seed = self.seed * 7000 + index + 500 * self.top
        return _ReadWorker(seed, self.top, self.board, self.user, self.users)

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        bad = sum(w.bad for w in workers)
        answered = sum(w.answered for w in workers)
        return [Check("every 200 ranks the participant", bad == 0, f"{bad}/{answered} wrong")]


class MillionTopCase(MillionRankCase):
    name = "million-top100"
    summary = f"GET /v1/leaderboards/{MILLION_KEY}?limit=100, {MILLION:,} participants"
    top = True


class ThousandRankCase(MillionRankCase):
    name = "thousand-rank"
    summary = f"GET /v1/users/{{id}}/leaderboards/{BOARD_KEY}, {BOARD_USERS:,} participants"
    board, user, users = BOARD_KEY, BOARD_USER, BOARD_USERS

    def setup(self, ctx: Any) -> None:
        ensure_words_board(ctx, self.seed)


class ThousandTopCase(ThousandRankCase):
    name = "thousand-top100"
    summary = f"GET /v1/leaderboards/{BOARD_KEY}?limit=100, {BOARD_USERS:,} participants"
    top = True


class _MillionEventsWorker(EventsWorker):
    def __init__(self, path: str, max_value: int, seed: int) -> None:
        super().__init__(path, MILLION, max_value, seed)
        self.ranked = 0

    def next_request(self) -> tuple[str, str, bytes | None]:
        user_id = MILLION_USER.format(self.rng.randrange(self.users))
        value = self.rng.randint(1, self.max_value)
        self._pending = (user_id, value)
        return "POST", self.path, json.dumps({"user": {"id": user_id}, "value": value}).encode()

    def record(self, status: int | None, body: bytes) -> None:
        super().record(status, body)
        if status == 201:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                self.ranked += json.loads(body)["leaderboards"][MILLION_KEY]["rank"] is not None


class MillionEventsCase(Case):
    name = "million-events"
    summary = f"POST /v1/metrics/{MILLION_METRIC}/event by participants of {MILLION_KEY}"
    expected_status = 201
    max_value = 100

    def __init__(self, args: Any) -> None:
        self.seed: int = args.seed
        self.path = f"/v1/metrics/{MILLION_METRIC}/event"

    def setup(self, ctx: Any) -> None:
        ensure_million_board(ctx)

    def worker(self, index: int) -> _MillionEventsWorker:
        return _MillionEventsWorker(self.path, self.max_value, self.seed * 9000 + index)

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        events = sum(sum(w.count.values()) for w in workers)
        ranked = sum(w.ranked for w in workers)
        return [
            Check(
                "every 201 ranks the participant",
                events == ranked,
                f"{ranked}/{events} events answered with a rank",
            )
        ]


def print_million(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_name = {r["case"]: r["median"] for r in results}
    rows = []
    print(f"\n== a {MILLION:,}-participant board (medians; targets from issue 13)")
    print(f"   {'measure':<44} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'target':>22}")
    for label, case, reference, p99_target, ratio_target in MILLION_TABLE:
        mine = by_name.get(case)
        if not mine:
            continue
        target, met = "", None
        if p99_target is not None and mine["p99_ms"] is not None:
            met = mine["p99_ms"] <= p99_target
            target = f"p99 <= {p99_target:g} ms"
        ref = by_name.get(reference) if reference else None
        ratio = None
        if ratio_target is not None and ref and ref["ok_per_second"]:
            ratio = (mine["ok_per_second"] or 0) / ref["ok_per_second"]
            met = ratio >= ratio_target
            target = f"{ratio:.0%} of {BOARD_USERS:,} (>= {ratio_target:.0%})"
        verdict = "" if met is None else (" met" if met else " MISSED")
        print(
            f"   {label:<44} {mine['ok_per_second'] or 0:>8.1f} "
            f"{_ms(mine['p50_ms']):>8} {_ms(mine['p99_ms']):>8} {target + verdict:>22}"
        )
        rows.append({"measure": label, "figures": mine, "ratio": ratio, "met": met})
    return rows


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


MILLION_CASES: dict[str, type[Case]] = {
    case.name: case
    for case in (
        ThousandRankCase,
        ThousandTopCase,
        MillionRankCase,
        MillionTopCase,
        MillionEventsCase,
    )
}
