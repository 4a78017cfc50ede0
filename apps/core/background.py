"""The in-process background worker of deployments without a broker (`make serve`, small
installs): work handed to Celery elsewhere runs here after the response, in one daemon thread,
never inside the request (a batch of 1,000 events takes seconds; four at once in requests made
gunicorn kill its workers).

Bounded: at most QUEUE_SIZE pieces of work wait; beyond that, and whatever a process dying with
a full queue leaves, the task outbox's sweep sends again (apps/core/outbox.py), as it does after
a broker outage.
"""

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from django.db import close_old_connections, connections

logger = logging.getLogger("gamify.background")

QUEUE_SIZE = 100
_work: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...]]] = queue.Queue(QUEUE_SIZE)
_started = threading.Lock()
_thread: threading.Thread | None = None


def _run() -> None:
    while True:
        func, args = _work.get()
        close_old_connections()
        try:
            func(*args)
        except Exception:
            logger.exception("background work %s%r failed", getattr(func, "__name__", func), args)
        finally:
            connections.close_all()
            _work.task_done()


def _ensure_started() -> None:
    global _thread
    with _started:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="gamify-background", daemon=True)
            _thread.start()


def background_submit(func: Callable[..., Any], *args: Any) -> bool:
    """Run `func(*args)` in the background thread; False (logged) when the queue is full."""
    _ensure_started()
    try:
        _work.put_nowait((func, args))
    except queue.Full:
        logger.warning("background queue full: %s%r left to the outbox sweep", func, args)
        return False
    return True


def background_join() -> None:
    """Wait until the queued work is done (tests and shutdown)."""
    _work.join()
