"""The scale cases of issue 25 item 6 (`run.py --scale`, `make bench-scale`): how an event's
cost grows with the users a tenant has, with the boards an event moves, and with a board's
size. Users and board entries are seeded in SQL (a million through the API would take the
whole run), the boards' ranks then filled into Redis with `manage.py leaderboard_ranks_rebuild`
(as bench/million.py does); every event goes through the API.

- `scale-users-10k`: the full pipeline of `make bench` (`events-full`: a daily streak, 2 points
  systems with 5 triggers and levels, 3 achievements, 2 active boards of 1,000), events of
  random users among 10,000 existing ones;
- `scale-boards-0` .. `scale-boards-8`: the event and 0, 1, 2, 4 or 8 active metric boards of
  1,000 participants that it moves, nothing else; the same 10,000 users;
- `scale-users-1m`: the full pipeline, events of random users among 1,000,000 existing ones;
- `scale-board-1k`, `-100k`, `-1m`: one active metric board of 1,000, 100,000 or 1,000,000
  participants, nothing else; events of random participants.

The users are `s-0` .. `s-999999` (`s-0` .. `s-9999` first, the rest before `scale-users-1m`),
rows of `users_enduser` only: each case's first event of a user creates its totals, streak and
entries, as a tenant's existing users sending their first events on a newly configured metric.
Cases run in that order on one server and database, so the 10,000-user cases run before the
table holds a million users. The server counts the SQL statements it sends
(bench/counting_wsgi.py), so the table has statements per event beside the CPU per event.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from decimal import Decimal
from typing import Any

from cases import Case, Check, EventsWorker
from side_by_side import PIPELINE_METRIC, FullPipelineEventsCase

SCALE_USER = "s-{}"
SMALL, LARGE = 10_000, 1_000_000
BOARD_COUNTS = (0, 1, 2, 4, 8)
BOARD_SIZES = {"1k": 1_000, "100k": 100_000, "1m": 1_000_000}
FULL_BOARDS = ("pipeline-board", "xp-board")  # FullPipelineEventsCase's

# (dimension, label, case) in the order of the table
SCALE_TABLE = [
    ("users", "full pipeline, 10,000 users", "scale-users-10k"),
    ("users", "full pipeline, 1,000,000 users", "scale-users-1m"),
    *[
        (
            "boards per event",
            f"event moving {n} board{'s' * (n != 1)} of 1,000",
            f"scale-boards-{n}",
        )
        for n in BOARD_COUNTS
    ],
    *[
        ("board size", f"event on one board of {size:,}", f"scale-board-{label}")
        for label, size in BOARD_SIZES.items()
    ],
]
SCALE_ORDER = [
    "scale-users-10k",
    *[f"scale-boards-{n}" for n in BOARD_COUNTS],
    "scale-users-1m",
    *[f"scale-board-{label}" for label in BOARD_SIZES],
]


def _tenant_users(ctx: Any, count: int, metric: str) -> None:
    """Users s-0 .. s-(count - 1) of the tenant of `metric`, seeded once in SQL."""
    have = getattr(ctx, "scale_users", 0)
    if have >= count:
        return
    started = time.monotonic()
    ctx.db_execute(
        "INSERT INTO users_enduser (tenant_id, external_id, subscribe_to_emails, device_tokens,"
        " attributes, control, notification_preferences, created, updated)"
        " SELECT m.tenant_id, 's-' || n, true, '[]', '{}', false, '{}', now(), now()"
        " FROM generate_series(%s, %s - 1) n, metrics_metric m WHERE m.key = %s",
        (have, count, metric),
    )
    ctx.db_execute("ANALYZE users_enduser")
    ctx.scale_users = count
    print(f"   seeded users s-{have} .. s-{count - 1} in {time.monotonic() - started:.0f} s")


def _created(ctx: Any, path: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    status, body = ctx.api("POST", path, items)
    if status != 201 or body.get("issues"):
        raise RuntimeError(f"POST {path} failed: HTTP {status} {body}")
    return list(body["created"])


def _metric_with_boards(ctx: Any, metric: str, boards: list[tuple[str, int]]) -> None:
    ctx.ensure_metric(metric, metric.capitalize())
    _, metrics = ctx.api("GET", "/admin/v1/metrics?limit=100")
    metric_id = next(m["id"] for m in metrics if m["key"] == metric)
    if boards:
        _created(
            ctx,
            "/admin/v1/leaderboards",
            [
                {
                    "name": key,
                    "key": key,
                    "rankBy": "metric",
                    "metricId": metric_id,
                    "status": "active",
                    "maxParticipants": size,
                }
                for key, size in boards
            ],
        )


def _sized_boards(ctx: Any) -> None:
    """The three boards of 1,000, 100,000 and 1,000,000 participants (s-0 ..), once: entries
    and the participants' totals seeded in SQL (values spread by a multiplicative hash,
    reached over the last day, so that ranks have few ties), then every active board's ranks
    rebuilt in Redis."""
    if getattr(ctx, "scale_sized_boards", False):
        return
    for label, size in BOARD_SIZES.items():
        _metric_with_boards(ctx, f"size-{label}", [(f"size-{label}-board", size)])
    _tenant_users(ctx, LARGE, "size-1k")
    started = time.monotonic()
    for label, size in BOARD_SIZES.items():
        key = f"size-{label}"
        ctx.db_execute(
            "INSERT INTO leaderboards_leaderboardentry"
            ' (leaderboard_id, run_start, "group", user_id, value, reached_at)'
            " SELECT b.id, b.start, '', u.id, 1 + (u.id * 2654435761) %% 1000000,"
            "        now() - make_interval(secs => (u.id %% 86400))"
            " FROM users_enduser u JOIN leaderboards_leaderboard b ON b.tenant_id = u.tenant_id"
            " WHERE b.key = %s AND u.external_id LIKE 's-%%'"
            " AND substr(u.external_id, 3)::int < %s",
            (f"{key}-board", size),
        )
        # Each participant's total of the board's metric, equal to their entry (a perpetual
        # board ranks the total): the events are then those of existing participants.
        ctx.db_execute(
            "INSERT INTO metrics_metrictotal (tenant_id, user_id, metric_id, total, updated)"
            " SELECT b.tenant_id, e.user_id, m.id, e.value, now()"
            " FROM leaderboards_leaderboardentry e"
            " JOIN leaderboards_leaderboard b ON b.id = e.leaderboard_id"
            " JOIN metrics_metric m ON m.tenant_id = b.tenant_id AND m.key = %s"
            " WHERE b.key = %s",
            (key, f"{key}-board"),
        )
    ctx.db_execute("ANALYZE leaderboards_leaderboardentry; ANALYZE metrics_metrictotal")
    seeded = time.monotonic() - started
    out = ctx.manage("leaderboard_ranks_rebuild")
    ctx.scale_sized_boards = True
    print(
        f"   seeded {sum(BOARD_SIZES.values()):,} entries and totals in {seeded:.0f} s; "
        f"{out.strip()} in {time.monotonic() - started - seeded:.0f} s"
    )


class ScaleWorker(EventsWorker):
    """Events of random users s-0 .. s-(users - 1); books how many of the boards each 201
    lists and ranks."""

    def __init__(
        self, path: str, users: int, max_value: int, seed: int, boards: tuple[str, ...]
    ) -> None:
        super().__init__(path, users, max_value, seed)
        self.boards = boards
        self.listed = 0  # boards of `self.boards` in the 201s' `leaderboards`
        self.ranked = 0  # ... with a rank

    def next_request(self) -> tuple[str, str, bytes | None]:
        user_id = SCALE_USER.format(self.rng.randrange(self.users))
        value = self.rng.randint(1, self.max_value)
        self._pending = (user_id, value)
        return "POST", self.path, json.dumps({"user": {"id": user_id}, "value": value}).encode()

    def record(self, status: int | None, body: bytes) -> None:
        super().record(status, body)
        if status == 201 and self.boards:
            with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
                answered = json.loads(body)["leaderboards"]
                for key in self.boards:
                    if key in answered:
                        self.listed += 1
                        self.ranked += answered[key].get("rank") is not None


class ScaleCase(Case):
    """Events on `metric_key` of random users among the first `users`. Checks (several cases
    send to the same users, so what was there before is not known per user): each user's
    stored total equals the highest total answered to them; the metric's event rows grew by
    the 201s and the sum of its totals by the values sent."""

    expected_status = 201
    max_value = 100
    metric_key = ""
    users = SMALL
    boards: tuple[str, ...] = ()
    seed_offset = 0

    def __init__(self, args: Any) -> None:
        self.seed: int = args.seed
        self.path = f"/v1/metrics/{self.metric_key}/event"
        self.before_rows = (0, Decimal(0))
        self.first_users = 0  # users whose first event of the metric was this case's

    def configure(self, ctx: Any) -> None:
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        return {
            "endpoint": f"POST {self.path}",
            "users": f"random among s-0 .. s-{self.users - 1} (seeded in SQL)",
            "boards": list(self.boards),
            "values": f"random integers 1..{self.max_value}",
            "seed": self.seed,
        }

    def _rows(self, ctx: Any) -> tuple[int, Decimal]:
        rows = ctx.db_query(
            "SELECT (SELECT count(*) FROM metrics_metricevent e JOIN metrics_metric m"
            "  ON m.id = e.metric_id WHERE m.key = %s),"
            " (SELECT coalesce(sum(t.total), 0) FROM metrics_metrictotal t JOIN metrics_metric m"
            "  ON m.id = t.metric_id WHERE m.key = %s)",
            (self.metric_key, self.metric_key),
        )
        return (int(rows[0][0]), Decimal(rows[0][1])) if rows else (-1, Decimal(-1))

    def setup(self, ctx: Any) -> None:
        self.configure(ctx)
        self.before_rows = self._rows(ctx)

    def worker(self, index: int) -> ScaleWorker:
        seed = self.seed * 11_000 + self.seed_offset * 300 + index
        return ScaleWorker(self.path, self.users, self.max_value, seed, self.boards)

    def stats(self, workers: list[Any]) -> dict[str, Any]:
        users: set[str] = set()
        for w in workers:
            users.update(w.count)
        events = sum(sum(w.count.values()) for w in workers)
        first = self.first_users
        stats: dict[str, Any] = {
            "events_201": events,
            "distinct_users": len(users),
            "first_event_of_user_pct": round(100.0 * first / events, 1) if events else 0,
        }
        if self.boards:
            listed = sum(w.listed for w in workers)
            stats["boards_per_201"] = round(listed / events, 2) if events else 0
            stats["ranked_pct"] = (
                round(100.0 * sum(w.ranked for w in workers) / listed, 1) if listed else 0
            )
        return stats

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        sent: Counter[str] = Counter()
        unsure: set[str] = set()
        highest: dict[str, Decimal] = {}
        events = listed = 0
        for w in workers:
            sent.update(w.sent)
            unsure.update(w.unsure)
            events += sum(w.count.values())
            listed += w.listed
            for user, total in w.max_total.items():
                highest[user] = max(total, highest.get(user, total))
        sure = [u for u in sent if u not in unsure]
        rows = ctx.db_query(
            "SELECT u.external_id, t.total FROM metrics_metrictotal t"
            " JOIN metrics_metric m ON m.id = t.metric_id JOIN users_enduser u ON u.id = t.user_id"
            " WHERE m.key = %s AND u.external_id = ANY(%s)",
            (self.metric_key, sure),
        )
        stored = {user: Decimal(total) for user, total in rows or []}
        wrong = [u for u in sure if highest.get(u) != stored.get(u)]
        self.first_users = sum(1 for u in sure if stored.get(u) == sent[u])
        checks = [
            Check(
                "every user's stored total = the highest total answered to them",
                not wrong,
                f"{len(sure) - len(wrong)}/{len(sure)} users consistent"
                + (f"; first: {wrong[:3]}" if wrong else ""),
            )
        ]
        if self.boards:
            checks.append(
                Check(
                    f"every 201 lists the {len(self.boards)} boards",
                    listed == events * len(self.boards),
                    f"{listed} of {events * len(self.boards)}",
                )
            )
        count, total = self._rows(ctx)  # every 201 was committed before it was answered
        want_count = self.before_rows[0] + events
        want_total = self.before_rows[1] + sum(sent.values())
        exact = not unsure
        checks.append(
            Check(
                "database: the metric's event rows and the sum of its totals",
                (count, total) == (want_count, want_total) if exact else count >= want_count,
                f"rows {count} (expected {want_count}), sum {total} (expected {want_total})"
                + ("" if exact else f"; {len(unsure)} users with a request without 201"),
            )
        )
        return checks


class UsersSmallCase(ScaleCase):
    name = "scale-users-10k"
    summary = f"the full pipeline (events-full), events of {SMALL:,} existing users"
    metric_key = PIPELINE_METRIC
    boards = FULL_BOARDS
    seed_offset = 1

    def configure(self, ctx: Any) -> None:
        if not getattr(ctx, "scale_pipeline", False):
            FullPipelineEventsCase.setup(self, ctx)  # type: ignore[arg-type]
            ctx.scale_pipeline = True
        _tenant_users(ctx, self.users, self.metric_key)


class UsersLargeCase(UsersSmallCase):
    name = "scale-users-1m"
    summary = f"the full pipeline (events-full), events of {LARGE:,} existing users"
    users = LARGE
    seed_offset = 2


class BoardsCase(ScaleCase):
    users = SMALL

    def configure(self, ctx: Any) -> None:
        _metric_with_boards(ctx, self.metric_key, [(key, 1000) for key in self.boards])
        _tenant_users(ctx, SMALL, self.metric_key)


def _boards_case(count: int) -> type[ScaleCase]:
    metric = f"boards-{count}"
    return type(
        f"Boards{count}Case",
        (BoardsCase,),
        {
            "name": f"scale-boards-{count}",
            "summary": f"events moving {count} active metric boards of 1,000, nothing else",
            "metric_key": metric,
            "boards": tuple(f"{metric}-{n}" for n in range(count)),
            "seed_offset": 10 + count,
        },
    )


class SizedBoardCase(ScaleCase):
    label = ""

    def configure(self, ctx: Any) -> None:
        _sized_boards(ctx)


def _sized_case(label: str, size: int) -> type[ScaleCase]:
    return type(
        f"SizedBoard{label}Case",
        (SizedBoardCase,),
        {
            "name": f"scale-board-{label}",
            "summary": f"events of participants of one active metric board of {size:,}",
            "metric_key": f"size-{label}",
            "users": size,
            "boards": (f"size-{label}-board",),
            "label": label,
            "seed_offset": 30 + len(label),
        },
    )


def print_scale(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events/s, the CPU per event of gunicorn and PostgreSQL, events/s per core of that CPU,
    statements per event: the last phase of each case (with --repeat, events/s is the median)."""
    by_name = {r["case"]: r for r in results}
    rows = []
    print("\n== scale: how an event's cost grows (CPU per event is the figure to compare)")
    print(
        f"   {'case':<44} {'events/s':>9} {'p99 ms':>7} {'CPU ms/event':>15} "
        f"{'events/s/core':>13} {'statements':>10}"
    )
    for dimension, label, name in SCALE_TABLE:
        result = by_name.get(name)
        if result is None:
            continue
        cpu, median = result["cpu"], result["median"]
        gunicorn, postgres = cpu.get("gunicorn_cpu_ms_per_ok"), cpu.get("postgres_cpu_ms_per_ok")
        per_core = 1000.0 / (gunicorn + postgres) if gunicorn and postgres else None
        statements = cpu.get("statements_per_ok")
        print(
            f"   {label:<44} {median['ok_per_second'] or 0:>9.1f} {_ms(median['p99_ms']):>7} "
            f"{_ms(gunicorn):>7} + {_ms(postgres):>5} {_ms(per_core):>13} {_ms(statements):>10}"
        )
        rows.append(
            {
                "dimension": dimension,
                "measure": label,
                "case": name,
                "events_per_second": median["ok_per_second"],
                "p99_ms": median["p99_ms"],
                "gunicorn_cpu_ms_per_event": gunicorn,
                "postgres_cpu_ms_per_event": postgres,
                "events_per_second_per_core": None if per_core is None else round(per_core, 1),
                "statements_per_event": statements,
                "other_cores": cpu.get("other_cores"),
            }
        )
    return rows


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


SCALE_CASES: dict[str, type[Case]] = {
    case.name: case
    for case in (
        UsersSmallCase,
        UsersLargeCase,
        *[_boards_case(n) for n in BOARD_COUNTS],
        *[_sized_case(label, size) for label, size in BOARD_SIZES.items()],
    )
}
