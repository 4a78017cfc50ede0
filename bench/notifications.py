"""Benchmark of a streak-reminder run: select the due users, record their messages, send them
over SMTP to a local sink.

    .venv/bin/python bench/notifications.py [--users 10000] [--senders 2]

What one run does:
1. drops and recreates the PostgreSQL database `gamify_bench_notify` and migrates it;
2. creates an organization, a daily streak on metric `words`, and `--users` end-users (all in
   Europe/Paris, with an email) whose streak was extended yesterday, written directly in bulk;
   activates the default streak-reminder template;
3. starts an SMTP sink (aiosmtpd, in a subprocess) on a free port of 127.0.0.1;
4. at 20:05 Paris time, times the selection of the due streaks alone (the sweep's query), then
   the whole sweep (select, decide, record the messages), then the delivery: the due messages
   are claimed and sent in chunks of 100 over one SMTP connection each, by `--senders` threads;
5. checks that every user got exactly one message, all `sent`, and the sink counted them.

Nothing here is part of `make test`.
"""

import argparse
import datetime as dt
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.support import CountingService, database_recreate, psql  # noqa: E402

DB_NAME = "gamify_bench_notify"
ZONE = "Europe/Paris"

SINK = """
import asyncio, sys
from aiosmtpd.controller import Controller

class Count:
    def __init__(self):
        self.n = 0
    async def handle_DATA(self, server, session, envelope):
        self.n += 1
        return "250 OK"

handler = Count()
controller = Controller(handler, hostname="127.0.0.1", port=int(sys.argv[1]))
controller.start()
for line in sys.stdin:
    print(handler.n, flush=True)
"""


# A fake Expo push service: answers every message with an ok ticket and counts them.
FAKE_EXPO = """
import json, sys, threading, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

count = 0
lock = threading.Lock()

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no delayed-ACK stall
    def do_POST(self):
        global count
        messages = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with lock:
            count += len(messages)
        body = json.dumps({"data": [{"status": "ok", "id": str(uuid.uuid4())} for _ in messages]})
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())
    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
for line in sys.stdin:
    print(count, flush=True)
"""


def setup_env(port: int, channel: str) -> None:
    os.environ.update(
        PUSH_BACKEND="providers",
        PUSH_EXPO_URL=f"http://127.0.0.1:{port}",
        # The raw fan-out speed; production caps Expo at 600 per second per channel.
        PUSH_EXPO_RATE_LIMIT="0",
    )
    os.environ.update(
        DJANGO_SETTINGS_MODULE="gamify.settings",
        DEBUG="false",
        SECRET_KEY="bench-only-" + "x" * 50,
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(port),
        PUBLIC_URL="http://127.0.0.1:8000",
        LOG_LEVEL="WARNING",
        CELERY_BROKER_URL="",
    )
    os.environ.pop("REDIS_URL", None)


def seed(users: int, now: dt.datetime, channel: str) -> Any:
    from django.core.management import call_command

    from apps.accounts.services import organization_create
    from apps.metrics.configuration import metric_create
    from apps.notifications.configuration import email_templates_seed
    from apps.notifications.models import EmailTemplate, PushTemplate
    from apps.notifications.push.configuration import push_channel_create, push_templates_seed
    from apps.streaks import domain
    from apps.streaks.configuration import streak_settings_update
    from apps.streaks.models import StreakState
    from apps.users.models import EndUser

    call_command("migrate", verbosity=0)
    tenant = organization_create("Bench").tenant
    metric_create(tenant, name="Words", key="words", unit_type="number", units="")
    tenant.refresh_from_db()
    streak_settings_update(
        tenant, domain.TenantStreakSettings(frequency="daily", conditions=[("words", 1)])
    )
    tenant.refresh_from_db()
    if channel == "email":
        email_templates_seed(tenant)
        EmailTemplate.objects.filter(tenant=tenant, type="streak_reminder").update(status="active")
    else:
        push_channel_create(tenant, kind="expo")
        push_templates_seed(tenant)
        PushTemplate.objects.filter(tenant=tenant, type="streak_reminder").update(status="active")
    from apps.accounts.services import tenant_config_changed

    tenant_config_changed(tenant)
    today = now.astimezone(domain_zone()).date()
    yesterday = today - dt.timedelta(days=1)
    rows = [
        EndUser(
            tenant=tenant,
            external_id=f"u{n}",
            tz=ZONE,
            **(
                {"email": f"u{n}@example.com"}
                if channel == "email"
                else {"device_tokens": [f"ExponentPushToken[u{n}]"], "subscribe_to_emails": False}
            ),
        )
        for n in range(users)
    ]
    EndUser.objects.bulk_create(rows, batch_size=2000)
    due = domain.missed_at(yesterday, "daily", domain_zone())
    StreakState.objects.bulk_create(
        [
            StreakState(
                tenant=tenant,
                user=user,
                frequency="daily",
                length=3,
                started=yesterday - dt.timedelta(days=2),
                settled_through=yesterday,
                extended_at=now - dt.timedelta(days=1),
                tz=ZONE,
                due_at=due,
            )
            for user in rows
        ],
        batch_size=2000,
    )
    return tenant


