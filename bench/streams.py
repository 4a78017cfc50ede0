"""The live streams under load (issue 29, "Performance"): idle connections one ASGI process
holds, and the time from an event to its message at the client, beside the same events with
the streams off.

    .venv/bin/python bench/streams.py [--idle 5000] [--watched 1000] [--duration 15]
        [--threads 8] [--db-name gamify_bench_streams]

What one run does:
1. drops and recreates its own PostgreSQL database and migrates it; creates an organization,
   then, through the admin API, a metric, a points system paying 10 points an event, an
   achievement and a leaderboard (the full pipeline: streak, achievement, points, board);
2. starts, with production settings (DEBUG off), uvicorn on gamify.asgi (one process: the
   streams) and two gunicorns on gamify.wsgi (the events), one with the streams on and one
   with STREAMS_REDIS_URL empty, on the same database and Redis;
3. idle: opens `--idle` user streams to the uvicorn process (an admin key each, no event),
   reads each one's first chunk, measures the process's resident memory before and after
   (/proc/<pid>/status), holds them past a heartbeat and counts those that got it and are
   still open;
4. load: opens `--watched` user streams, then `--threads` client threads send events for those
   users (each thread its own users, one event at a time per user) for `--duration` seconds,
   alternately to the gunicorn without streams and to the one with them (two rounds each);
   for every event sent to the latter, the time from sending its request to its
   points.changed message reaching the stream reader (matched by the user's points total) and
   from its response to that message;
5. prints a table and writes bench/results/streams-<time>.json; drops the database.

The ratio "events/s with streams / events/s without" is the side by side: what publishing
costs the event path (one Redis call after commit, no statement). Nothing here is part of
`make test`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import resource
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.support import database_recreate, free_port, psql  # noqa: E402

BIN = ROOT / ".venv" / "bin"
RESULTS = ROOT / "bench" / "results"
HOST = "127.0.0.1"
POINTS = 10  # per event


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=5000, help="idle streams held at once")
    parser.add_argument("--watched", type=int, default=1000, help="streams open under load")
    parser.add_argument("--duration", type=float, default=15.0, help="seconds per load round")
    parser.add_argument("--threads", type=int, default=8, help="client threads sending events")
    parser.add_argument("--heartbeat", type=int, default=5, help="STREAMS_HEARTBEAT_SECONDS")
    parser.add_argument("--db-name", default="gamify_bench_streams")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/9")
    return parser.parse_args()


def app_env(args: argparse.Namespace, streams: bool) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"CELERY_BROKER_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        DEBUG="false",
        SECRET_KEY=args.secret,
        ALLOWED_HOSTS=HOST,
        SECURE_SSL_REDIRECT="false",
        LOG_LEVEL="WARNING",
        DATABASE_URL=f"postgres://postgres@{HOST}:5432/{args.db_name}",
        PYTHONUNBUFFERED="1",
        LEADERBOARD_RANKS_REDIS_URL=args.redis,
        LEADERBOARD_RANKS_PREFIX=args.prefix,
        STREAMS_REDIS_URL=args.redis if streams else "",
        STREAMS_PREFIX=args.prefix,
        STREAMS_HEARTBEAT_SECONDS=str(args.heartbeat),
        RATE_LIMIT_TIER1="0",
        RATE_LIMIT_TIER2="0",
    )
    return env


def manage(env: dict[str, str], *command: str) -> str:
    result = subprocess.run(
        [str(BIN / "python"), "manage.py", *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


class Process:
    """A server in its own process group, stopped with the benchmark."""

    def __init__(self, command: list[str], env: dict[str, str], port: int) -> None:
        self.port = port
        self.log = open(RESULTS / f"streams-server-{port}.log", "w")  # noqa: SIM115
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                conn = http.client.HTTPConnection(HOST, port, timeout=2)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"the server on {port} did not start: see {self.log.name}")

    def rss_kib(self) -> int:
        """Resident memory of the process (uvicorn: one process)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


def api(port: int, key: str, method: str, path: str, body: Any = None) -> Any:
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    data = json.dumps(body) if body is not None else None
    headers = {"X-API-KEY": key, "Content-Type": "application/json"}
    conn.request(method, path, data, headers)
    response = conn.getresponse()
    payload = response.read()
    if response.status >= 300:
        raise RuntimeError(f"{method} {path}: {response.status} {payload[:300]!r}")
    return json.loads(payload) if payload else None


