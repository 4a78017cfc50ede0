"""Benchmark of the batch endpoint's worker: events per second processed end to end.

    .venv/bin/python bench/batch.py [--events 1000] [--users 50] [--batches 3] [--profile]

What one run does:
1. drops and recreates the PostgreSQL database `gamify_bench_batch` and migrates it;
2. creates an organization and, through the admin API in-process (DRF's test client, no
   server), the full-pipeline configuration of `make bench` (bench/side_by_side.py's
   `events-full` case: a daily streak, 2 points systems with 5 triggers and 3 levels each, 3
   metric achievements and 2 active leaderboards, all on metric `pipeline`);
3. `--batches` times: `POST /admin/v1/metrics/events` with `--events` events for `--users`
   users (values 1..100, seeded), timed (validation and storage), then the worker's task, timed
   alone: `outbox_run` of the row the POST recorded, which claims it, runs
   `queued_events_process` and deletes it, exactly what a Celery worker or the background
   thread runs. The first batch creates its users; the later ones find them;
4. checks that every row is done, every event was recorded once and every user's total is the
   sum of the values sent to it;
5. with `--profile`, one more batch is processed under cProfile and the top functions printed;
6. with `--storage`, the bytes on disk per event recorded (tables, indexes and TOAST of every
   table the run wrote, after VACUUM ANALYZE), the largest tables first: docs/scaling.md sizes
   disks from it.

Nothing here is part of `make test`.
"""

import argparse
import os
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))  # side_by_side imports its siblings as top-level

from bench.support import database_recreate, psql  # noqa: E402

DB_NAME = "gamify_bench_batch"
URL = "/admin/v1/metrics/events"


def setup_env() -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="gamify.settings",
        DEBUG="false",
        SECRET_KEY="bench-only-" + "x" * 50,
        ALLOWED_HOSTS="testserver",  # DRF's test client
        SECURE_SSL_REDIRECT="false",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
        LOG_LEVEL="WARNING",
        CELERY_BROKER_URL="",
        BACKGROUND_TASKS="inline",
    )
    os.environ.pop("REDIS_URL", None)


