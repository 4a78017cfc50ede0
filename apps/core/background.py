"""The in-process background worker of deployments without a broker (`make serve`, small
installs): work handed to Celery elsewhere runs here after the response, in one daemon thread,
never inside the request (a batch of 1,000 events takes seconds; four at once in requests made
gunicorn kill its workers).

Bounded: at most QUEUE_SIZE pieces of work wait; beyond that, and whatever a process dying with
a full queue leaves, the task outbox's sweep sends again (apps/core/outbox.py), as it does after
a broker outage.

A one-shot process (`manage.py run_periodic_jobs` from cron) has no "after": its daemon thread
dies when the command exits, with the work it took half done and its outbox rows leased for
15 minutes. Inside `background_inline()` submitted work runs at once, in the caller, to the end.
"""

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import close_old_connections, connections

from apps.core.cells import current_cell, using_cell

logger = logging.getLogger("gamify.background")

QUEUE_SIZE = 100
_work: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...], str]] = queue.Queue(QUEUE_SIZE)
_started = threading.Lock()
_thread: threading.Thread | None = None
_inline = False


def _call(func: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        func(*args)
    except Exception:
        logger.exception("background work %s%r failed", getattr(func, "__name__", func), args)


def _run() -> None:
    while True:
        func, args, cell = _work.get()
        close_old_connections()
        try:
            with using_cell(cell):  # the cell of the work that submitted it
                _call(func, args)
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
    """Run `func(*args)` in the background thread; False (logged) when the queue is full.
    Inside `background_inline()`, run it now and return when it is done."""
    if _inline:
        _call(func, args)
        return True
    _ensure_started()
    try:
        _work.put_nowait((func, args, current_cell()))
    except queue.Full:
        logger.warning("background queue full: %s%r left to the outbox sweep", func, args)
        return False
    return True


def background_join() -> None:
    """Wait until the queued work is done (tests and shutdown)."""
    _work.join()


@contextmanager
def background_inline() -> Iterator[None]:
    """For the whole process, while inside: submitted work runs in the caller (a command that
    exits when it is done, whose background thread would die with the work unfinished)."""
    global _inline
    before, _inline = _inline, True
    try:
        yield
    finally:
        _inline = before
