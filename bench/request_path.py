"""The request path of one read, in process: CPU, SQL statements and Redis round trips per request.

    .venv/bin/python bench/request_path.py [--requests 1000] [--rounds 7] [--case points-read]
        [--profile CASE] [--keep-db] [--db-name NAME] [--redis URL]

Load tests on a shared two-core machine move by 20 % from one run to the next; one process
calling the WSGI application itself moves by a few percent, so this is where the request path
(middleware, authentication, rate limiting, DRF, the selector, the render) is measured.

What one run does:
1. recreates the PostgreSQL database `gamify_bench_reqpath` (`--db-name`) and migrates it;
   empties Redis
   database 7 (`--redis`), which serves as REDIS_URL: the cache, the rate limits and the
   leaderboard ranks, as in production;
2. with production settings (DEBUG off, every middleware, `gamify.wsgi.application`, the
   rate limits of the defaults), creates an organization and, through the admin API called the
   same way, `make bench`'s configurations: the points system `reader` (one metric trigger) with
   200 users who earned points, the active board `words-board` with 1,000 participants, and
   the metric `plain` (no feature) with 200 users who sent one event;
3. per case, after 200 warm-up requests, `--rounds` rounds of `--requests` requests through the
   WSGI application with a prepared environ (an admin key in X-API-KEY, the headers an SDK
   sends), each answer checked (status 200; each user's points, the same top-100 page, each
   event's total equal to the values sent); the event case `event-plain` posts
   `{"user": {"id": ...}, "value": 1}` for one of the 200 existing users; it reports per
   request the median of the rounds' CPU of this thread (µs), the wall time, the CPU of the
   PostgreSQL backend, SQL statements (`connection.execute_wrapper`), Redis round trips (a
   command, or a pipeline's execute) and function calls (`sys.setprofile`: unlike CPU time,
   the same on every run of the same code, so the effect of one change shows through noise);
4. with `--profile CASE`, runs that case's requests once more under cProfile and prints the
   top functions (cumulative and own time), timed in CPU of this thread.

Nothing here is part of `make test`.
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.support import database_recreate  # noqa: E402

DB_NAME = "gamify_bench_reqpath"  # --db-name
HOST = "127.0.0.1"
POINTS_KEY = "reader"
POINTS_USERS = 200
BOARD_KEY = "words-board"
BOARD_USERS = 1000
EVENT_KEY = "plain"  # a metric with no feature configured
EVENT_USERS = 200
EARNED: dict[str, int] = {}  # the points each user earned at seeding
TOTALS: dict[str, int] = {}  # each event user's total so far (the event case checks its answers)

# A request: method, URL and body (JSON bytes, b"" for none).
Call = tuple[str, str, bytes]


def _event() -> Call:
    user = f"event-user-{random.randrange(EVENT_USERS)}"
    body = json.dumps({"user": {"id": user}, "value": 1}).encode()
    return "POST", f"/v1/metrics/{EVENT_KEY}/event", body


CASES: dict[str, Callable[[], Call]] = {
    "points-read": lambda: (
        "GET",
        f"/v1/users/points-user-{random.randrange(POINTS_USERS)}/points/reader",
        b"",
    ),
    "leaderboard-top100": lambda: ("GET", f"/v1/leaderboards/{BOARD_KEY}?limit=100", b""),
    # An existing user's event on a metric with no features: DRF's parsing, the serializer's
    # validation, the event's statements and the render.
    "event-plain": _event,
}


def setup_env(redis_url: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="gamify.settings",
        DEBUG="false",
        SECRET_KEY="bench-only-" + "x" * 50,
        ALLOWED_HOSTS=HOST,
        SECURE_SSL_REDIRECT="false",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
        LOG_LEVEL="WARNING",
        REDIS_URL=redis_url,
        BACKGROUND_TASKS="inline",
    )
    for name in ("CELERY_BROKER_URL", "LEADERBOARD_RANKS_REDIS_URL", "LEADERBOARD_RANKS_PREFIX"):
        os.environ.pop(name, None)


class Wsgi:
    """Calls the WSGI application as gunicorn does: an environ, start_response, the body
    iterated and closed (which sends request_finished)."""

    def __init__(self, key: str) -> None:
        from gamify.wsgi import application

        self.app = application
        self.key = key

    def environ(self, method: str, url: str, body: bytes) -> dict[str, Any]:
        path, _, query = url.partition("?")
        environ = {
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": "",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "RAW_URI": url,
            "SERVER_NAME": HOST,
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "REMOTE_PORT": "50000",
            "HTTP_HOST": f"{HOST}:8000",
            "HTTP_USER_AGENT": "trophy-python/1.0",
            "HTTP_ACCEPT": "application/json",
            "HTTP_ACCEPT_ENCODING": "gzip, deflate",
            "HTTP_CONNECTION": "keep-alive",
            "HTTP_X_API_KEY": self.key,
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.input_terminated": True,
        }
        if body:
            environ["CONTENT_TYPE"] = "application/json"
            environ["CONTENT_LENGTH"] = str(len(body))
        return environ

    def call(self, method: str, url: str, body: Any = None) -> tuple[int, dict[str, str], bytes]:
        raw = (
            body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
        )
        answer: dict[str, Any] = {}

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None):
            answer["status"] = int(status.split()[0])
            answer["headers"] = dict(headers)

        result = self.app(self.environ(method, url, raw), start_response)
        try:
            content = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        return answer["status"], answer["headers"], content

    def api(self, method: str, url: str, body: Any = None) -> Any:
        status, _, content = self.call(method, url, body)
        if status not in (200, 201):
            raise RuntimeError(f"{method} {url}: HTTP {status} {content[:500]!r}")
        return json.loads(content)


def seed() -> str:
    """The organization, the points system and the board; returns the admin key."""
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    out = io.StringIO()
    call_command("create_organization", "Bench", "--json", stdout=out)
    key = json.loads(out.getvalue())["apiKey"]
    client = Wsgi(key)
    rng = random.Random(1)
    for metric_key, name in ((POINTS_KEY, "Reader"), ("words", "Words"), (EVENT_KEY, "Plain")):
        client.api("POST", "/admin/v1/metrics", [{"name": name, "key": metric_key}])
    metrics = {m["key"]: m["id"] for m in client.api("GET", "/admin/v1/metrics?limit=100")}
    [system] = client.api("POST", "/admin/v1/points", [{"name": "Reader", "key": POINTS_KEY}])[
        "created"
    ]
    trigger = {"type": "metric", "points": 1, "metricId": metrics[POINTS_KEY]}
    client.api(
        "POST",
        f"/admin/v1/points/{system['id']}/triggers",
        [{**trigger, "metricThreshold": 1, "status": "active"}],
    )
    board = {"name": "Words", "key": BOARD_KEY, "rankBy": "metric", "status": "active"}
    client.api("POST", "/admin/v1/leaderboards", [{**board, "metricId": metrics["words"]}])
    for n in range(POINTS_USERS):
        user = {"user": {"id": f"points-user-{n}"}, "value": rng.randint(1, 1000)}
        client.api("POST", f"/v1/metrics/{POINTS_KEY}/event", user)
        EARNED[user["user"]["id"]] = user["value"]  # one point per unit
    for n in range(BOARD_USERS):
        user = {"user": {"id": f"board-user-{n}"}, "value": rng.randint(1, 1000)}
        client.api("POST", "/v1/metrics/words/event", user)
    for n in range(EVENT_USERS):
        user = {"user": {"id": f"event-user-{n}"}, "value": 1}
        client.api("POST", f"/v1/metrics/{EVENT_KEY}/event", user)
        TOTALS[user["user"]["id"]] = 1
    return str(key)


class Counters:
    """SQL statements and Redis round trips (a command outside a pipeline, or a pipeline's
    execute), counted while installed."""

    def __init__(self) -> None:
        self.statements = 0
        self.redis = 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.statements += 1
        return execute(sql, params, many, context)

    def install(self) -> None:
        import redis.client

        counters = self
        command = redis.client.Redis.execute_command
        pipeline_execute = redis.client.Pipeline.execute

        def execute_command(client: Any, *args: Any, **options: Any) -> Any:
            if not isinstance(client, redis.client.Pipeline):
                counters.redis += 1
            return command(client, *args, **options)

        def execute(pipeline: Any, *args: Any, **kwargs: Any) -> Any:
            counters.redis += 1
            return pipeline_execute(pipeline, *args, **kwargs)

        redis.client.Redis.execute_command = execute_command  # type: ignore[method-assign]
        redis.client.Pipeline.execute = execute  # type: ignore[method-assign]


def backend_cpu_seconds() -> float:
    """CPU seconds so far of the PostgreSQL backend serving this process's connection."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_round(
    client: Wsgi, make: Callable[[], Call], n: int, check: Callable[[Call, int, bytes], None]
) -> tuple[float, float, float]:
    calls = [make() for _ in range(n)]
    backend = backend_cpu_seconds()
    wall, cpu = time.perf_counter(), time.thread_time()
    for call in calls:
        status, _, content = client.call(*call)
        check(call, status, content)
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    backend = backend_cpu_seconds() - backend
    return cpu / n * 1e6, wall / n * 1e6, backend / n * 1e6


