"""Side effects leave only after commit: a task enqueued inside a transaction that later rolls
back would act on rows that never existed.

Sending a task can fail after the commit (the broker is down). The write has happened: it must
not become an error (the client would retry and apply it twice), so the failure is logged and
the periodic job that covers that work picks it up (batches: queued-events-recover; email,
push and webhook deliveries: their dispatch jobs).
"""

import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError

from apps.core.background import background_submit

logger = logging.getLogger("gamify.effects")

# What a broker outage raises from `delay()`: kombu's error, or the transport's own.
BROKER_ERRORS = (OperationalError, ConnectionError, OSError, TimeoutError)


def enqueue_after_commit(task: Any, *args: Any) -> None:
    """`task.delay(*args)` once the current transaction commits (at once outside one). Without
    a broker (BACKGROUND_TASKS=thread) the task runs in the in-process background worker, after
    the response; BACKGROUND_TASKS=inline runs it at commit (the test suite)."""

    def send() -> None:
        if settings.BACKGROUND_TASKS == "thread":
            background_submit(task.run, *args)
            return
        try:
            task.delay(*args)
        except BROKER_ERRORS:
            logger.exception(
                "could not enqueue %s%r; its periodic job will pick it up", task.name, args
            )

    transaction.on_commit(send)
