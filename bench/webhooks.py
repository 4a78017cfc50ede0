"""Benchmark of webhooks: what they cost the event path, and how fast deliveries go out.

    .venv/bin/python bench/webhooks.py [--events 2000] [--senders 4]

What one run does:
1. drops and recreates the PostgreSQL database `gamify_bench_webhooks` and migrates it;
2. creates an organization, a metric `words` with a daily streak on it (so every event of a new
   user starts a streak: one `streak.started` event per request);
3. processes `--events` events in-process (the pipeline's `event_process`, no HTTP) for as many
   users, first with no endpoint, then with two endpoints subscribed to every type, and
   reports the mean time per event of each;
4. starts a receiver (a subprocess answering 200 to everything and counting) on 127.0.0.1,
   and delivers the 2 x `--events` deliveries with `--senders` threads, reporting deliveries
   per second; checks every delivery succeeded and the receiver counted them all.
"""

import argparse
import datetime as dt
import os
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.support import CountingService, database_recreate, psql  # noqa: E402

DB_NAME = "gamify_bench_webhooks"

RECEIVER = """
import sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

count = 0
lock = threading.Lock()

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_POST(self):
        global count
        self.rfile.read(int(self.headers["content-length"]))
        with lock:
            count += 1
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
for line in sys.stdin:
    print(count, flush=True)
"""


def setup_env() -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="gamify.settings",
        DEBUG="false",
        SECRET_KEY="bench-only-" + "x" * 50,
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
        LOG_LEVEL="WARNING",
        CELERY_BROKER_URL="",
        WEBHOOK_ALLOW_HTTP="true",
        WEBHOOK_ALLOWED_NETWORKS="127.0.0.0/8",
    )
    os.environ.pop("REDIS_URL", None)


def seed() -> Any:
    from django.core.management import call_command

    from apps.accounts.services import organization_create
    from apps.metrics.configuration import metric_create
    from apps.streaks.configuration import streak_settings_update
    from apps.streaks.domain import TenantStreakSettings

    call_command("migrate", verbosity=0)
    tenant = organization_create("Bench").tenant
    metric_create(tenant, name="Words", key="words", unit_type="number", units="")
    tenant.refresh_from_db()
    streak_settings_update(tenant, TenantStreakSettings(conditions=[("words", 1)]))
    tenant.refresh_from_db()
    return tenant


def time_events(tenant: Any, users: range, prefix: str) -> float:
    """Mean milliseconds per event through the pipeline (in-process)."""
    from apps.pipeline.services import EventInput, event_process
    from apps.users.domain import UserFields

    started = time.perf_counter()
    for n in users:
        event_process(
            tenant,
            EventInput(
                metric_key="words",
                user_id=f"{prefix}{n}",
                user_fields=UserFields(),
                value=Decimal(1),
                attributes={},
            ),
        )
    return (time.perf_counter() - started) * 1000 / len(users)


def deliver_all(senders: int) -> int:
    from django.db import connections
    from django.utils import timezone

    from apps.webhooks.delivery import deliveries_due_claim, deliveries_send

    chunks = deliveries_due_claim(timezone.now() + dt.timedelta(seconds=1), limit=10**6)
    lock = threading.Lock()
    done = [0]

    def work() -> None:
        try:
            while True:
                with lock:
                    if not chunks:
                        return
                    ids = chunks.pop()
                counts = deliveries_send(ids)
                with lock:
                    done[0] += counts.get("succeeded", 0)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work) for _ in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--senders", type=int, default=4, help="delivering threads")
    args = parser.parse_args()

    receiver = CountingService(RECEIVER)
    port = receiver.port
    database_recreate(DB_NAME)
    try:
        setup_env()
        import django

        django.setup()
        from django.db.models import Count

        from apps.webhooks import tasks
        from apps.webhooks.configuration import webhook_endpoint_create
        from apps.webhooks.models import WebhookDelivery

        # Measured apart: deliveries are sent below, not inline after each event's commit.
        tasks.webhooks_dispatch_task.delay = lambda *a, **k: None  # type: ignore[method-assign]
        tenant = seed()
        time_events(tenant, range(200), "warm-")  # configuration snapshots, connections
        off = time_events(tenant, range(args.events), "off-")
        for _ in range(2):
            webhook_endpoint_create(tenant, url=f"http://127.0.0.1:{port}/hook")
        tenant.refresh_from_db()
        on = time_events(tenant, range(args.events), "on-")
        print(
            f"event path: {off:.2f} ms/event without webhooks, {on:.2f} ms/event with two "
            f"endpoints (+{on - off:.2f} ms: the payload, one event row, two delivery rows)"
        )
        started = time.perf_counter()
        delivered = deliver_all(args.senders)
        seconds = time.perf_counter() - started
        received = receiver.count()
        print(
            f"deliveries: {delivered} in {seconds:.2f} s = {delivered / seconds:,.0f}/s "
            f"({args.senders} threads, signed, pinned connections)"
        )
        statuses = dict(WebhookDelivery.objects.values_list("status").annotate(n=Count("id")))
        expected = 2 * args.events
        ok = delivered == expected == received and statuses == {"succeeded": expected}
        print(f"checks: received={received} statuses={statuses}: " + ("ok" if ok else "FAILED"))
        return 0 if ok else 1
    finally:
        receiver.stop()
        from django.db import connections

        connections.close_all()
        psql(f"DROP DATABASE IF EXISTS {DB_NAME}")


if __name__ == "__main__":
    sys.exit(main())
