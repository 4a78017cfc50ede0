"""Benchmark of gamify under production settings: `make bench`, or `python bench/run.py --help`.

One run:
1. drops and recreates a PostgreSQL database (gamify_bench) and migrates it;
2. creates an organization (`manage.py create_organization Bench --json`);
3. starts gunicorn on 127.0.0.1 (a free port) with DEBUG off and waits for /healthz;
4. for each case (bench/cases.py): creates its configuration through the admin API, runs a
   warm-up, then a measured phase of fixed duration with a closed-loop keep-alive load
   generator (bench/loadgen.py), and verifies what the server stored;
5. stops gunicorn, checks the database, prints a report, writes bench/results/<case>-<time>.json
   (plus the server log) and drops the database.

Exit status: 0 when every case has at most --max-error-rate errors and every check passed;
1 otherwise; 2 when the benchmark could not be set up; 130 when interrupted. gunicorn is
stopped and the database dropped in every case (--keep-db keeps it for inspection).
See bench/README.md for what is measured and the caveats.
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import platform
import re
import resource
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from cases import CASES, Case
from fairplay import ANOMALY_CASES, ANOMALY_ORDER, print_anomalies
from leagues import LEAGUE_CASES, LEAGUE_ORDER, print_leagues
from loadgen import Phase, Target, run_load
from million import MILLION_CASES, MILLION_ORDER, print_million
from psycopg import sql
from quests import QUEST_CASES, QUEST_ORDER, print_quests
from scale import SCALE_CASES, SCALE_ORDER, print_scale
from side_by_side import COMPARE_ORDER, COMPARISON, SIDE_BY_SIDE_CASES
from statement_count import counter_remove, statement_total

CASES.update(SIDE_BY_SIDE_CASES)
CASES.update(MILLION_CASES)
CASES.update(SCALE_CASES)
CASES.update(LEAGUE_CASES)
CASES.update(QUEST_CASES)
CASES.update(ANOMALY_CASES)

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"
DB_NAME_PATTERN = re.compile(r"^gamify_(h_)?bench[a-z0-9_]*$")
MAX_DURATION = 600
MAX_CONCURRENCY = 256


class BenchError(Exception):
    """The benchmark could not be set up or run."""


# --- command line -------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark gamify (gunicorn + PostgreSQL, production settings) on 127.0.0.1.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--case",
        nargs="+",
        choices=sorted(CASES),
        default=None,
        help="cases to run, in order (default: events); with --compare, the cases of the "
        "side-by-side table to run, each with its ceilings (default: all)",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="side by side with the raw-SQL ceiling (bench/ceiling): runs the cases of "
        "bench/side_by_side.py and prints each gamify figure as a ratio to its ceiling's",
    )
    parser.add_argument(
        "--million",
        action="store_true",
        help="the 1,000,000-participant board (bench/million.py) next to the 1,000-participant "
        "one; prints the issue's targets",
    )
    parser.add_argument(
        "--scale",
        action="store_true",
        help="the scale cases (bench/scale.py): an event's cost with 10,000 and 1,000,000 "
        "users, 0-8 boards per event, boards of 1,000-1,000,000; the server counts its SQL "
        "statements (bench/counting_wsgi.py); with --case, only those scale cases",
    )
    parser.add_argument(
        "--leagues",
        action="store_true",
        help="the league pair (bench/leagues.py): the same events without and with an active "
        "league, each user already in this week's cohort; the server counts its SQL "
        "statements (bench/counting_wsgi.py)",
    )
    parser.add_argument(
        "--quests",
        action="store_true",
        help="the quest pair (bench/quests.py): the same events without and with 3 active "
        "quests that each event moves; the server counts its SQL statements "
        "(bench/counting_wsgi.py)",
    )
    parser.add_argument(
        "--anomalies",
        action="store_true",
        help="the anomaly-rules pair (bench/fairplay.py): the same events without and with two "
        "active anomaly rules; the server counts its SQL statements (bench/counting_wsgi.py)",
    )
    parser.add_argument(
        "--open-loop-fraction",
        type=float,
        default=0.5,
        help="with --compare: after the cases, the full pipeline (and its same-work ceiling) "
        "again in an open loop at this fraction of the full pipeline's closed-loop rate of the "
        "same run, for the p99 target (0: not run)",
    )
    parser.add_argument(
        "--open-loop-connections",
        type=int,
        default=32,
        help="the open loop's threads = connections = most requests in flight",
    )
    parser.add_argument(
        "--ranks-redis",
        default="redis://127.0.0.1:6379/0",
        help="LEADERBOARD_RANKS_REDIS_URL of the server ('' : PostgreSQL counts ranks)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="measured phases per case; the table gives medians"
    )
    parser.add_argument("--duration", type=float, default=20.0, help="measured seconds per case")
    parser.add_argument("--warmup", type=float, default=5.0, help="warm-up seconds per case")
    parser.add_argument(
        "--concurrency", type=int, default=8, help="load threads, one keep-alive connection each"
    )
    parser.add_argument("--users", type=int, default=5000, help="distinct end-user ids")
    parser.add_argument(
        "--worker-class", default="gthread", choices=["gthread", "sync"], help="gunicorn's"
    )
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="gunicorn threads per worker")
    parser.add_argument(
        "--reuse-port",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="gunicorn --reuse-port: each worker listens itself and the kernel spreads "
        "connections (without it, keep-alive connections pile up on one worker)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the request generator")
    parser.add_argument(
        "--verify-users", type=int, default=3, help="users whose totals are read back via GET"
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="per-request timeout, s")
    parser.add_argument(
        "--max-error-rate",
        type=float,
        default=0.01,
        help="fail when errors exceed this share of all requests (warm-up included)",
    )
    parser.add_argument("--db-name", default="gamify_bench", help="dropped and recreated!")
    parser.add_argument("--pg-host", default=HOST)
    parser.add_argument("--pg-port", type=int, default=5432)
    parser.add_argument("--pg-user", default="postgres")
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database at exit")
    parser.add_argument(
        "--results-dir", type=Path, default=REPO / "bench" / "results", help="where to write"
    )
    args = parser.parse_args(argv)
    if not DB_NAME_PATTERN.match(args.db_name):
        parser.error("--db-name must start with gamify_bench (the database is dropped)")
    if not 0 < args.duration <= MAX_DURATION or not 0 <= args.warmup <= MAX_DURATION:
        parser.error(f"--duration and --warmup must be within 0..{MAX_DURATION} s")
    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        parser.error(f"--concurrency must be within 1..{MAX_CONCURRENCY}")
    if not 0 <= args.open_loop_fraction <= 2:
        parser.error("--open-loop-fraction must be within 0..2")
    if not 1 <= args.open_loop_connections <= MAX_CONCURRENCY:
        parser.error(f"--open-loop-connections must be within 1..{MAX_CONCURRENCY}")
    runs = (args.compare, args.million, args.scale, args.leagues, args.quests, args.anomalies)
    if sum(runs) > 1:
        parser.error(
            "--compare, --million, --scale, --leagues, --quests and --anomalies are separate runs"
        )
    if args.quests:
        wanted = set(args.case or QUEST_ORDER)
        if not wanted <= set(QUEST_ORDER):
            parser.error(f"with --quests, --case takes: {', '.join(QUEST_ORDER)}")
        args.case = [name for name in QUEST_ORDER if name in wanted]
    if args.anomalies:
        wanted = set(args.case or ANOMALY_ORDER)
        if not wanted <= set(ANOMALY_ORDER):
            parser.error(f"with --anomalies, --case takes: {', '.join(ANOMALY_ORDER)}")
        args.case = [name for name in ANOMALY_ORDER if name in wanted]
    if args.leagues:
        wanted = set(args.case or LEAGUE_ORDER)
        if not wanted <= set(LEAGUE_ORDER):
            parser.error(f"with --leagues, --case takes: {', '.join(LEAGUE_ORDER)}")
        args.case = [name for name in LEAGUE_ORDER if name in wanted]
    if args.scale:
        wanted = set(args.case or SCALE_ORDER)
        if not wanted <= set(SCALE_ORDER):
            parser.error(f"with --scale, --case takes scale cases only: {', '.join(SCALE_ORDER)}")
        args.case = [name for name in SCALE_ORDER if name in wanted]
    if args.compare:
        wanted = set(args.case or COMPARE_ORDER)
        wanted |= {top for _, case, top in COMPARISON if case in wanted}
        args.case = [name for name in COMPARE_ORDER if name in wanted]
    elif args.case is None:
        args.case = ["events"]
    if args.million:
        args.case = list(MILLION_ORDER)
    if not 1 <= args.repeat <= 10:
        parser.error("--repeat must be within 1..10")
    if args.users < 1 or args.workers < 1 or args.threads < 1 or args.verify_users < 0:
        parser.error("--users, --workers and --threads must be positive")
    return args


# --- database -----------------------------------------------------------------------------


class Database:
    def __init__(self, args: argparse.Namespace) -> None:
        self.name: str = args.db_name
        self.conninfo = {"host": args.pg_host, "port": args.pg_port, "user": args.pg_user}
        self.url = f"postgres://{args.pg_user}@{args.pg_host}:{args.pg_port}/{self.name}"
        self.created = False

    def connect(self, dbname: str = "postgres") -> psycopg.Connection[Any]:
        return psycopg.connect(**self.conninfo, dbname=dbname, autocommit=True, connect_timeout=5)

    def _drop(self, conn: psycopg.Connection[Any]) -> None:
        ident = sql.Identifier(self.name)
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))

    def recreate(self) -> None:
        try:
            with self.connect() as conn:
                self._drop(conn)
                ident = sql.Identifier(self.name)
                conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))
        except psycopg.Error as exc:
            raise BenchError(f"cannot recreate database {self.name}: {exc}") from exc
        self.created = True

    def drop(self) -> None:
        if not self.created:
            return
        try:
            with self.connect() as conn:
                self._drop(conn)
            self.created = False
        except psycopg.Error as exc:
            print(f"warning: could not drop database {self.name}: {exc}", file=sys.stderr)

    def query(self, statement: str, params: tuple[Any, ...] = (), dbname: str | None = None) -> Any:
        """Rows of a read-only query, or None (with a warning) when it fails."""
        try:
            with self.connect(dbname or self.name) as conn:
                return conn.execute(statement, params).fetchall()
        except psycopg.Error as exc:
            print(f"warning: query failed: {exc}", file=sys.stderr)
            return None

    def version(self) -> str:
        rows = self.query("SHOW server_version", dbname="postgres")
        return rows[0][0] if rows else "unknown"

    def settings(self) -> dict[str, str]:
        rows = self.query(
            "SELECT name, setting FROM pg_settings WHERE name IN "
            "('max_connections', 'shared_buffers', 'synchronous_commit', 'fsync')",
            dbname="postgres",
        )
        return dict(rows or [])

    def stats(self) -> dict[str, Any]:
        rows = self.query(
            "SELECT xact_commit, xact_rollback, deadlocks, conflicts FROM pg_stat_database"
            " WHERE datname = %s",
            (self.name,),
            dbname="postgres",
        )
        if not rows:
            return {}
        return dict(
            zip(("xact_commit", "xact_rollback", "deadlocks", "conflicts"), rows[0], strict=True)
        )


# --- the application: manage.py and gunicorn ------------------------------------------------


def app_env(database_url: str, ranks_redis: str = "") -> dict[str, str]:
    """Production settings (DEBUG off) against the benchmark database, no broker; Redis for
    leaderboard ranks only (REDIS_URL would also move caches and rate limits there), under a
    prefix of this database's; boards may take a million participants."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"CELERY_BROKER_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        DEBUG="false",
        SECRET_KEY=f"bench-{secrets.token_urlsafe(32)}",
        ALLOWED_HOSTS=HOST,
        SECURE_SSL_REDIRECT="false",
        LOG_LEVEL="WARNING",
        DATABASE_URL=database_url,
        PYTHONUNBUFFERED="1",
        LEADERBOARD_RANKS_REDIS_URL=ranks_redis,
        LEADERBOARD_RANKS_PREFIX=f"bench-{secrets.token_hex(4)}:",
        LEADERBOARD_MAX_PARTICIPANTS="1000000",
    )
    return env


