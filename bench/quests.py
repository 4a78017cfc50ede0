"""The quest pair of issue 30 (`run.py --quests`, `make bench-quests`): what 3 active quests
cost an event, side by side with the same events without them. The server counts its SQL
statements (bench/counting_wsgi.py), so the table has statements per event beside the
throughput and the CPU per event.

- `quest-off`: `POST /v1/metrics/quest/event` for random users among `--users` (2,000 in
  `make bench-quests`) existing users `s-0` .. (seeded in SQL, as bench/scale.py's), each of
  whom has sent one event of the metric already (in setup, through the API). The tenant has a
  points system with a metric trigger on the metric, so the points step reads the user's rows
  before it computes (the read the quests' read joins): no quest;
- `quest-on`: the same events of the same users, after three active quests counting the metric
  (daily, weekly and monthly, targets no run reaches) were created through the admin extension
  API and every user moved them with one event each (in setup). Every measured event then moves
  the three quests of a user who has their rows: what it adds is one upsert of the three rows
  (tests/quests/test_quest_query_count.py pins it at one statement).

`quest-off` runs first, before the quests exist. Checks: those of bench/scale.py (each user's
stored total is the highest total answered to them; the metric's rows and totals grew by what
was answered), and for `quest-on`: three progress rows per user, and the daily quest's progress
adds up to every value sent since the quests were created (unless the run crossed midnight UTC).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cases import Case, Check
from scale import SCALE_USER, ScaleCase, _created, _tenant_users

QUEST_METRIC = "quest"
QUEST_ORDER = ["quest-off", "quest-on"]
CADENCES = ("daily", "weekly", "monthly")
FIRST_VALUE = 1  # each user's setup event
TARGET = 1_000_000_000  # never reached: every event moves the quests


def _first_events(ctx: Any, users: int, threads: int = 16) -> None:
    """One event of value FIRST_VALUE for each user, `threads` at a time, through the API."""
    path = f"/v1/metrics/{QUEST_METRIC}/event"

    def send(n: int) -> int:
        body = {"user": {"id": SCALE_USER.format(n)}, "value": FIRST_VALUE}
        return int(ctx.api("POST", path, body)[0])

    with ThreadPoolExecutor(threads) as pool:
        statuses = list(pool.map(send, range(users)))
    if set(statuses) != {201}:
        raise RuntimeError(f"the setup events failed: statuses {sorted(set(statuses))}")


def _metric_id(ctx: Any) -> str:
    rows = ctx.db_query("SELECT public_id FROM metrics_metric WHERE key = %s", (QUEST_METRIC,))
    return str(rows[0][0])


def _points(ctx: Any) -> None:
    """A points system with an active trigger on the metric (once)."""
    if getattr(ctx, "quest_points", False):
        return
    (system,) = _created(ctx, "/admin/v1/points", [{"name": "Quest XP", "key": "quest-xp"}])
    trigger = {
        "type": "metric",
        "metricId": _metric_id(ctx),
        "points": 1,
        "metricThreshold": 1,
        "status": "active",
    }
    _created(ctx, f"/admin/v1/points/{system['id']}/triggers", [trigger])
    ctx.quest_points = True


class QuestOffCase(ScaleCase):
    name = "quest-off"
    summary = "POST /v1/metrics/quest/event of existing users, no quest (the pair's baseline)"
    metric_key = QUEST_METRIC
    seed_offset = 70

    def __init__(self, args: Any) -> None:
        super().__init__(args)
        self.users = args.users

    def configure(self, ctx: Any) -> None:
        ctx.ensure_metric(QUEST_METRIC, "Quest")
        _tenant_users(ctx, self.users, QUEST_METRIC)
        _points(ctx)
        _first_events(ctx, self.users)

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "quests": None,
            "setup": "a points trigger on the metric; one event per user",
        }


class QuestOnCase(QuestOffCase):
    name = "quest-on"
    summary = "the same events, each moving the user's 3 active quests (daily, weekly, monthly)"
    seed_offset = 71

    def configure(self, ctx: Any) -> None:
        ctx.ensure_metric(QUEST_METRIC, "Quest")
        _tenant_users(ctx, self.users, QUEST_METRIC)
        _points(ctx)
        metric_id = _metric_id(ctx)
        quests = [
            {
                "name": f"{cadence.title()} words",
                "key": cadence,
                "cadence": cadence,
                "status": "active",
                "goals": [{"kind": "metric", "metricId": metric_id, "target": TARGET}],
            }
            for cadence in CADENCES
        ]
        _created(ctx, "/admin/ext/v1/quests", quests)
        _first_events(ctx, self.users)

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "quests": "daily, weekly and monthly, active, one metric goal each (never met)",
            "setup": "a points trigger on the metric; one event per user: each has 3 rows",
        }

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        checks = super().verify(ctx, workers)
        unsure = sum(sum(w.unsure.values()) for w in workers)
        sent = sum(sum(w.sent.values()) for w in workers)
        rows = ctx.db_query(
            "SELECT q.key, count(*), count(DISTINCT p.period_first),"
            " coalesce(sum((p.goals -> 0 ->> 'value')::numeric), 0)"
            " FROM quests_questprogress p JOIN quests_quest q ON q.id = p.quest_id"
            " GROUP BY q.key ORDER BY q.key",
        )
        if not rows:
            return [*checks, Check("quest progress", False, "query failed (see log)")]
        by_key = {key: (count, periods, total) for key, count, periods, total in rows}
        daily = by_key.get("daily", (0, 0, 0))
        want = self.users * FIRST_VALUE + sent
        one_day = daily[1] == 1
        checks.append(
            Check(
                "three progress rows per user; the daily quest's progress = values sent",
                all(by_key.get(c, (0, 0, 0))[0] >= self.users for c in CADENCES)
                and (not one_day or daily[0] == self.users)
                and (not one_day or (daily[2] == want if not unsure else daily[2] >= want)),
                f"rows {[(k, v[0]) for k, v in by_key.items()]}, daily progress {daily[2]} "
                f"over {daily[1]} day(s) (sent {want})"
                + (f"; {unsure} requests without 201" if unsure else ""),
            )
        )
        return checks


def print_quests(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each case's events/s (median), p99, CPU and statements per event, and the quests' cost:
    the ratio of throughputs and the difference in statements and CPU."""
    by_name = {r["case"]: r for r in results}
    rows = []
    print("\n== quests: an event with and without 3 active quests (the same events)")
    print(f"   {'case':<52} {'events/s':>9} {'p99 ms':>7} {'CPU ms/event':>15} {'statements':>10}")
    for name in QUEST_ORDER:
        result = by_name.get(name)
        if result is None:
            continue
        cpu, median = result["cpu"], result["median"]
        gunicorn, postgres = cpu.get("gunicorn_cpu_ms_per_ok"), cpu.get("postgres_cpu_ms_per_ok")
        label = "no quest" if name == "quest-off" else "moving 3 active quests"
        print(
            f"   {label:<52} {median['ok_per_second'] or 0:>9.1f} {_ms(median['p99_ms']):>7} "
            f"{_ms(gunicorn):>7} + {_ms(postgres):>5} {_ms(cpu.get('statements_per_ok')):>10}"
        )
        rows.append(
            {
                "case": name,
                "events_per_second": median["ok_per_second"],
                "p99_ms": median["p99_ms"],
                "gunicorn_cpu_ms_per_event": gunicorn,
                "postgres_cpu_ms_per_event": postgres,
                "statements_per_event": cpu.get("statements_per_ok"),
                "other_cores": cpu.get("other_cores"),
            }
        )
    if len(rows) == 2:
        off, on = rows
        ratio = (
            on["events_per_second"] / off["events_per_second"]
            if on["events_per_second"] and off["events_per_second"]
            else None
        )
        extra = (
            on["statements_per_event"] - off["statements_per_event"]
            if on["statements_per_event"] is not None and off["statements_per_event"] is not None
            else None
        )
        cpu = [
            (on[k] or 0) - (off[k] or 0)
            for k in ("gunicorn_cpu_ms_per_event", "postgres_cpu_ms_per_event")
        ]
        print(
            f"   the quests' cost: events/s x{'-' if ratio is None else f'{ratio:.2f}'}, "
            f"statements per event {'-' if extra is None else f'{extra:+.2f}'} (issue: at most "
            f"+1), CPU ms per event {cpu[0]:+.2f} + {cpu[1]:+.2f}"
        )
        rows.append(
            {
                "measure": "quests' cost",
                "events_per_second_ratio": None if ratio is None else round(ratio, 3),
                "extra_statements_per_event": None if extra is None else round(extra, 2),
                "extra_cpu_ms_per_event": [round(c, 2) for c in cpu],
            }
        )
    return rows


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


QUEST_CASES: dict[str, type[Case]] = {case.name: case for case in (QuestOffCase, QuestOnCase)}
