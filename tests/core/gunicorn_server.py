"""A real gunicorn on 127.0.0.1 with gamify's configuration, for the tests of what only the
server in front of Django shows (connections, request bodies, a hung broker)."""

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(directory: Path, **env: str) -> dict[str, str]:
    """A production-like environment on a SQLite file in `directory`."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "gamify.settings",  # not the suite's (inline tasks, no Redis)
        "DEBUG": "false",
        "SECRET_KEY": "gunicorn-test",
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"sqlite:///{directory}/db.sqlite3",
        "XDG_RUNTIME_DIR": str(directory),
        "LOG_LEVEL": "WARNING",
        **env,
    }


def manage(directory: Path, *args: str, **env: str) -> str:
    """Run a management command on that database; its standard output."""
    done = subprocess.run(
        [str(BIN / "python"), "manage.py", *args],
        cwd=REPO,
        env=environment(directory, **env),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def organization_create(directory: Path) -> str:
    """A migrated database with one organization; its admin key."""
    manage(directory, "migrate", "--verbosity=0")
    return str(json.loads(manage(directory, "create_organization", "Acme", "--json"))["apiKey"])


def gunicorn_start(env: dict[str, str], *options: str) -> tuple[str, subprocess.Popen]:
    """gunicorn with gamify's configuration on a free port of 127.0.0.1, in environment `env`:
    its base URL and process, once it answers."""
    port = free_port()
    process = subprocess.Popen(
        [
            str(BIN / "gunicorn"),
            "-c",
            "python:gamify.gunicorn_conf",
            "gamify.wsgi",
            f"--bind=127.0.0.1:{port}",
            *options,
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            httpx.get(url + "/nowhere", timeout=1)  # any answer will do (/healthz may wait)
            return url, process
        except httpx.TransportError:
            assert process.poll() is None, "gunicorn exited during start-up"
            time.sleep(0.1)
    process.kill()
    raise AssertionError("gunicorn did not answer within 20 s")


@contextmanager
def gunicorn(directory: Path, *options: str, **env: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """gunicorn with one worker of two threads; its base URL and process, once it answers."""
    url, process = gunicorn_start(
        environment(directory, **env),
        "--workers=1",
        "--worker-class=gthread",
        "--threads=2",
        *options,
    )
    try:
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a worker stuck in a request outlives a graceful stop
            process.kill()
            process.wait(timeout=10)