def configure(port: int, key: str) -> None:
    metric = api(port, key, "POST", "/admin/v1/metrics", [{"name": "Words", "key": "words"}])
    metric_id = metric["created"][0]["id"]
    system = api(port, key, "POST", "/admin/v1/points", [{"name": "XP", "key": "xp"}])
    trigger = {"type": "metric", "points": POINTS, "metricThreshold": 1, "status": "active"}
    api(
        port,
        key,
        "POST",
        f"/admin/v1/points/{system['created'][0]['id']}/triggers",
        [trigger | {"metricId": metric_id}],
    )
    achievement = {
        "name": "Ten",
        "trigger": "metric",
        "metricId": metric_id,
        "metricValue": 10,
        "status": "active",
    }
    api(port, key, "POST", "/admin/v1/achievements", [achievement])
    board = {
        "name": "Top",
        "key": "top",
        "rankBy": "points",
        "pointsSystemKey": "xp",
        "status": "active",
        "maxParticipants": 10000,
    }
    api(port, key, "POST", "/admin/v1/leaderboards", [board])
    api(
        port,
        key,
        "PATCH",
        "/admin/v1/streaks/settings",
        {
            "frequency": "daily",
            "metrics": [{"key": "words", "threshold": 1}],
        },
    )


# --- stream clients ---------------------------------------------------------------------------


