"""The task outbox: background work that a write needs is recorded in the write's transaction
and delivered by a task that the sweep sends again until it has run.

    outbox_enqueue(achievement_backdate_task, achievement.pk)   # inside the write's atomic()

A task enqueued inside a transaction that later rolls back would act on rows that never
existed; a task sent after commit can be lost (the broker is down, the worker dies). So the
work is a row (`OutboxTask`) written with the change, sent after commit, and deleted when a run
succeeds; until then `outbox-sweep` sends it again, with a growing delay after failures, and
after MAX_ATTEMPTS failed runs sets it aside for a person (`manage.py outbox`). A
broker error after commit is logged, never raised: the write has happened, and an error would
make the client retry it into a duplicate. For the same reason the send is bounded: a broker
that takes connections and never answers costs the request a few seconds (the timeouts of
gamify/settings.py), and the process then leaves its sends to the sweep for BROKER_REST
seconds instead of paying that again for every send.

Tasks must be idempotent: a run may repeat (a sweep racing a slow send, a worker killed after
the work but before the delete). Equal pending rows (same task and arguments) are one piece of
work: a run claims them all, so a thousand writes that each ask for a delivery run cost one.

Where the work runs follows BACKGROUND_TASKS: Celery (a worker), the in-process background
thread (no broker), or inline at commit (the test suite).
"""

import datetime as dt
import json
import logging
import time
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.module_loading import import_string
from kombu.exceptions import OperationalError

from apps.core.background import background_submit
from apps.core.cells import cell_queue
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
# After this many failed runs (about a day: 1, 2, 4 ... 32 minutes, then hourly) the work is
# set aside as failed (`failed_at`): the sweep leaves it, and `manage.py outbox --retry` sends
# it again once the cause is mended. A task that fails for a day fails for a reason a person
# must see (a bug, a row it cannot handle); retrying it hourly forever would only bury it in
# the log.
MAX_ATTEMPTS = 24
SWEEP_LIMIT = 1000
# A send tries twice (a pooled connection may be stale after a broker restart), each attempt
# bounded by the broker timeouts of gamify/settings.py: a few seconds at worst. The sweep is
# the real retry.
SEND_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}
# After a failed send, the process sends nothing for this long: each further send would wait
# the same timeout (several per request, thousands per sweep) only to fail the same way.
BROKER_REST = 10
_broker_failed_at: float | None = None


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


def _send(pk: int, queue: str | None = None, *, probe: bool = False) -> bool:
    """Hand the row's work to where it runs; True when it was. The send after commit runs in
    the request that made the write, so it waits a few seconds at most, and not at all for a
    while after a send failed (`probe` tries anyway: the sweep asking whether the broker is
    back). Whatever is not handed over is left to the sweep."""
    global _broker_failed_at
    if settings.BACKGROUND_TASKS == "thread":
        return background_submit(outbox_run, pk)  # a full queue leaves it to the sweep
    from apps.core.tasks import outbox_run_task

    failed_at = _broker_failed_at
    if not probe and failed_at is not None and time.monotonic() - failed_at < BROKER_REST:
        return False
    try:
        outbox_run_task.apply_async((pk,), queue=cell_queue(queue), retry_policy=SEND_RETRY)
    except BROKER_ERRORS:
        _broker_failed_at = time.monotonic()
        logger.exception(
            "could not send outbox task %s; the sweep will send it again, and this process "
            "sends nothing for %ds",
            pk,
            BROKER_REST,
        )
        return False
    _broker_failed_at = None
    return True


def outbox_sends_resume() -> None:
    """Forget a failed send, so that the next send tries the broker at once (tests start each
    with the broker presumed up)."""
    global _broker_failed_at
    _broker_failed_at = None


def _free(now: dt.datetime) -> Q:
    """Rows a run may take: not set aside as failed, and not held by a live run."""
    return Q(failed_at__isnull=True) & (Q(locked_until__isnull=True) | Q(locked_until__lt=now))


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
        rows = list(equal.values_list("pk", "attempts"))
        pks = [pk for pk, _ in rows]
        OutboxTask.objects.filter(pk__in=pks).update(locked_until=now + LEASE)
        first.claimed = pks  # type: ignore[attr-defined]
        # One piece of work has one count of failed runs: the highest of its rows. A row
        # written since the last failure joins the run without resetting the count.
        first.attempts = max(attempts for _, attempts in rows)
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
    # The one catch-all of the code base (docs/style.md, "Writing services and selectors"):
    # the outbox supervises task bodies as a Celery worker does, so any error of a body is a
    # failed run to record and retry, up to MAX_ATTEMPTS, never a crash of the runner.
    except Exception as exc:
        _drop_broken_connection()
        now = timezone.now()
        failed = attempts >= MAX_ATTEMPTS
        log = logger.error if failed else logger.warning
        log(
            "outbox task %s failed (attempt %d%s)",
            row.key,
            attempts,
            "; set aside until `manage.py outbox --retry`" if failed else "",
            exc_info=True,
        )
        delay = min(GRACE * 2 ** min(attempts - 1, 16), BACKOFF_MAX)
        OutboxTask.objects.filter(pk__in=claimed).update(
            locked_until=None,
            attempts=attempts,
            available_at=now + delay,
            failed_at=now if failed else None,
            last_error=f"{type(exc).__name__}: {exc}"[:2000],
        )
        return False
    OutboxTask.objects.filter(pk__in=claimed).delete()
    # The same work set aside earlier has now run: it is no longer failed work.
    OutboxTask.objects.filter(key=row.key, failed_at__isnull=False).delete()
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
    distinct piece of work, until a send fails. Returns how many pieces of work were due."""
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
        if not _send(pk, getattr(import_string(task), "queue", None), probe=True):
            break  # the broker failed: the rest waits for the next sweep, not for a timeout each
    return len(sent)


def outbox_failed() -> list[OutboxTask]:
    """The work set aside after MAX_ATTEMPTS failed runs, oldest first."""
    return list(OutboxTask.objects.filter(failed_at__isnull=False).order_by("failed_at", "pk"))


def outbox_retry(now: dt.datetime) -> int:
    """Give the work set aside a fresh start: the next sweep sends it, with MAX_ATTEMPTS runs
    again. Returns how many rows."""
    return OutboxTask.objects.filter(failed_at__isnull=False).update(
        failed_at=None, attempts=0, locked_until=None, available_at=now
    )