def domain_zone() -> Any:
    import zoneinfo

    return zoneinfo.ZoneInfo(ZONE)


def time_selection(tenant: Any, now: dt.datetime) -> float:
    from apps.notifications.domain import REMINDER_LEAD
    from apps.notifications.scheduling import _reachable
    from apps.streaks.models import StreakState
    from apps.users.models import EndUser

    started = time.perf_counter()
    count = len(
        list(
            StreakState.objects.filter(
                tenant=tenant,
                frequency="daily",
                length__gt=0,
                enabled=True,
                due_at__gt=now,
                due_at__lte=now + REMINDER_LEAD["daily"],
                user__in=_reachable(EndUser.objects.filter(tenant=tenant)),
            ).values_list("pk", "user_id", "due_at")
        )
    )
    elapsed = time.perf_counter() - started
    print(f"selection query: {count} due streaks in {elapsed * 1000:.0f} ms")
    return elapsed


def send_all(now: dt.datetime, senders: int) -> int:
    from django.db import connections

    from apps.notifications.delivery import messages_due_claim, messages_send

    chunks = [ids for lists in messages_due_claim(now, limit=10**6).values() for ids in lists]
    lock = threading.Lock()
    sent = [0]

    def work() -> None:
        try:
            while True:
                with lock:
                    if not chunks:
                        return
                    ids = chunks.pop()
                counts = messages_send(ids, now)
                with lock:
                    sent[0] += counts.get("sent", 0)
        finally:
            connections.close_all()

    if senders == 1:
        work()  # in this thread: what --profile sees
        return sent[0]
    threads = [threading.Thread(target=work) for _ in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--senders", type=int, default=2, help="sending threads")
    parser.add_argument("--profile", action="store_true", help="cProfile the delivery phase")
    parser.add_argument(
        "--channel", choices=("email", "push"), default="email", help="push: to a fake Expo"
    )
    args = parser.parse_args()

    sink = CountingService(SINK if args.channel == "email" else FAKE_EXPO)
    port = sink.port
    database_recreate(DB_NAME)
    time.sleep(0.5)  # the sink binds its port
    try:
        setup_env(port, args.channel)
        import django

        django.setup()
        import time_machine
        from django.db.models import Count

        from apps.notifications.models import Message
        from apps.notifications.scheduling import streak_reminders_schedule

        now = dt.datetime(2026, 3, 10, 20, 5, tzinfo=domain_zone()).astimezone(dt.UTC)
        started = time.perf_counter()
        tenant = seed(args.users, now, args.channel)
        print(f"seeded {args.users} users in {time.perf_counter() - started:.1f} s")
        # With a broker, the sweep only records messages and a worker sends them; here (no
        # broker) the dispatch it enqueues after commit would send inline and blur the two.
        from apps.notifications import tasks

        tasks.messages_dispatch_task.delay = lambda *a, **k: None  # type: ignore[method-assign]
        with time_machine.travel(now, tick=True):
            select_s = time_selection(tenant, now)
            started = time.perf_counter()
            recorded = streak_reminders_schedule(now)
            sweep_s = time.perf_counter() - started
            print(
                f"sweep (select, decide, record): {recorded} messages in {sweep_s:.2f} s "
                f"({recorded / sweep_s:,.0f} users/s)"
            )
            started = time.perf_counter()
            if args.profile:
                import cProfile
                import pstats

                profiler = cProfile.Profile()
                sent = profiler.runcall(send_all, now, 1)
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
            else:
                sent = send_all(now, args.senders)
            send_s = time.perf_counter() - started
        received = sink.count()
        print(
            f"delivery: {sent} sent by {args.channel} in {send_s:.2f} s = "
            f"{sent / send_s:,.0f} messages/s ({args.senders} sending threads, chunks of 100)"
        )
        statuses = dict(Message.objects.values_list("status").annotate(n=Count("id")))
        ok = recorded == args.users and received == args.users and statuses == {"sent": args.users}
        print(
            f"checks: recorded={recorded} received by sink={received} statuses={statuses}: "
            + ("ok" if ok else "FAILED")
        )
        print(
            f"summary: users={args.users} select_ms={select_s * 1000:.0f} "
            f"sweep_s={sweep_s:.2f} send_per_s={sent / send_s:.0f}"
        )
        return 0 if ok else 1
    finally:
        sink.stop()
        from django.db import connections

        connections.close_all()
        psql(f"DROP DATABASE IF EXISTS {DB_NAME}")


if __name__ == "__main__":
    sys.exit(main())
