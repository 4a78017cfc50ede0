"""A real Redis broker and a Celery worker in a thread, for the tests that prove a task
survives being serialized, queued and picked up (tests/pipeline/test_batch_with_broker.py,
tests/cells/test_routing.py). Each caller names its own Redis database."""

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from celery.contrib.testing.worker import start_worker

from gamify.celery import app as celery_app


def redis_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        return False
    return True


def _reset_connection_pools() -> None:
    # The app keeps the broker connection pool it made first (for the default broker, if an
    # earlier test touched it); a new broker URL needs new pools.
    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@contextmanager
def worker_through(broker: str, settings: Any) -> Iterator[None]:
    """Tasks go through `broker` to a solo worker in a thread while inside."""
    settings.CELERY_BROKER_URL = broker
    celery_app.conf.update(broker_url=broker, task_always_eager=False, result_backend=None)
    _reset_connection_pools()
    assert celery_app.pool.connection.as_uri().startswith("redis://")
    celery_app.loader.import_module("celery.contrib.testing.tasks")
    try:
        with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
            yield
    finally:
        celery_app.conf.update(task_always_eager=True, broker_url=None)
        _reset_connection_pools()