def python_calls(
    client: Wsgi,
    make: Callable[[], Call],
    check: Callable[[Call, int, bytes], None],
    n: int = 50,
) -> float:
    """Function calls (Python and built-in) per request: the same on every run of the same
    code, where CPU time moves with the machine's load, so it tells one change's effect."""
    count = 0

    def counter(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    for call in [make() for _ in range(n)]:
        sys.setprofile(counter)
        try:
            status, _, content = client.call(*call)
        finally:
            sys.setprofile(None)
        check(call, status, content)
    return count / n


def measure(client: Wsgi, name: str, args: argparse.Namespace, counters: Counters) -> None:
    from django.db import connection

    make = CASES[name]
    random.seed(2)
    expected: dict[str, bytes] = {}

    def check(call: Call, status: int, content: bytes) -> None:
        method, url, body = call
        if status != (201 if method == "POST" else 200):
            raise RuntimeError(f"{name}: HTTP {status} {content[:300]!r}")
        if name == "event-plain":
            user = json.loads(body)["user"]["id"]
            TOTALS[user] += 1
            if json.loads(content)["total"] != TOTALS[user]:
                raise RuntimeError(f"{name}: {user}'s total is not the {TOTALS[user]} sent")
        if name == "points-read":
            user = url.split("/")[3]
            if json.loads(content)["total"] != EARNED[user]:
                raise RuntimeError(f"{name}: {user}'s total is not the {EARNED[user]} earned")
        if name == "leaderboard-top100":
            first = expected.setdefault("body", content)
            if content != first:
                raise RuntimeError(f"{name}: the page changed between requests")

    run_round(client, make, 200, check)  # warm-up: caches, compiled statements
    counters.statements = counters.redis = 0
    first = make()
    with connection.execute_wrapper(counters):
        status, headers, content = client.call(*first)
    check(first, status, content)
    statements, redis_calls = counters.statements, counters.redis
    rounds = [run_round(client, make, args.requests, check) for _ in range(args.rounds)]
    calls = python_calls(client, make, check)
    cpu = statistics.median(r[0] for r in rounds)
    print(
        f"{name:20} cpu {cpu:7.0f} µs/request (rounds {min(r[0] for r in rounds):.0f}-"
        f"{max(r[0] for r in rounds):.0f}), wall {statistics.median(r[1] for r in rounds):.0f} µs,"
        f" postgres backend {statistics.median(r[2] for r in rounds):.0f} µs;"
        f" {statements} SQL statements, {redis_calls} Redis round trips, {calls:.0f} calls;"
        f" {len(content)}-byte body"
    )
    if args.show_headers:
        print(f"   {status} {headers}")
    if args.profile == name:
        # CPU time of this thread, not wall time: waiting on PostgreSQL or Redis is not ours.
        profiler = cProfile.Profile(time.thread_time)
        calls_made = [make() for _ in range(args.requests)]
        profiler.enable()
        for call in calls_made:
            client.call(*call)
        profiler.disable()
        for call in calls_made:
            if call[0] == "POST":  # the events counted: keep the expected totals true
                TOTALS[json.loads(call[2])["user"]["id"]] += 1
        if args.profile_out:
            profiler.dump_stats(args.profile_out)
        for order in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(45)
            print(out.getvalue())


def main() -> int:
    global DB_NAME
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--case", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--profile", choices=sorted(CASES), help="cProfile this case")
    parser.add_argument("--profile-out", help="also write the profile to this file (pstats)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/7", help="REDIS_URL")
    parser.add_argument("--show-headers", action="store_true", help="print each case's answer")
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument(
        "--db-name",
        default=DB_NAME,
        help="the scratch PostgreSQL database, recreated and dropped (default"
        " gamify_bench_reqpath)",
    )
    args = parser.parse_args()
    DB_NAME = args.db_name

    setup_env(args.redis)
    database_recreate(DB_NAME)
    import redis

    redis.Redis.from_url(args.redis).flushdb()
    import django

    django.setup()
    from django.db import connection

    counters = Counters()
    counters.install()
    try:
        client = Wsgi(seed())
        revision = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        print(f"revision {revision}, {args.rounds} rounds x {args.requests} requests")
        for name in args.case:
            measure(client, name, args, counters)
    finally:
        connection.close()
        if not args.keep_db:
            from bench.support import psql

            psql(f"DROP DATABASE IF EXISTS {DB_NAME}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
