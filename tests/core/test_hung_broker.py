"""A Redis that takes connections and never answers (stopped behind a live socket) as broker and
cache, against a real gunicorn: writes that hand work on after commit answer within seconds
with their usual status and leave the work to the outbox sweep; /healthz says 503 within
seconds."""

import socket
import sqlite3
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.core.gunicorn_server import free_port, gunicorn, organization_create

# What "within seconds" means here: the broker timeouts (2 s, one retry) and some slack for a
# loaded machine; the failure this guards against is gunicorn's 30 s timeout and its HTML 500.
FEW_SECONDS = 8.0


@pytest.fixture(scope="module")
def silent_broker() -> Iterator[str]:
    """A TCP server on 127.0.0.1 that accepts every connection and never says a word."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"redis://127.0.0.1:{server.getsockname()[1]}/0"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, silent_broker: str) -> Iterator[dict]:
    directory = tmp_path_factory.mktemp("hung-broker")
    key = organization_create(directory)
    env = {
        "CELERY_BROKER_URL": silent_broker,
        "REDIS_URL": silent_broker,  # one stopped Redis: the cache and rate limits too
        "WEBHOOK_ALLOW_HTTP": "true",
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
    }
    with gunicorn(directory, **env) as (url, _):
        yield {"url": url, "key": key, "database": directory / "db.sqlite3"}


def timed(client: httpx.Client, method: str, path: str, body: object = None) -> httpx.Response:
    started = time.monotonic()
    response = client.request(method, path, json=body)
    elapsed = time.monotonic() - started
    assert elapsed < FEW_SECONDS, f"{method} {path} took {elapsed:.1f} s"
    return response


def test_writes_that_hand_work_on_answer_at_once_and_leave_it_to_the_sweep(server) -> None:
    headers = {"X-API-KEY": server["key"]}
    with httpx.Client(base_url=server["url"], headers=headers, timeout=20) as client:
        metric = client.post("/admin/v1/metrics", json=[{"name": "Words", "key": "words"}])
        assert metric.status_code == 201, metric.text
        hook = client.post(
            "/admin/v1/webhooks", json=[{"url": f"http://127.0.0.1:{free_port()}/hook"}]
        )
        assert hook.status_code == 201, hook.text

        activated = timed(
            client,
            "POST",
            "/admin/v1/achievements",
            [
                {
                    "name": "First word",
                    "trigger": "metric",
                    "metricId": metric.json()["created"][0]["id"],
                    "metricValue": 1,
                    "status": "active",
                }
            ],
        )
        assert activated.status_code == 201, activated.text
        assert activated.json()["issues"] == []
        # The event completes the achievement, which the webhook endpoint is told about.
        event = timed(client, "POST", "/v1/metrics/words/event", {"user": {"id": "u1"}, "value": 1})
        assert event.status_code == 201, event.text
        assert [a["name"] for a in event.json()["achievements"]] == ["First word"]
        batch = timed(
            client,
            "POST",
            "/admin/v1/metrics/events",
            [{"key": "words", "user": {"id": user}, "value": 2} for user in ("u2", "u3")],
        )
        assert batch.status_code == 202, batch.text
        assert batch.json() == {"accepted": 2}

    with sqlite3.connect(server["database"]) as db:
        outbox = [task for (task,) in db.execute("SELECT DISTINCT task FROM core_outboxtask")]
        queued = db.execute("SELECT COUNT(*) FROM pipeline_queuedevent").fetchone()[0]
    # The work is recorded for the sweep to send when the broker answers (equal rows, such as
    # the two webhook events' dispatch, are one piece of work: one run claims them all).
    assert sorted(outbox) == [
        "apps.achievements.tasks.achievement_backdate_task",
        "apps.pipeline.tasks.queued_events_process_task",
        "apps.webhooks.tasks.webhooks_dispatch_task",
    ]
    assert queued == 2  # stored once: the client had its 202 and nothing to retry


def test_healthz_answers_503_within_seconds(server) -> None:
    response = timed(httpx.Client(base_url=server["url"], timeout=20), "GET", "/healthz")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "checks": {"database": True, "broker": False},
    }
