"""The topology of .ci/topology as the tests see it: its servers' URLs (from the environment the
script exports), the service run against them in production settings (management commands and
gunicorn, in processes of their own, on the topology's real databases, never Django's test
databases) and direct connections to each server."""

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.core.gunicorn_server import gunicorn_start

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

ON = os.environ.get("TOPOLOGY") == "1"
needs_topology = pytest.mark.skipif(
    not ON, reason="runs inside .ci/topology (TOPOLOGY=1), against the servers it starts"
)


def url(name: str) -> str:
    return os.environ[name]


def primary_url() -> str:  # directly, not through pgbouncer
    return url("TOPOLOGY_PRIMARY_URL")


def replica_url() -> str:
    return url("TOPOLOGY_REPLICA_URL")


def cell2_url() -> str:
    return url("TOPOLOGY_CELL2_URL")


def pooled_url() -> str:  # the application's DATABASE_URL: pgbouncer, transaction mode
    return url("DATABASE_URL")


def connect(database_url: str, **options: Any) -> psycopg.Connection:
    # prepare_threshold=None: no named prepared statement, which pgbouncer 1.18 cannot keep.
    return psycopg.connect(database_url, autocommit=True, prepare_threshold=None, **options)


def value(database_url: str, sql: str, *params: Any) -> Any:
    with connect(database_url) as conn:
        row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def wait_until(what: str, check: Any, timeout: float = 15) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def has(module: str) -> bool:
    """Whether this checkout has the module (a feature of issue 32 merged or not yet)."""
    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def absent(feature: str) -> str:
    # .ci/topology accepts a topology test skipped for this reason only.
    return f"{feature}: not in this checkout"


# The service in production settings, on the topology's databases (DATABASE_URL through
# pgbouncer, CELL_DATABASE_URLS, DATABASE_REPLICA_URLS, LEADERBOARD_RANKS_REDIS_URL as the
# script exported them), with a rank prefix of this run's own.
RUN_ID = uuid.uuid4().hex[:8]


def environment(**env: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "gamify.settings",
        "DEBUG": "false",
        "SECRET_KEY": "topology-test",
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CELERY_BROKER_URL": "",
        "LOG_LEVEL": "WARNING",
        "LEADERBOARD_RANKS_PREFIX": f"gamify-topology-{RUN_ID}:",
        "STREAMS_PREFIX": f"gamify-topology-{RUN_ID}:",
        **env,
    }


def manage(*args: str, timeout: float = 300, **env: str) -> str:
    """A management command against the topology; its standard output (fails with its output)."""
    done = subprocess.run(
        [str(BIN / "python"), "manage.py", *args],
        cwd=REPO,
        env=environment(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)}: {done.stdout}\n{done.stderr}"
    return done.stdout


@contextmanager
def gunicorn(workers: int = 2, threads: int = 4, **env: str) -> Iterator[str]:
    """gunicorn on the topology; its base URL."""
    base, process = gunicorn_start(
        environment(**env),
        f"--workers={workers}",
        "--worker-class=gthread",
        f"--threads={threads}",
    )
    try:
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def admin(http: httpx.Client, method: str, path: str, body: Any = None) -> Any:
    response = http.request(method, "/admin/v1" + path, json=body)
    assert response.status_code in (200, 201), response.text
    data = response.json()
    if isinstance(data, dict) and "issues" in data:
        assert data["issues"] == [], data
        return data["created"][0] if data.get("created") else data
    return data


@dataclass
class Load:
    """Events sent without pause by a few threads, each with an Idempotency-Key and retried
    with the same key until it is accepted: whatever a refusal or a broken connection did, each
    event counts once, so the totals afterwards are known exactly."""

    base: str
    key: str
    users: list[str]
    threads: int = 4
    accepted: dict[str, int] = field(default_factory=dict)  # user -> events accepted
    refusals: dict[int, int] = field(default_factory=dict)  # status (0: transport) -> count
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _workers: list[threading.Thread] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def _run(self, index: int) -> None:
        with httpx.Client(base_url=self.base, headers={"X-API-KEY": self.key}, timeout=30) as http:
            sent = 0
            while not self._stop.is_set():
                user = self.users[(index + sent * self.threads) % len(self.users)]
                idempotency = f"load-{index}-{sent}"
                for _attempt in range(600):
                    try:
                        response = http.post(
                            "/v1/metrics/words/event",
                            json={"user": {"id": user}, "value": 1},
                            headers={"Idempotency-Key": idempotency},
                        )
                        status = response.status_code
                    except httpx.TransportError:
                        status = 0
                    if status in (200, 201):
                        break
                    with self._lock:
                        self.refusals[status] = self.refusals.get(status, 0) + 1
                    if status not in (0, 409, 423, 429, 503):
                        self.errors.append(f"{status}: {response.text[:300]}")
                        return
                    time.sleep(0.05)
                else:
                    self.errors.append(f"event {idempotency} never accepted")
                    return
                with self._lock:
                    self.accepted[user] = self.accepted.get(user, 0) + 1
                sent += 1

    def start(self) -> "Load":
        for index in range(self.threads):
            worker = threading.Thread(target=self._run, args=(index,), daemon=True)
            worker.start()
            self._workers.append(worker)
        return self

    def stop(self) -> None:
        self._stop.set()
        for worker in self._workers:
            worker.join(timeout=60)
        assert not any(w.is_alive() for w in self._workers), "a load thread hung"
        assert not self.errors, self.errors

    def total(self) -> int:
        return sum(self.accepted.values())


def user_total(http: httpx.Client, user: str) -> Decimal:
    response = http.get(f"/v1/users/{user}/metrics/words")
    assert response.status_code == 200, response.text
    return Decimal(str(response.json()["current"]))
