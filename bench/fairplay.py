"""The anomaly-rules pair of issue 31 (`run.py --anomalies`, `make bench-anomalies`): what a
tenant's active anomaly rules cost an event, side by side with the same events without them.
The server counts its SQL statements (bench/counting_wsgi.py), so the table has statements per
event beside the throughput and the CPU per event.

- `anomaly-off`: `POST /v1/metrics/fairplay/event` for random users among `--users` existing
  users `s-0` .. (seeded in SQL, as bench/scale.py's), each of whom has sent one event of the
  metric already (in setup, through the API): no anomaly rule;
- `anomaly-on`: the same events of the same users, after two active rules were created through
  the admin API (`/admin/ext/v1/anomaly-rules`): more than 10^12 of the metric's value in 30
  minutes, and more than 10^9 events in 1 minute, which no user reaches (no flag, no webhook:
  what is measured is the counting). Each rule counts every event: one upsert a rule
  (apps/fairplay/sql.py), so +2 statements per event (tests/fairplay/test_anomalies.py pins one
  a rule).

Checks: those of bench/scale.py, and for `anomaly-on`: no flag was raised, and the value
rule's counts add up to every value sent since the rules were made.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cases import Case, Check
from leagues import _ms
from scale import SCALE_USER, ScaleCase, _tenant_users

ANOMALY_METRIC = "fairplay"
ANOMALY_ORDER = ["anomaly-off", "anomaly-on"]
HIGH = 10**12


def _first_events(ctx: Any, users: int, threads: int = 16) -> None:
    """One event of value 1 for each user, `threads` at a time, through the API."""
    path = f"/v1/metrics/{ANOMALY_METRIC}/event"

    def send(n: int) -> int:
        return int(ctx.api("POST", path, {"user": {"id": SCALE_USER.format(n)}, "value": 1})[0])

    with ThreadPoolExecutor(threads) as pool:
        statuses = list(pool.map(send, range(users)))
    if set(statuses) != {201}:
        raise RuntimeError(f"the setup events failed: statuses {sorted(set(statuses))}")


class AnomalyOffCase(ScaleCase):
    name = "anomaly-off"
    summary = "POST /v1/metrics/fairplay/event of existing users, no anomaly rule (the baseline)"
    metric_key = ANOMALY_METRIC
    seed_offset = 70

    def __init__(self, args: Any) -> None:
        super().__init__(args)
        self.users = args.users

    def configure(self, ctx: Any) -> None:
        ctx.ensure_metric(ANOMALY_METRIC, "Fair play")
        _tenant_users(ctx, self.users, ANOMALY_METRIC)
        _first_events(ctx, self.users)

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "anomaly_rules": 0, "setup": "one event per user"}


class AnomalyOnCase(AnomalyOffCase):
    name = "anomaly-on"
    summary = "the same events, with two active anomaly rules that count every event"
    seed_offset = 71

    def configure(self, ctx: Any) -> None:
        super().configure(ctx)
        metrics = ctx.api("GET", "/admin/v1/metrics")[1]
        metric_id = next(m["id"] for m in metrics if m["key"] == ANOMALY_METRIC)
        rules = [
            {
                "name": "Value",
                "key": "value",
                "kind": "metric",
                "metricId": metric_id,
                "threshold": HIGH,
                "windowMinutes": 30,
            },
            {
                "name": "Rate",
                "key": "rate",
                "kind": "events",
                "threshold": HIGH,
                "windowMinutes": 1,
            },
        ]
        status, body = ctx.api("POST", "/admin/ext/v1/anomaly-rules", rules)
        if status != 201 or body.get("issues"):
            raise RuntimeError(f"the anomaly rules were refused: {status} {body}")

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "anomaly_rules": "2 active (metric value in 30 minutes, events a minute), unreached",
        }

    def verify(self, ctx: Any, workers: list[Any]) -> list[Check]:
        checks = super().verify(ctx, workers)
        flags = ctx.db_query("SELECT count(*) FROM fairplay_userflag", ())
        counted = ctx.db_query(
            "SELECT coalesce(sum(c.total), 0) FROM fairplay_anomalycount c"
            " JOIN fairplay_anomalyrule r ON r.id = c.rule_id WHERE r.key = 'value'",
            (),
        )
        sent = sum(sum(w.sent.values()) for w in workers)
        unsure = sum(sum(w.unsure.values()) for w in workers)
        if not flags or not counted:
            return [*checks, Check("anomaly counts", False, "query failed (see log)")]
        values = int(counted[0][0])
        checks.append(
            Check(
                "no flag; the value rule counted every value sent",
                flags[0][0] == 0 and (values == sent if not unsure else values >= sent),
                f"{flags[0][0]} flags, values counted {values} (sent {sent})",
            )
        )
        return checks


def print_anomalies(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each case's events/s (median), p99, CPU and statements per event, and the rules' cost."""
    by_name = {r["case"]: r for r in results}
    rows = []
    print("\n== anomaly rules: an event without and with two active rules (the same events)")
    print(f"   {'case':<40} {'events/s':>9} {'p99 ms':>7} {'CPU ms/event':>15} {'statements':>10}")
    for name in ANOMALY_ORDER:
        result = by_name.get(name)
        if result is None:
            continue
        cpu, median = result["cpu"], result["median"]
        gunicorn, postgres = cpu.get("gunicorn_cpu_ms_per_ok"), cpu.get("postgres_cpu_ms_per_ok")
        label = "no anomaly rule" if name == "anomaly-off" else "two active anomaly rules"
        print(
            f"   {label:<40} {median['ok_per_second'] or 0:>9.1f} {_ms(median['p99_ms']):>7} "
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
            }
        )
    if len(rows) == 2:
        off, on = rows
        if off["statements_per_event"] is not None and on["statements_per_event"] is not None:
            extra = on["statements_per_event"] - off["statements_per_event"]
            print(f"   the rules' cost: statements per event {extra:+.2f} (expected +2)")
            rows.append({"measure": "rules' cost", "extra_statements_per_event": round(extra, 2)})
    return rows


ANOMALY_CASES: dict[str, type[Case]] = {c.name: c for c in (AnomalyOffCase, AnomalyOnCase)}
