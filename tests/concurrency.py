"""Running test jobs at the same moment, in threads with their own database connections."""

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections

# The marks of a module whose tests need PostgreSQL's real row locks (SQLite serializes every
# write transaction): `pytestmark = [*POSTGRES_ONLY, ...]`.
POSTGRES_ONLY = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs PostgreSQL: run with DATABASE_URL=postgres://...",
    ),
]


def run_all(jobs: list[Callable[[], Any]]) -> list[Any]:
    """Run each job in its own thread, all released at once; return their results."""
    barrier = threading.Barrier(len(jobs))
    results: list[Any] = [None] * len(jobs)

    def run(index: int, job: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[index] = job()
        except Exception as exc:  # reported by the assertions below
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results