def manage(env: dict[str, str], *command: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *command],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if result.returncode != 0:
        raise BenchError(f"manage.py {' '.join(command)} failed:\n{result.stderr[-3000:]}")
    return result.stdout


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """Linux: deliver SIGTERM to gunicorn if this process dies without cleaning up."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Server:
    """gunicorn in its own session (Ctrl-C in the terminal reaches only the benchmark)."""

    def __init__(
        self,
        env: dict[str, str],
        args: argparse.Namespace,
        log_path: Path,
        app: str = "gamify.wsgi",
        pythonpath: Path | None = None,
    ) -> None:
        self.env = env
        self.port = free_port()
        self.log_path = log_path
        self.command = [
            str(BIN / "gunicorn"),
            # Production's settings, including a control socket of this instance's own.
            "--config=python:gamify.gunicorn_conf",
            *([f"--pythonpath={pythonpath}"] if pythonpath else []),
            app,
            f"--bind={HOST}:{self.port}",
            f"--worker-class={args.worker_class}",
            f"--workers={args.workers}",
            f"--threads={args.threads}",
            "--keep-alive=5",
            "--timeout=30",
            "--graceful-timeout=10",
            "--worker-tmp-dir=/dev/shm",
            "--log-level=warning",
            *(["--reuse-port"] if args.reuse_port else []),
        ]
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command,
                cwd=REPO,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )

    def wait_healthy(self, timeout: float = 60.0) -> None:
        self.wait_healthy_at("/healthz", timeout)

    def wait_healthy_at(self, path: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise BenchError(f"gunicorn exited during start-up:\n{self.log_tail()}")
            try:
                status, _ = http_json(HOST, self.port, "GET", path, timeout=2)
                if status == 200:
                    return
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.2)
        raise BenchError(f"{path} did not answer 200 within {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()  # graceful: workers finish their requests
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # its own process group: only gunicorn
            process.wait(timeout=5)

    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def log_problems(self, limit: int = 30) -> dict[str, Any]:
        """Lines of the server log that suggest trouble (the log level is WARNING)."""
        pattern = re.compile(r"Traceback|ERROR|CRITICAL|WORKER TIMEOUT|deadlock|Exception", re.I)
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return {"lines": 0, "matches": 0, "first": []}
        matches = [line for line in text.splitlines() if pattern.search(line)]
        return {"lines": text.count("\n"), "matches": len(matches), "first": matches[:limit]}


def http_json(
    host: str,
    port: int,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        payload = None if body is None else json.dumps(body).encode()
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, path, body=payload, headers=all_headers)
        response = conn.getresponse()
        data = response.read()
        try:
            return response.status, json.loads(data) if data else None
        except ValueError:
            return response.status, data[:500].decode(errors="replace")
    finally:
        conn.close()


class Context:
    """What a case may use; see bench/cases.py."""

    def __init__(
        self,
        args: argparse.Namespace,
        server: Server,
        db: Database,
        key: str,
        ceiling: Server | None = None,
    ) -> None:
        self.args = args
        self.server = server
        self.ceiling = ceiling
        self.db = db
        self.api_key = key
        self.metrics: set[str] = set()

    def manage(self, *command: str) -> str:
        """A manage.py command with the server's settings."""
        return manage(self.server.env, *command)

    @property
    def headers(self) -> dict[str, str]:
        return {"Content-Type": "application/json", "X-API-KEY": self.api_key}

    def api(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return http_json(HOST, self.server.port, method, path, body, {"X-API-KEY": self.api_key})

    def ensure_metric(self, key: str, name: str) -> None:
        if key in self.metrics:
            return
        status, body = self.api("POST", "/admin/v1/metrics", [{"name": name, "key": key}])
        if status != 201 or body.get("issues"):
            raise BenchError(f"creating metric {key!r} failed: HTTP {status} {body}")
        self.metrics.add(key)

    def db_query(self, statement: str, params: tuple[Any, ...] = ()) -> Any:
        return self.db.query(statement, params)

    def db_execute(self, statement: str, params: tuple[Any, ...] = ()) -> None:
        """A write to the benchmark database (the ceiling's seeding); raises on failure."""
        with self.db.connect(self.db.name) as conn:
            conn.execute(statement, params)

    def server_for(self, case: Case) -> Server:
        if getattr(case, "target", "gamify") == "ceiling":
            if self.ceiling is None:
                raise BenchError(f"case {case.name} needs the ceiling: run with --compare")
            return self.ceiling
        return self.server


# --- CPU accounting (Linux /proc; best effort) ------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()  # fields from "state" on


def _cpu_seconds(pid: int) -> float:
    fields = _proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / _TICK if fields else 0.0


def _children(ppid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _proc_stat(int(entry.name))
            if fields and int(fields[1]) == ppid:
                found.append(int(entry.name))
    return found


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def _established_inodes(port: int) -> set[str]:
    """Inodes of the server side of established TCP connections on `port`."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def connections_per_worker(server: Server) -> list[int]:
    """How many client connections each gunicorn worker holds (keep-alive pins them)."""
    pid = server.pid()
    if not pid:
        return []
    established = _established_inodes(server.port)
    return sorted(
        (len(_socket_inodes(worker) & established) for worker in _children(pid)), reverse=True
    )


def _system_ticks() -> tuple[int, int]:
    """(busy, total) jiffies over all CPUs."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    total = sum(values[:8])
    return total - idle, total


class CpuSampler:
    def __init__(self, server: Server, db: Database) -> None:
        self.server = server
        self.db = db
        self.start: dict[str, Any] = {}
        self.connections: list[int] = []
        self.result: dict[str, Any] = {}

    def _sample(self) -> dict[str, Any]:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        pid = self.server.pid()
        server_pids = [pid, *_children(pid)] if pid else []
        rows = self.db.query(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.db.name,), "postgres"
        )
        return {
            "time": time.perf_counter(),
            "client": usage.ru_utime + usage.ru_stime,
            "server": {p: _cpu_seconds(p) for p in server_pids},
            "postgres": {r[0]: _cpu_seconds(r[0]) for r in rows or []},
            "system": _system_ticks(),
            "statements": statement_total(pid) if pid else None,
        }

    def begin(self) -> None:
        self.start = self._sample()
        self.connections = connections_per_worker(self.server)

    def end(self) -> None:
        a, b = self.start, self._sample()
        wall = b["time"] - a["time"]

        def group(name: str) -> float:
            return sum(cpu - a[name].get(p, 0.0) for p, cpu in b[name].items())

        busy = b["system"][0] - a["system"][0]
        total = b["system"][1] - a["system"][1]
        cores = os.cpu_count() or 1
        gunicorn, postgres = group("server") / wall, group("postgres") / wall
        client = (b["client"] - a["client"]) / wall
        machine = busy / total * cores if total else None
        self.result = {
            "wall_s": round(wall, 2),
            "machine_busy_cores": None if machine is None else round(machine, 2),
            "gunicorn_cores": round(gunicorn, 2),
            "postgres_backends_cores": round(postgres, 2),
            "load_generator_cores": round(client, 2),
            # Everything else: PostgreSQL's own background processes, the kernel, and any other
            # program on the machine. Much above ~0.1 means the figures are disturbed.
            "other_cores": None
            if machine is None
            else round(max(0.0, machine - gunicorn - postgres - client), 2),
            "connections_per_worker": self.connections,
            "statements": None
            if a["statements"] is None or b["statements"] is None
            else b["statements"] - a["statements"],
            "gunicorn_processes": len(b["server"]),
            "postgres_backends": len(b["postgres"]),
        }


# --- running a case -------------------------------------------------------------------------


def _median(values: list[float | None]) -> float | None:
    known = sorted(v for v in values if v is not None)
    return known[len(known) // 2] if known else None


def run_case(case: Case, ctx: Context) -> dict[str, Any]:
    args = ctx.args
    server = ctx.server_for(case)
    sampler = CpuSampler(server, ctx.db)
    print(f"\n== case {case.name}: {case.summary}")
    case.setup(ctx)
    workers = [case.worker(i) for i in range(args.concurrency)]
    print(
        f"   warm-up {args.warmup:g} s, then {args.repeat} x {args.duration:g} s measured, "
        f"concurrency {args.concurrency} ..."
    )
    repeats: list[dict[str, Any]] = []
    for index in range(args.repeat):
        load = run_load(
            Target(HOST, server.port, ctx.headers, args.timeout),
            workers,
            case.expected_status,
            Phase(warmup=args.warmup if index == 0 else 0.0, duration=args.duration),
            on_measure_start=sampler.begin,
            on_measure_end=sampler.end,
        )
        if load.interrupted:
            raise KeyboardInterrupt
        repeats.append(load.summary())
    summary = dict(repeats[-1])
    summary["all_error_rate"] = max(r["all_error_rate"] for r in repeats)
    median = {
        "ok_per_second": _median([r["ok_per_second"] for r in repeats]),
        "p50_ms": _median([r["latency_ms"]["p50"] for r in repeats]),
        "p99_ms": _median([r["latency_ms"]["p99"] for r in repeats]),
        "runs": len(repeats),
    }
    cpu = dict(sampler.result)
    if cpu and summary["ok_per_second"]:
        # CPU time per successful request, the figure that does not depend on contention.
        per = 1000.0 / summary["ok_per_second"]
        cpu["gunicorn_cpu_ms_per_ok"] = round(cpu["gunicorn_cores"] * per, 2)
        cpu["postgres_cpu_ms_per_ok"] = round(cpu["postgres_backends_cores"] * per, 2)
        if cpu.get("statements") is not None:
            # Statements sent in the window per request answered in it (--scale's server).
            cpu["statements_per_ok"] = round(
                cpu["statements"] / (summary["ok_per_second"] * cpu["wall_s"]), 2
            )
    median["per_core"] = _per_core(cpu)
    checks = case.verify(ctx, workers)
    return {
        "case": case.name,
        "summary": case.summary,
        "case_settings": case.settings(),
        "case_stats": case.stats(workers),
        "load": summary,
        "median": median,
        "cpu": cpu,
        "checks": [c.as_dict() for c in checks],
        "_case": case,
        "_workers": workers,
    }


# The open loop's workers start at this index, so their streams differ from the closed loop's
# (and are the same for gamify and its ceiling, which seed their workers alike).
OPEN_LOOP_FIRST_WORKER = 1000
# Issue 25: at half the full pipeline's saturated rate, its p99 <= 30 ms.
OPEN_LOOP_P99_TARGET_MS = 30.0


def run_open_phase(result: dict[str, Any], ctx: Context, rate: float) -> None:
    """The case of `result` again, in an open loop at `rate` requests a second: a warm-up and
    --repeat measured phases, with new workers (their events are checked with the case's
    others: `result['_workers']` grows, and the API checks run again over all of them)."""
    args = ctx.args
    case, workers = result["_case"], result["_workers"]
    server = ctx.server_for(case)
    sampler = CpuSampler(server, ctx.db)
    extra = [case.worker(OPEN_LOOP_FIRST_WORKER + i) for i in range(args.open_loop_connections)]
    print(
        f"\n== open loop: {case.name} at {rate:.1f}/s, {args.open_loop_connections} connections;"
        f" warm-up {args.warmup:g} s, then {args.repeat} x {args.duration:g} s measured ..."
    )
    repeats: list[dict[str, Any]] = []
    for index in range(args.repeat):
        load = run_load(
            Target(HOST, server.port, ctx.headers, args.timeout),
            extra,
            case.expected_status,
            Phase(warmup=args.warmup if index == 0 else 0.0, duration=args.duration),
            on_measure_start=sampler.begin,
            on_measure_end=sampler.end,
            rate=rate,
        )
        if load.interrupted:
            raise KeyboardInterrupt
        repeats.append(load.summary())
    summary = dict(repeats[-1])
    summary["all_error_rate"] = max(r["all_error_rate"] for r in repeats)
    cpu = dict(sampler.result)
    if cpu and summary["ok_per_second"]:
        per = 1000.0 / summary["ok_per_second"]
        cpu["gunicorn_cpu_ms_per_ok"] = round(cpu["gunicorn_cores"] * per, 2)
        cpu["postgres_cpu_ms_per_ok"] = round(cpu["postgres_backends_cores"] * per, 2)
    workers.extend(extra)
    result["open_loop"] = {
        "rate": round(rate, 2),
        "connections": args.open_loop_connections,
        "load": summary,
        "median": {
            "ok_per_second": _median([r["ok_per_second"] for r in repeats]),
            "p50_ms": _median([r["latency_ms"]["p50"] for r in repeats]),
            "p99_ms": _median([r["latency_ms"]["p99"] for r in repeats]),
            "max_ms": _median([r["latency_ms"]["max"] for r in repeats]),
            "late": _median([r["open_loop"]["late"] for r in repeats]),
            "errors": sum(r["errors"] for r in repeats),
            "runs": len(repeats),
        },
        "cpu": cpu,
    }
    result["checks"] = [c.as_dict() for c in case.verify(ctx, workers)]
    result["case_stats"] = case.stats(workers)


def run_open_loops(results: list[dict[str, Any]], ctx: Context) -> None:
    """--compare: the full pipeline in an open loop at --open-loop-fraction of its closed-loop
    rate in this run, and its same-work ceiling at the same rate (the generator's own share of
    the latency is at most the ceiling's)."""
    by_name = {r["case"]: r for r in results}
    full = by_name.get("events-full")
    fraction = ctx.args.open_loop_fraction
    if full is None or not fraction or not full["median"]["ok_per_second"]:
        return
    rate = fraction * full["median"]["ok_per_second"]
    for name in ("ceiling-event-full", "events-full"):
        if name in by_name:
            run_open_phase(by_name[name], ctx, rate)


def _per_core(cpu: dict[str, Any]) -> float | None:
    """Requests a second per core of CPU (gunicorn and PostgreSQL backends together): the
    throughput two cores would give this case if nothing else ran (last measured phase)."""
    spent = (cpu.get("gunicorn_cpu_ms_per_ok") or 0) + (cpu.get("postgres_cpu_ms_per_ok") or 0)
    return round(1000.0 / spent, 1) if spent else None


def print_comparison(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The side-by-side table: each gamify case with its ceiling's figures and the ratio."""
    by_name = {r["case"]: r["median"] for r in results}
    rows = []
    print("\n== side by side with the raw-SQL ceiling (medians)")
    print(
        f"   {'target':<56} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'vs ceiling':>11} "
        f"{'/s/core':>8}"
    )
    for label, case, ceiling in COMPARISON:
        mine, top = by_name.get(case), by_name.get(ceiling)
        if not mine or not top:
            continue
        ratio = (
            mine["ok_per_second"] / top["ok_per_second"]
            if mine["ok_per_second"] and top["ok_per_second"]
            else None
        )
        for name, figures, shown in ((f"ceiling for: {label}", top, None), (label, mine, ratio)):
            print(
                f"   {name:<56} {figures['ok_per_second'] or 0:>8.1f} "
                f"{_ms(figures['p50_ms']):>8} {_ms(figures['p99_ms']):>8} "
                f"{'' if shown is None else f'{shown:.0%}':>11} {_ms(figures.get('per_core')):>8}"
            )
        rows.append({"target": label, "gamify": mine, "ceiling": top, "ratio": ratio})
    rows += print_open_loops(results)
    return rows


def print_open_loops(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The open-loop rows: the same-work ceiling and the full pipeline at the same fixed rate,
    and the full pipeline's p99 against the target."""
    by_name = {r["case"]: r for r in results}
    full, top = by_name.get("events-full", {}), by_name.get("ceiling-event-full", {})
    if "open_loop" not in full:
        return []
    mine, rate = full["open_loop"]["median"], full["open_loop"]["rate"]
    saturated = full["median"]["ok_per_second"] or 0.0
    label = f"event, full pipeline, open loop at {rate:.1f}/s"
    met = mine["p99_ms"] is not None and mine["p99_ms"] <= OPEN_LOOP_P99_TARGET_MS
    verdict = f"p99<={OPEN_LOOP_P99_TARGET_MS:g}: {'met' if met else 'MISSED'}"
    shown = []
    if "open_loop" in top:
        shown.append(
            ("ceiling for: the same, same-work ceiling, same rate", top["open_loop"]["median"], "")
        )
    shown.append((label, mine, verdict))
    for name, figures, note in shown:
        print(
            f"   {name:<56} {figures['ok_per_second'] or 0:>8.1f} "
            f"{_ms(figures['p50_ms']):>8} {_ms(figures['p99_ms']):>8} {note:>11}"
            f"  (max {_ms(figures['max_ms'])} ms, late {figures['late']}, "
            f"errors {figures['errors']})"
        )
    print(
        f"   (open loop: {rate:.1f}/s is {rate / saturated:.0%} of the full pipeline's "
        f"closed-loop {saturated:.1f}/s above; latency from when each event was due)"
    )
    return [
        {
            "target": label,
            "gamify": mine,
            "ceiling": top.get("open_loop", {}).get("median"),
            "p99_target_ms": OPEN_LOOP_P99_TARGET_MS,
            "met": met,
        }
    ]


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def print_report(result: dict[str, Any], meta: dict[str, Any]) -> None:
    load, lat, cpu = result["load"], result["load"]["latency_ms"], result["cpu"]
    server = meta["server"]
    print(f"\n== result: {result['case']} ({result['summary']})")
    print(
        f"   server     gunicorn {server['worker_class']}, {server['workers']} workers x "
        f"{server['threads']} threads, DEBUG=false, PostgreSQL {meta['postgres']['version']}"
    )
    print(
        f"   load       concurrency {meta['load']['concurrency']} (keep-alive, closed loop), "
        f"{meta['load']['users']:,} users, warm-up {meta['load']['warmup_s']:g} s, "
        f"measured {meta['load']['duration_s']:g} s"
    )
    print(
        f"   throughput {load['ok_per_second']:.1f} {result['case']}/s "
        f"({load['ok']:,} answered {result['load_expected']}; 1-s buckets "
        f"min {load['ok_per_second_min_1s']} max {load['ok_per_second_max_1s']})"
    )
    print(
        f"   latency ms p50 {_ms(lat['p50'])}  p95 {_ms(lat['p95'])}  p99 {_ms(lat['p99'])}  "
        f"max {_ms(lat['max'])}  (mean {_ms(lat['mean'])})"
    )
    print(
        f"   errors     {load['errors']} of {load['requests']:,} measured "
        f"({load['error_rate']:.2%}); with warm-up {load['all_errors']} of "
        f"{load['all_requests']:,} ({load['all_error_rate']:.2%})"
    )
    if load["failures"]:
        print(f"              by kind: {load['failures']}")
        for body in load["error_bodies"]:
            print(f"              e.g. {body}")
    if cpu:
        print(
            f"   cpu cores  machine {cpu['machine_busy_cores']} of {os.cpu_count()} busy; "
            f"gunicorn {cpu['gunicorn_cores']}, postgres backends "
            f"{cpu['postgres_backends_cores']}, load generator {cpu['load_generator_cores']}, "
            f"other {cpu['other_cores']}"
        )
        print(f"   conns      per gunicorn worker {cpu['connections_per_worker']}")
        if "gunicorn_cpu_ms_per_ok" in cpu:
            print(
                f"   cpu ms/op  gunicorn {cpu['gunicorn_cpu_ms_per_ok']}, "
                f"postgres backends {cpu['postgres_cpu_ms_per_ok']}"
            )
        if (cpu["other_cores"] or 0) > 0.25:
            print(
                "   WARNING    other processes used "
                f"{cpu['other_cores']} cores during the run: the figures are disturbed"
            )
    if "open_loop" in result:
        _print_open_loop(result["open_loop"])
    if result["case_stats"]:
        print(f"   stats      {', '.join(f'{k} {v}' for k, v in result['case_stats'].items())}")
    for check in result["checks"]:
        print(
            f"   check      {'OK  ' if check['ok'] else 'FAIL'} {check['name']}: {check['detail']}"
        )


def _print_open_loop(open_loop: dict[str, Any]) -> None:
    load, lat = open_loop["load"], open_loop["load"]["latency_ms"]
    fixed, cpu = load["open_loop"], open_loop["cpu"]
    print(
        f"   open loop  {open_loop['rate']:.1f}/s offered, {open_loop['connections']} "
        f"connections (last phase): {load['ok_per_second']:.1f}/s answered; latency from when "
        f"due ms p50 {_ms(lat['p50'])}  p99 {_ms(lat['p99'])}  max {_ms(lat['max'])}"
    )
    print(
        f"              sent {fixed['sent']} of {fixed['slots_due']} due, late (> "
        f"{fixed['late_threshold_ms']:g} ms) {fixed['late']}, send delay ms p50 "
        f"{_ms(fixed['send_delay_ms']['p50'])} p99 {_ms(fixed['send_delay_ms']['p99'])} max "
        f"{_ms(fixed['send_delay_ms']['max'])}; errors {load['errors']}"
    )
    if cpu:
        print(
            f"              cpu cores gunicorn {cpu['gunicorn_cores']}, postgres backends "
            f"{cpu['postgres_backends_cores']}, load generator {cpu['load_generator_cores']}, "
            f"other {cpu['other_cores']}"
            + (
                f"; cpu ms/op {cpu['gunicorn_cpu_ms_per_ok']} + {cpu['postgres_cpu_ms_per_ok']}"
                if "gunicorn_cpu_ms_per_ok" in cpu
                else ""
            )
        )
    median = open_loop["median"]
    if median["runs"] > 1:
        print(
            f"              medians of {median['runs']}: p50 {_ms(median['p50_ms'])} p99 "
            f"{_ms(median['p99_ms'])} max {_ms(median['max_ms'])}"
        )


def _show(path: Path) -> str:
    """A path relative to the repository when it is inside it."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def git_revision() -> str:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "apps", "gamify"],
            cwd=REPO,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return f"{rev}{'-dirty' if dirty else ''}" if rev else "unknown"
    except OSError:
        return "unknown"


def gunicorn_version() -> str:
    try:
        out = subprocess.run(
            [str(BIN / "gunicorn"), "--version"], capture_output=True, text=True, timeout=30
        )
        return out.stdout.strip().split()[-1].rstrip(")")
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


# --- main -----------------------------------------------------------------------------------


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    started = dt.datetime.now(dt.UTC)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    command = " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv])
    load_before = _loadavg()
    db = Database(args)
    args.results_dir.mkdir(parents=True, exist_ok=True)
    log_path = args.results_dir / f"server-{stamp}.log"
    server: Server | None = None
    master_pid: int | None = None
    ceiling: Server | None = None
    env: dict[str, str] | None = None
    exit_code = 2
    try:
        print(f"gamify bench {stamp}: database {db.name}, migrating ...")
        db.recreate()
        env = app_env(db.url, args.ranks_redis)
        manage(env, "migrate", "--noinput")
        org = json.loads(manage(env, "create_organization", "Bench", "--json").splitlines()[-1])
        server = (
            Server(env, args, log_path, app="counting_wsgi", pythonpath=REPO / "bench")
            if args.scale or args.leagues or args.quests or args.anomalies
            else Server(env, args, log_path)
        )
        server.start()
        master_pid = server.pid()
        if args.compare:
            with db.connect(db.name) as conn:
                conn.execute((REPO / "bench" / "ceiling" / "schema.sql").read_text())
            ceiling = Server(
                {**env, "DJANGO_SETTINGS_MODULE": "ceiling.settings"},
                args,
                args.results_dir / f"ceiling-{stamp}.log",
                app="ceiling.wsgi",
                pythonpath=REPO / "bench",
            )
            ceiling.start()
            ceiling.wait_healthy_at("/leaderboard/none?limit=1")
            print(f"ceiling up at {ceiling.base_url}")
        server.wait_healthy()
        print(f"gunicorn up at {server.base_url} (log {_show(log_path)})")
        ctx = Context(args, server, db, org["apiKey"], ceiling)
        results = [run_case(CASES[name](args), ctx) for name in args.case]
        if args.compare:
            run_open_loops(results, ctx)

        if ceiling is not None:
            ceiling.stop()
        server.stop()  # all commits done and PostgreSQL statistics flushed
        for result in results:
            case, workers = result.pop("_case"), result.pop("_workers")
            result["checks"] += [c.as_dict() for c in case.verify_database(ctx, workers)]
            result["load_expected"] = case.expected_status
        meta = {
            "date": started.isoformat(timespec="seconds"),
            "command": command,
            "git": git_revision(),
            "machine": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "platform": platform.platform(),
                "loadavg_before": load_before,
            },
            "server": {
                "command": " ".join(server.command[1:]),
                "gunicorn": gunicorn_version(),
                "worker_class": args.worker_class,
                "workers": args.workers,
                "threads": args.threads,
                "reuse_port": args.reuse_port,
                "env": "DEBUG=false ALLOWED_HOSTS=127.0.0.1 SECURE_SSL_REDIRECT=false "
                "LOG_LEVEL=WARNING LEADERBOARD_MAX_PARTICIPANTS=1000000, no "
                "CELERY_BROKER_URL/REDIS_URL (tasks inline), LEADERBOARD_RANKS_REDIS_URL="
                + (args.ranks_redis or "(none: PostgreSQL counts)"),
            },
            "postgres": {
                "version": db.version(),
                "database": db.name,
                "settings": db.settings(),
                "stats": db.stats(),
            },
            "load": {
                "generator": "Python threads + http.client, one keep-alive connection each",
                "concurrency": args.concurrency,
                "users": args.users,
                "warmup_s": args.warmup,
                "duration_s": args.duration,
                "timeout_s": args.timeout,
                "seed": args.seed,
            },
            "server_log": {"path": str(_show(log_path)), **server.log_problems()},
        }
        failed = False
        for result in results:
            print_report(result, meta)
            load = result["load"]
            too_many = load["all_error_rate"] > args.max_error_rate
            if "open_loop" in result:
                too_many |= result["open_loop"]["load"]["all_error_rate"] > args.max_error_rate
            failed |= too_many or not all(c["ok"] for c in result["checks"])
            out = args.results_dir / f"{result['case']}-{stamp}.json"
            out.write_text(json.dumps({**meta, **result}, indent=2, default=str) + "\n")
            print(f"   written    {_show(out)}")
        if args.compare:
            table = print_comparison(results)
            out = args.results_dir / f"side-by-side-{stamp}.json"
            out.write_text(json.dumps({**meta, "table": table}, indent=2, default=str) + "\n")
            print(f"   written    {_show(out)}")
        if args.scale:
            table = print_scale(results)
            out = args.results_dir / f"scale-{stamp}.json"
            out.write_text(json.dumps({**meta, "table": table}, indent=2, default=str) + "\n")
            print(f"   written    {_show(out)}")
        if args.leagues:
            table = print_leagues(results)
            out = args.results_dir / f"leagues-{stamp}.json"
            out.write_text(json.dumps({**meta, "table": table}, indent=2, default=str) + "\n")
            print(f"   written    {_show(out)}")
        if args.quests:
            table = print_quests(results)
            out = args.results_dir / f"quests-{stamp}.json"
            out.write_text(json.dumps({**meta, "table": table}, indent=2, default=str) + "\n")
            print(f"   written    {_show(out)}")
        if args.anomalies:
            table = print_anomalies(results)
            out = args.results_dir / f"anomalies-{stamp}.json"
            out.write_text(json.dumps({**meta, "table": table}, indent=2, default=str) + "\n")
            print(f"   written    {_show(out)}")
        if args.million:
            table = print_million(results)
            out = args.results_dir / f"million-{stamp}.json"
            out.write_text(json.dumps({**meta, "table": table}, indent=2, default=str) + "\n")
            print(f"   written    {_show(out)}")
        stats, problems = meta["postgres"]["stats"], meta["server_log"]
        print(
            f"\npostgres: {stats.get('deadlocks', '?')} deadlocks, "
            f"{stats.get('xact_rollback', '?')} rollbacks; server log: "
            f"{problems['matches']} suspicious lines"
        )
        for line in problems["first"][:10]:
            print(f"   {line}")
        exit_code = 1 if failed else 0
        if failed:
            print(f"\nFAILED: errors above {args.max_error_rate:.1%} or a failed check")
    except KeyboardInterrupt:
        print("\ninterrupted: stopping gunicorn and cleaning up", file=sys.stderr)
        exit_code = 130
    except BenchError as exc:
        print(f"\nbench failed: {exc}", file=sys.stderr)
        exit_code = 2
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the clean-up finish
        for running in (server, ceiling):
            if running is not None:
                running.stop()
        if master_pid is not None:
            counter_remove(master_pid)
        if args.keep_db:
            print(f"database kept: {db.url}")
        else:
            db.drop()
            if env is not None:
                forget_ranks(env)
    return exit_code


def forget_ranks(env: dict[str, str]) -> None:
    """Remove this run's rank sets from Redis (a million participants are ~300 MB)."""
    if not env.get("LEADERBOARD_RANKS_REDIS_URL"):
        return
    import redis

    try:
        client = redis.Redis.from_url(env["LEADERBOARD_RANKS_REDIS_URL"], socket_timeout=5)
        doomed = list(client.scan_iter(match=env["LEADERBOARD_RANKS_PREFIX"] + "*", count=1000))
        for start in range(0, len(doomed), 500):
            client.delete(*doomed[start : start + 500])
    except redis.RedisError as exc:
        print(f"could not remove the run's rank sets from Redis: {exc}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
