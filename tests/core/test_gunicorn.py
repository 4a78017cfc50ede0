"""gamify's gunicorn configuration, against a real gunicorn: a body over the limit closes the
connection, and two instances on one host do not share a control socket."""

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.core.gunicorn_server import gunicorn


@pytest.fixture
def start(tmp_path: Path) -> Iterator:
    with ExitStack() as stack:

        def started(**env: str):
            return stack.enter_context(gunicorn(tmp_path, **env))

        yield started


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
