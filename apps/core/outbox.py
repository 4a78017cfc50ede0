"""The task outbox: background work that a write needs is recorded in the write's transaction
and delivered by a task that the sweep sends again until it has run.

    outbox_enqueue(achievement_backdate_task, achievement.pk)   # inside the write's atomic()

A task enqueued inside a transaction that later rolls back would act on rows that never
existed; a task sent after commit can be lost (the broker is down, the worker dies). So the
work is a row (`OutboxTask`) written with the change, sent after commit, and deleted when a run
succeeds; until then `outbox-sweep` sends it again, with a growing delay after failures. A
broker error after commit is logged, never raised: the write has happened, and an error would
make the client retry it into a duplicate.

Tasks must be idempotent: a run may repeat (a sweep racing a slow send, a worker killed after
the work but before the delete). Equal pending rows (same task and arguments) are one piece of
work: a run claims them all, so a thousand writes that each ask for a delivery run cost one.

Where the work runs follows BACKGROUND_TASKS: Celery (a worker), the in-process background
thread (no broker), or inline at commit (the test suite).
"""

import datetime as dt
import json
import logging
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.module_loading import import_string
from kombu.exceptions import OperationalError

from apps.core.background import background_submit
from apps.core.models import OutboxTask
from apps.core.periodic import periodic_job

logger = logging.getLogger("gamify.outbox")

# What a broker outage raises from `apply_async`: kombu's error, or the transport's own.
BROKER_ERRORS = (OperationalError, ConnectionError, OSError, TimeoutError)
# How long the after-commit send has before the sweep sends the work again.
GRACE = dt.timedelta(minutes=1)
# A run holds its rows this long; a run still holding them after that lost its worker.
LEASE = dt.timedelta(minutes=15)
# Retries after failures wait GRACE, twice that, four times ... up to this.
BACKOFF_MAX = dt.timedelta(hours=1)
SWEEP_LIMIT = 1000


def _key(name: str, args: list[Any]) -> str:
    return f"{name}:{json.dumps(args, separators=(',', ':'))}"


def outbox_enqueue(task: Any, *args: Any) -> None:
    """Record `task(*args)` in the current transaction and send it once that commits (at once
    outside one). `task` is a Celery task whose name is its import path; `args` are JSON."""
    now = timezone.now()
    row = OutboxTask.objects.create(
        task=task.name,
        args=list(args),
        key=_key(task.name, list(args)),
        created=now,
        available_at=now + GRACE,
    )
    queue = getattr(task, "queue", None)
    transaction.on_commit(lambda: _send(row.pk, queue))


def _send(pk: int, queue: str | None = None) -> None:
    if settings.BACKGROUND_TASKS == "thread":
        background_submit(outbox_run, pk)  # a full queue leaves it to the sweep
        return
    from apps.core.tasks import outbox_run_task

    try:
        outbox_run_task.apply_async((pk,), queue=queue)
    except BROKER_ERRORS:
        logger.exception("could not send outbox task %s; the sweep will send it again", pk)


def _free(now: dt.datetime) -> Q:
    return Q(locked_until__isnull=True) | Q(locked_until__lt=now)


def _claim(pk: int, now: dt.datetime) -> OutboxTask | None:
    """Lock this row and the free rows equal to it for one run; None when it is done or
    another run holds it."""
    with transaction.atomic():
        row = OutboxTask.objects.select_for_update(skip_locked=True).filter(_free(now), pk=pk)
        first = row.first()
        if first is None:
            return None
        equal = OutboxTask.objects.select_for_update(skip_locked=True).filter(
            _free(now), key=first.key
        )
        pks = list(equal.values_list("pk", flat=True))
        OutboxTask.objects.filter(pk__in=pks).update(locked_until=now + LEASE)
        first.claimed = pks  # type: ignore[attr-defined]
        return first


def outbox_run(pk: int) -> bool:
    """Run the work of one outbox row (and its equals); True when it ran and is done. A failure
    is logged and kept for a later sweep; a row that is gone or held by another run is a no-op."""
    now = timezone.now()
    row = _claim(pk, now)
    if row is None:
        return False
    claimed: list[int] = row.claimed  # type: ignore[attr-defined]
    attempts = row.attempts + 1
    try:
        import_string(row.task).run(*row.args)
    except Exception as exc:
        logger.exception("outbox task %s failed (attempt %d)", row.key, attempts)
        _drop_broken_connection()
        delay = min(GRACE * 2 ** min(attempts - 1, 16), BACKOFF_MAX)
        OutboxTask.objects.filter(pk__in=claimed).update(
            locked_until=None,
            attempts=attempts,
            available_at=timezone.now() + delay,
            last_error=f"{type(exc).__name__}: {exc}"[:2000],
        )
        return False
    OutboxTask.objects.filter(pk__in=claimed).delete()
    return True


def _drop_broken_connection() -> None:
    """After a lost database connection, open a new one for the bookkeeping (never inside a
    transaction someone else holds: the inline runs of the test suite)."""
    if connection.in_atomic_block or connection.connection is None:
        return
    if not connection.is_usable():
        connection.close()


@periodic_job("outbox-sweep", every=dt.timedelta(minutes=1))
def outbox_sweep(now: dt.datetime) -> int:
    """Send again the work whose send was lost or whose last run failed or died: one send per
    distinct piece of work. Returns how many were sent."""
    due = list(
        OutboxTask.objects.filter(_free(now), available_at__lte=now)
        .order_by("available_at")
        .values_list("pk", "key", "task")[:SWEEP_LIMIT]
    )
    sent: dict[str, tuple[int, str]] = {}
    for pk, key, task in due:
        sent.setdefault(key, (pk, task))
    # Not again before GRACE, so a send that is merely queued is not doubled by the next sweep.
    OutboxTask.objects.filter(pk__in=[pk for pk, _, _ in due]).update(available_at=now + GRACE)
    for pk, task in sent.values():
        _send(pk, getattr(import_string(task), "queue", None))
    return len(sent)