class Streams:
    """Stream readers on one event loop in a thread of their own."""

    def __init__(self, port: int, key: str) -> None:
        self.port, self.key = port, key
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.arrivals: dict[tuple[str, int], float] = {}
        self.heartbeats: set[str] = set()
        self.open: set[str] = set()
        self.writers: list[asyncio.StreamWriter] = []

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    async def _one(self, user: str, ready: asyncio.Semaphore) -> None:
        reader, writer = await asyncio.open_connection(HOST, self.port, limit=1 << 20)
        self.writers.append(writer)
        writer.write(
            f"GET /ext/v1/users/{user}/stream HTTP/1.1\r\nHost: {HOST}\r\n"
            f"X-API-KEY: {self.key}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            ready.release()
            raise RuntimeError(head.decode(errors="replace"))
        self.open.add(user)
        first = True
        try:
            while True:
                size_line = await reader.readuntil(b"\r\n")  # chunked transfer
                size = int(size_line.strip(), 16)
                if size == 0:
                    break
                chunk = await reader.readexactly(size + 2)
                now = time.monotonic()
                if first:
                    first = False
                    ready.release()
                text = chunk[:-2].decode()
                if text.startswith(":"):
                    self.heartbeats.add(user)
                elif "event: points.changed" in text:
                    data = json.loads(text.split("data: ", 1)[1])
                    self.arrivals[(user, int(data["points"]["total"]))] = now
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.open.discard(user)

    async def _open_all(self, users: list[str], parallel: int = 200) -> None:
        ready = asyncio.Semaphore(0)
        gate = asyncio.Semaphore(parallel)

        async def opened(user: str) -> None:
            async with gate:
                self.loop.create_task(self._one(user, ready))
                await ready.acquire()

        await asyncio.gather(*(opened(u) for u in users))

    def open_all(self, users: list[str]) -> float:
        started = time.monotonic()
        self.run(self._open_all(users))
        return time.monotonic() - started

    async def _close_all(self) -> None:
        for writer in self.writers:
            writer.close()
        self.writers.clear()
        await asyncio.sleep(0.5)

    def close_all(self) -> None:
        self.run(self._close_all())


# --- load -------------------------------------------------------------------------------------


def send_events(
    port: int,
    key: str,
    users: list[str],
    duration: float,
    totals: dict[str, int],
    sent: list[tuple[str, int, float, float]],
) -> int:
    """One client thread: events for its users, one at a time, for `duration` seconds."""
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    headers = {"X-API-KEY": key, "Content-Type": "application/json"}
    done, index = 0, 0
    end = time.monotonic() + duration
    while time.monotonic() < end:
        user = users[index % len(users)]
        index += 1
        body = json.dumps({"user": {"id": user}, "value": 1})
        started = time.monotonic()
        conn.request("POST", "/v1/metrics/words/event", body, headers)
        response = conn.getresponse()
        response.read()
        answered = time.monotonic()
        if response.status != 201:
            raise RuntimeError(f"event: {response.status}")
        totals[user] = totals.get(user, 0) + POINTS
        sent.append((user, totals[user], started, answered))
        done += 1
    conn.close()
    return done


def load_round(
    port: int, key: str, users: list[str], threads: int, duration: float, totals: dict[str, int]
) -> tuple[float, list[tuple[str, int, float, float]]]:
    sent: list[tuple[str, int, float, float]] = []
    counts = [0] * threads

    def work(i: int) -> None:
        counts[i] = send_events(port, key, users[i::threads], duration, totals, sent)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(counts) / duration, sent


def percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> int:
    args = parse_args()
    args.prefix = f"bench-streams-{secrets.token_hex(4)}:"
    args.secret = f"bench-{secrets.token_urlsafe(32)}"  # the servers share it (stream tokens)
    RESULTS.mkdir(exist_ok=True)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the servers inherit it
    database_recreate(args.db_name)
    servers: list[Process] = []
    streams: Streams | None = None
    try:
        on, off = app_env(args, streams=True), app_env(args, streams=False)
        manage(on, "migrate", "--noinput")
        org = json.loads(manage(on, "create_organization", "Bench", "--json").splitlines()[-1])
        key = org["apiKey"]
        gunicorn = [
            str(BIN / "gunicorn"),
            "-c",
            "python:gamify.gunicorn_conf",
            "gamify.wsgi",
            "--workers",
            "2",
        ]
        port_on, port_off, port_asgi = free_port(), free_port(), free_port()
        servers.append(Process([*gunicorn, "--bind", f"{HOST}:{port_on}"], on, port_on))
        servers.append(Process([*gunicorn, "--bind", f"{HOST}:{port_off}"], off, port_off))
        asgi = Process(
            [
                str(BIN / "uvicorn"),
                "gamify.asgi:application",
                "--host",
                HOST,
                "--port",
                str(port_asgi),
                "--no-access-log",
                "--limit-concurrency",
                "20000",
                "--backlog",
                "8192",
                "--log-level",
                "warning",
            ],
            on,
            port_asgi,
        )
        servers.append(asgi)
        configure(port_on, key)
        streams = Streams(port_asgi, key)

        # Idle connections.
        before = asgi.rss_kib()
        idle_users = [f"idle{n}" for n in range(args.idle)]
        opening = streams.open_all(idle_users)
        time.sleep(1)
        after = asgi.rss_kib()
        time.sleep(args.heartbeat * 2 + 1)
        idle = {
            "connections": args.idle,
            "open_after_heartbeats": len(streams.open & set(idle_users)),
            "got_heartbeat": len(streams.heartbeats & set(idle_users)),
            "seconds_to_open_all": round(opening, 1),
            "rss_before_mib": round(before / 1024, 1),
            "rss_after_mib": round(after / 1024, 1),
            "kib_per_connection": round((after - before) / args.idle, 1),
        }
        streams.close_all()
        time.sleep(2)

        # Load: watched users' events, with and without streams.
        watched = [f"w{n}" for n in range(args.watched)]
        streams.open_all(watched)
        totals: dict[str, int] = {}
        rounds: list[dict[str, Any]] = []
        latencies: list[float] = []
        after_response: list[float] = []
        missing = 0
        for label, port in (("off", port_off), ("on", port_on), ("off", port_off), ("on", port_on)):
            rate, sent = load_round(port, key, watched, args.threads, args.duration, totals)
            rounds.append({"streams": label, "events_per_s": round(rate, 1)})
            if label == "on":
                time.sleep(1)  # the last messages
                for user, total, started, answered in sent:
                    arrived = streams.arrivals.get((user, total))
                    if arrived is None:
                        missing += 1
                        continue
                    latencies.append((arrived - started) * 1000)
                    after_response.append((arrived - answered) * 1000)
        rate_on = sum(r["events_per_s"] for r in rounds if r["streams"] == "on")
        rate_off = sum(r["events_per_s"] for r in rounds if r["streams"] == "off")
        load = {
            "watched_streams": args.watched,
            "client_threads": args.threads,
            "rounds": rounds,
            "ratio_on_to_off": round(rate_on / rate_off, 3) if rate_off else None,
            "messages_missing": missing,
            "event_to_message_ms": {
                "p50": round(percentile(latencies, 50) or 0, 1),
                "p99": round(percentile(latencies, 99) or 0, 1),
                "max": round(max(latencies, default=0), 1),
                "count": len(latencies),
            },
            "response_to_message_ms": {
                "p50": round(percentile(after_response, 50) or 0, 1),
                "p99": round(percentile(after_response, 99) or 0, 1),
            },
        }
        report = {"idle": idle, "load": load, "args": {**vars(args)}}
        stamp = time.strftime("%Y%m%d-%H%M%S")
        (RESULTS / f"streams-{stamp}.json").write_text(json.dumps(report, indent=2))
        print(json.dumps({"idle": idle, "load": load}, indent=2))
        return 0
    finally:
        if streams is not None:
            with contextlib.suppress(Exception):  # best effort on the way out
                streams.close_all()
        for server in servers:
            server.stop()
        psql(f"DROP DATABASE IF EXISTS {args.db_name} WITH (FORCE)")


if __name__ == "__main__":
    sys.exit(main())
