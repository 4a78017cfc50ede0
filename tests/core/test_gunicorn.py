"""gamify's gunicorn configuration, against a real gunicorn: a body over the limit closes the
connection, two instances on one host do not share a control socket, forwarded scheme headers
are believed only with TRUST_PROXY_HEADERS, and a chunked body is read."""

import http.client
import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.core.gunicorn_server import gunicorn, organization_create


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


@pytest.mark.parametrize(
    ("header", "value"),
    [("X-Forwarded-Proto", "https"), ("X-Forwarded-Ssl", "on"), ("X-Forwarded-Protocol", "ssl")],
)
def test_without_trust_proxy_headers_gunicorn_believes_no_scheme_header(
    start, header: str, value: str
) -> None:
    """Django ignores X-Forwarded-Proto then; gunicorn must too, even from loopback, or a client
    on the host (or a proxy that passes the header on) skips the HTTPS redirect."""
    url, _ = start(SECURE_SSL_REDIRECT="true", TRUST_PROXY_HEADERS="false")
    claimed = httpx.get(url + "/v1/users/u1", headers={header: value})
    assert claimed.status_code == 301
    assert claimed.headers["Location"].startswith("https://")


def test_with_trust_proxy_headers_the_proxys_scheme_is_believed(start) -> None:
    url, _ = start(SECURE_SSL_REDIRECT="true", TRUST_PROXY_HEADERS="true")
    assert httpx.get(url + "/v1/users/u1").status_code == 301
    behind_tls = httpx.get(url + "/v1/users/u1", headers={"X-Forwarded-Proto": "https"})
    assert behind_tls.status_code == 401  # served: no API key


def test_a_chunked_event_is_read_whole(tmp_path: Path, start) -> None:
    """A body sent with Transfer-Encoding: chunked (no Content-Length) was read as empty, and a
    valid event answered 422."""
    key = organization_create(tmp_path)
    url, _ = start(MAX_REQUEST_BYTES="1000")
    created = httpx.post(
        url + "/admin/v1/metrics",
        json=[{"name": "Words", "key": "words"}],
        headers={"X-API-KEY": key},
    )
    assert created.status_code == 201, created.text

    def chunked(body: bytes) -> tuple[int, dict]:
        connection = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]), timeout=10)
        connection.request(
            "POST",
            "/v1/metrics/words/event",
            body=iter([body[:10], body[10:]]),  # no length known: http.client sends chunks
            headers={"Content-Type": "application/json", "X-API-KEY": key},
        )
        response = connection.getresponse()
        answer = json.loads(response.read())
        connection.close()
        # Closed after the answer: gunicorn would otherwise read what is left of an oversized
        # chunked body, however long, before the next request on the connection.
        assert response.getheader("Connection") == "close"
        return response.status, answer

    status, answer = chunked(json.dumps({"user": {"id": "u1"}, "value": 3}).encode())
    assert status == 201, answer
    assert answer["total"] == 3
    # The limit holds for chunked bodies too.
    status, answer = chunked(
        json.dumps({"user": {"id": "u2"}, "value": 3, "x": "y" * 2000}).encode()
    )
    assert status == 413, answer
