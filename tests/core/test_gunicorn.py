"""gamify's gunicorn configuration, against a real gunicorn: a body over the limit closes the
connection, and two instances on one host do not share a control socket."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).parent / "gunicorn"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def start(tmp_path: Path) -> Iterator:
    processes: list[subprocess.Popen] = []

    def started(**env: str) -> tuple[str, subprocess.Popen]:
        port = _free_port()
        environment = {
            **os.environ,
            "DEBUG": "false",
            "SECRET_KEY": "gunicorn-test",
            "SECURE_SSL_REDIRECT": "false",
            "ALLOWED_HOSTS": "127.0.0.1",
            "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
            "XDG_RUNTIME_DIR": str(tmp_path),
            **env,
        }
        process = subprocess.Popen(
            [
                str(GUNICORN),
                "-c",
                "python:gamify.gunicorn_conf",
                "gamify.wsgi",
                f"--bind=127.0.0.1:{port}",
                "--workers=1",
                "--worker-class=gthread",
                "--threads=2",
            ],
            cwd=REPO,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        processes.append(process)
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                httpx.get(url + "/healthz", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        return url, process

    yield started
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


def test_a_body_over_the_limit_is_refused_and_the_connection_closed(start) -> None:
    url, _ = start(MAX_REQUEST_BYTES="1000")
    with httpx.Client(timeout=10) as client:
        for _ in range(2):
            refused = client.post(
                url + "/v1/metrics/words/event",
                content=b"x" * 500_000,
                headers={"Content-Type": "application/json", "X-API-KEY": "a.b"},
            )
            assert refused.headers["Connection"] == "close"
            # The client's next request on this client works (on a new connection).
            assert client.get(url + "/healthz").status_code in (200, 503)
        # A body within the limit keeps the connection alive.
        within = client.post(url + "/healthz", content=b"{}")
        assert within.headers.get("Connection", "keep-alive") != "close"


def test_two_instances_have_their_own_control_sockets(start, tmp_path: Path) -> None:
    _, first = start()
    _, second = start()
    sockets = sorted(path.name for path in tmp_path.glob("gamify-gunicorn-*.ctl"))
    assert sockets == sorted(f"gamify-gunicorn-{process.pid}.ctl" for process in (first, second))