class InProcessContext:
    """What bench/side_by_side.py's cases need of `run.Context`, against the app in-process."""

    def __init__(self, key: str) -> None:
        from rest_framework.test import APIClient

        self.client = APIClient()
        self.client.credentials(HTTP_X_API_KEY=key)

    def api(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        response = getattr(self.client, method.lower())(path, body, format="json")
        return response.status_code, response.json() if response.content else None

    def ensure_metric(self, key: str, name: str) -> None:
        status, body = self.api("POST", "/admin/v1/metrics", [{"name": name, "key": key}])
        if status != 201 or body.get("issues"):
            raise RuntimeError(f"creating metric {key!r} failed: HTTP {status} {body}")


def configure(ctx: InProcessContext) -> str:
    from side_by_side import PIPELINE_METRIC, FullPipelineEventsCase

    case = FullPipelineEventsCase(argparse.Namespace(users=0, seed=1, verify_users=0))
    case.setup(ctx)
    return PIPELINE_METRIC


def make_batch(rng: random.Random, metric: str, events: int, users: int) -> list[dict[str, Any]]:
    return [
        {"key": metric, "user": {"id": f"batch-user-{rng.randrange(users)}"}, "value": value}
        for value in (rng.randint(1, 100) for _ in range(events))
    ]


class StatementCounter:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.count += 1
        return execute(sql, params, many, context)


def send(
    ctx: InProcessContext, body: list[dict[str, Any]], profile: bool = False
) -> tuple[int, float]:
    """POST the batch; returns the outbox row it recorded and the seconds it took. `profile`:
    under cProfile, its top functions printed and its stats written beside the worker's."""
    from apps.core.models import OutboxTask

    before = set(OutboxTask.objects.values_list("pk", flat=True))
    started = time.perf_counter()
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        status, answer = profiler.runcall(ctx.api, "POST", URL, body)
        profiler.dump_stats("batch.prof.accept")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    else:
        status, answer = ctx.api("POST", URL, body)
    seconds = time.perf_counter() - started
    if status != 202 or answer != {"accepted": len(body)}:
        raise RuntimeError(f"batch refused: HTTP {status} {answer}")
    [row] = set(OutboxTask.objects.values_list("pk", flat=True)) - before
    return row, seconds


def backend_cpu() -> tuple[int, float]:
    """The PostgreSQL backend of this process's connection, and its CPU seconds so far."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = int(cursor.fetchone()[0])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return pid, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy (all cores), from /proc/stat."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle, iowait


class Work:
    """What the worker's task for one batch took: wall seconds, CPU seconds of this process and
    of its PostgreSQL backend (None if the connection changed), SQL statements, and the cores
    that everything else kept busy meanwhile (another program disturbs the figures)."""

    def __init__(
        self, seconds: float, cpu: float, db_cpu: float | None, statements: int, busy: float
    ) -> None:
        self.seconds, self.cpu, self.db_cpu, self.statements = seconds, cpu, db_cpu, statements
        self.other_cores = (busy - cpu - (db_cpu or 0)) / seconds


def work(row: int, profile: bool = False) -> Work:
    """Run the worker's task for one batch."""
    from django.db import connection

    from apps.core.outbox import outbox_run

    counter = StatementCounter()
    pid, db_before = backend_cpu()
    cpu_before, busy_before = time.process_time(), machine_busy()
    with connection.execute_wrapper(counter):
        started = time.perf_counter()
        if profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            done = profiler.runcall(outbox_run, row)
            seconds = time.perf_counter() - started
            stats = pstats.Stats(profiler)
            profiler.dump_stats("batch.prof")
            stats.sort_stats("tottime").print_stats(25)
            stats.sort_stats("cumulative").print_stats(45)
        else:
            done = outbox_run(row)
            seconds = time.perf_counter() - started
    cpu, busy = time.process_time() - cpu_before, machine_busy() - busy_before
    if not done:
        raise RuntimeError(f"outbox row {row} did not run")
    pid_after, db_after = backend_cpu()
    db_cpu = db_after - db_before if pid_after == pid else None
    return Work(seconds, cpu, db_cpu, counter.count, busy)


def check(sent: Counter[str], events: int) -> bool:
    from django.db.models import Count

    from apps.metrics.models import MetricEvent, MetricTotal
    from apps.pipeline.models import QueuedEvent

    statuses = dict(QueuedEvent.objects.values_list("status").annotate(n=Count("id")))
    recorded = MetricEvent.objects.count()
    totals = {u: int(t) for u, t in MetricTotal.objects.values_list("user__external_id", "total")}
    ok = statuses == {"done": events} and recorded == events and totals == dict(sent)
    print(
        f"checks: rows {statuses}, {recorded} events recorded, {len(totals)} totals "
        + ("equal to the values sent: ok" if ok else "WRONG: FAILED")
    )
    return ok


def storage(events: int) -> None:
    """Prints the bytes on disk per event of the tables the run wrote, largest first."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        cursor.execute(
            "SELECT relname, n_live_tup, pg_total_relation_size(relid) FROM pg_stat_user_tables"
            " WHERE n_live_tup > 0 ORDER BY 3 DESC"
        )
        tables = cursor.fetchall()
    total = sum(size for _name, _rows, size in tables)
    print(f"storage: {total / events:,.0f} bytes per event over {events} events")
    for name, rows, size in tables[:8]:
        print(f"  {name}: {rows:,} rows, {size / events:,.0f} bytes per event")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1000, help="events per batch (<= 1000)")
    parser.add_argument("--users", type=int, default=50, help="distinct users of the batches")
    parser.add_argument("--batches", type=int, default=3, help="measured batches")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile one more batch")
    parser.add_argument("--storage", action="store_true", help="bytes on disk per event")
    args = parser.parse_args()

    database_recreate(DB_NAME)
    try:
        setup_env()
        import django

        django.setup()
        from django.core.management import call_command

        from apps.accounts.services import organization_create
        from apps.core import outbox

        call_command("migrate", verbosity=0)
        ctx = InProcessContext(organization_create("Bench").full_key)
        metric = configure(ctx)
        # This script is the worker: the POST only records the outbox row, which is run below.
        outbox._send = lambda pk, queue=None: None  # type: ignore[assignment]

        rng = random.Random(args.seed)
        sent: Counter[str] = Counter()
        rates: list[float] = []
        for number in range(1, args.batches + 1 + args.profile):
            body = make_batch(rng, metric, args.events, args.users)
            for item in body:
                sent[item["user"]["id"]] += item["value"]
            profile = number > args.batches
            row, accept_s = send(ctx, body, profile=profile)
            done = work(row, profile=profile)
            events = len(body)
            label = "profiled" if profile else f"batch {number}"
            db_ms = "?" if done.db_cpu is None else f"{done.db_cpu * 1000 / events:.2f}"
            print(
                f"{label}: accepted in {accept_s * 1000:.0f} ms; worker {done.seconds:.2f} s = "
                f"{events / done.seconds:,.0f} events/s; end to end "
                f"{events / (accept_s + done.seconds):,.0f} events/s; per event: "
                f"{done.statements / events:.2f} statements, CPU ms worker "
                f"{done.cpu * 1000 / events:.2f}, postgres backend {db_ms}; "
                f"other programs {done.other_cores:.2f} cores"
            )
            if number > 1 and not profile:  # the first batch also creates its users
                rates.append(events / (accept_s + done.seconds))
        if rates:
            print(
                f"summary: events={args.events} users={args.users} end-to-end events/s "
                f"median of batches 2..{args.batches}: {statistics.median(rates):,.0f}"
            )
        batches = args.batches + args.profile
        ok = check(sent, batches * args.events)
        if args.storage:
            storage(batches * args.events)
        return 0 if ok else 1
    finally:
        from django.db import connections

        connections.close_all()
        psql(f"DROP DATABASE IF EXISTS {DB_NAME}")


if __name__ == "__main__":
    sys.exit(main())
