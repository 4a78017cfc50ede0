"""The task outbox: work recorded with the write, sent after commit, swept until it has run."""

import datetime as dt
from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
import time_machine
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

from apps.core.background import QUEUE_SIZE
from apps.core.models import OutboxTask
from apps.core.outbox import (
    GRACE,
    LEASE,
    MAX_ATTEMPTS,
    outbox_enqueue,
    outbox_run,
    outbox_sweep,
)
from apps.core.tasks import outbox_run_task
from tests.core import outbox_tasks
from tests.core.outbox_tasks import record_task

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _runs() -> Iterator[list[str]]:
    outbox_tasks.runs.clear()
    outbox_tasks.failing.clear()
    yield outbox_tasks.runs
    outbox_tasks.runs.clear()
    outbox_tasks.failing.clear()


@pytest.fixture
def broker_down(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Connection refused")

    monkeypatch.setattr(outbox_run_task, "apply_async", refuse)


def later(minutes: float) -> dt.datetime:
    return timezone.now() + dt.timedelta(minutes=minutes)


def test_work_runs_after_commit_and_leaves_no_row(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        outbox_enqueue(record_task, "a")
        assert outbox_tasks.runs == []  # not before the commit
        assert OutboxTask.objects.get().key == 'tests.core.outbox_tasks.record_task:["a"]'
    assert outbox_tasks.runs == ["a"]
    assert not OutboxTask.objects.exists()


def test_a_rolled_back_write_leaves_no_work(django_capture_on_commit_callbacks):
    def write_that_fails() -> None:
        with transaction.atomic():
            outbox_enqueue(record_task, "a")
            raise ZeroDivisionError  # the write fails after asking for work

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ZeroDivisionError):
        write_that_fails()
    assert not OutboxTask.objects.exists()
    assert outbox_sweep(later(60)) == 0
    assert outbox_tasks.runs == []


def test_a_send_lost_to_the_broker_is_swept_once_its_grace_has_passed(
    broker_down, django_capture_on_commit_callbacks, monkeypatch
):
    with django_capture_on_commit_callbacks(execute=True):
        outbox_enqueue(record_task, "a")  # no exception reaches the writer
    assert outbox_tasks.runs == []
    monkeypatch.undo()  # the broker is back
    with django_capture_on_commit_callbacks(execute=True):
        assert outbox_sweep(timezone.now()) == 0  # the first send may still be on its way
        assert outbox_sweep(later(2)) == 1
        assert outbox_sweep(later(2)) == 0
    assert outbox_tasks.runs == ["a"]
    assert not OutboxTask.objects.exists()


def test_a_failing_run_is_kept_and_retried_later_and_later(django_capture_on_commit_callbacks):
    outbox_tasks.failing.add("a")
    with django_capture_on_commit_callbacks(execute=True):
        outbox_enqueue(record_task, "a")
    row = OutboxTask.objects.get()
    assert (row.attempts, row.locked_until) == (1, None)
    assert row.last_error == "RuntimeError: a failed"
    first_retry = row.available_at
    assert first_retry - timezone.now() == pytest.approx(GRACE, abs=dt.timedelta(seconds=5))

    assert outbox_run(row.pk) is False  # sent again by hand: fails again, waits twice as long
    row.refresh_from_db()
    assert row.attempts == 2
    assert row.available_at - timezone.now() == pytest.approx(
        2 * GRACE, abs=dt.timedelta(seconds=5)
    )

    outbox_tasks.failing.clear()
    assert outbox_sweep(timezone.now()) == 0  # not due yet
    with time_machine.travel(later(3)):
        assert outbox_sweep(timezone.now()) == 1
    assert outbox_tasks.runs == ["a", "a", "a"]
    assert not OutboxTask.objects.exists()


def test_equal_pending_work_runs_once(broker_down, monkeypatch):
    for label in ("a", "a", "a", "b"):
        outbox_enqueue(record_task, label)
    monkeypatch.undo()
    assert outbox_sweep(later(2)) == 2
    assert sorted(outbox_tasks.runs) == ["a", "b"]
    assert not OutboxTask.objects.exists()


def test_a_run_in_progress_is_not_run_again_until_its_lease_expires(broker_down, monkeypatch):
    outbox_enqueue(record_task, "a")
    monkeypatch.undo()
    # Another worker holds it (its lease runs until then).
    OutboxTask.objects.update(locked_until=later(LEASE.total_seconds() / 60))
    row = OutboxTask.objects.get()
    assert outbox_run(row.pk) is False
    assert outbox_sweep(later(2)) == 0
    assert outbox_tasks.runs == []
    # The worker died: once its lease is over the sweep sends the work again.
    with time_machine.travel(later(LEASE.total_seconds() / 60 + 1)):
        assert outbox_sweep(timezone.now()) == 1
    assert outbox_tasks.runs == ["a"]


def test_a_repeated_send_of_finished_work_is_a_no_op(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        outbox_enqueue(record_task, "a")
    assert outbox_tasks.runs == ["a"]
    assert outbox_run(12345) is False
    assert outbox_tasks.runs == ["a"]


def test_without_a_broker_the_background_thread_runs_it_and_a_full_queue_leaves_it_to_the_sweep(
    settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.BACKGROUND_TASKS = "thread"
    submitted: list[tuple[Any, ...]] = []

    def queue_full(func: Any, *args: Any) -> bool:
        submitted.append((func, *args))
        return False

    monkeypatch.setattr("apps.core.outbox.background_submit", queue_full)
    with django_capture_on_commit_callbacks(execute=True):
        outbox_enqueue(record_task, "a")
    row = OutboxTask.objects.get()
    assert submitted == [(outbox_run, row.pk)]
    assert outbox_tasks.runs == []

    def run_here(func: Any, *args: Any) -> bool:  # the thread, without a second connection
        func(*args)
        return True

    monkeypatch.setattr("apps.core.outbox.background_submit", run_here)
    assert outbox_sweep(later(2)) == 1
    assert outbox_tasks.runs == ["a"]
    assert not OutboxTask.objects.exists()


def test_run_periodic_jobs_without_a_broker_finishes_the_swept_work_before_it_exits(settings):
    """Cron's command once handed the swept work to its own background thread, which died when
    the command exited (of 1,600 stalled events, 200 were applied in three runs). More pieces of
    work than the thread's queue holds are all done when the command returns."""
    settings.BACKGROUND_TASKS = "thread"
    labels = [f"w{n}" for n in range(QUEUE_SIZE + 20)]
    for label in labels:  # left by a web worker killed before its sends
        outbox_enqueue(record_task, label)
    with time_machine.travel(later(2)):
        call_command("run_periodic_jobs", stdout=StringIO())
    assert sorted(outbox_tasks.runs) == sorted(labels)
    assert not OutboxTask.objects.exists()


def test_every_task_handed_to_the_outbox_is_importable_by_its_name():
    """The outbox finds a task by its name: a task named otherwise would never run."""
    from django.utils.module_loading import import_string

    from apps.achievements.tasks import achievement_backdate_task
    from apps.notifications.tasks import messages_dispatch_task
    from apps.pipeline.tasks import queued_events_process_task
    from apps.webhooks.tasks import webhooks_dispatch_task

    for task in (
        achievement_backdate_task,
        messages_dispatch_task,
        queued_events_process_task,
        webhooks_dispatch_task,
    ):
        assert import_string(task.name) is task


def test_work_that_keeps_failing_is_set_aside_and_sent_again_on_request(
    django_capture_on_commit_callbacks,
):
    outbox_tasks.failing.add("a")
    with django_capture_on_commit_callbacks(execute=True):
        outbox_enqueue(record_task, "a")
    row = OutboxTask.objects.get()
    OutboxTask.objects.filter(pk=row.pk).update(attempts=MAX_ATTEMPTS - 2)
    assert outbox_run(row.pk) is False  # one failure short of the limit: retried later
    row.refresh_from_db()
    assert (row.attempts, row.failed_at) == (MAX_ATTEMPTS - 1, None)

    assert outbox_run(row.pk) is False  # the last allowed run fails: set aside
    row.refresh_from_db()
    assert row.attempts == MAX_ATTEMPTS
    assert row.failed_at is not None
    with time_machine.travel(later(24 * 60)):
        assert outbox_sweep(timezone.now()) == 0  # the sweep leaves it alone
        assert outbox_run(row.pk) is False  # and so does a stray send
    out = StringIO()
    call_command("outbox", stdout=out)
    assert 'tests.core.outbox_tasks.record_task:["a"]\tRuntimeError: a failed' in out.getvalue()
    assert out.getvalue().endswith("1 task set aside\n")

    outbox_tasks.failing.clear()  # the cause is mended
    call_command("outbox", "--retry", stdout=StringIO())
    row.refresh_from_db()
    assert (row.attempts, row.failed_at) == (0, None)
    with django_capture_on_commit_callbacks(execute=True):
        assert outbox_sweep(later(1)) == 1
    assert outbox_tasks.runs[-1] == "a"
    assert not OutboxTask.objects.exists()


def test_a_row_written_since_the_last_failure_does_not_reset_the_count_of_failed_runs(
    broker_down, django_capture_on_commit_callbacks
):
    outbox_tasks.failing.add("a")
    outbox_enqueue(record_task, "a")
    old = OutboxTask.objects.get()
    OutboxTask.objects.filter(pk=old.pk).update(attempts=5)
    outbox_enqueue(record_task, "a")  # the same work asked for again
    new = OutboxTask.objects.exclude(pk=old.pk).get()

    assert outbox_run(new.pk) is False  # runs both rows, fails
    assert set(OutboxTask.objects.values_list("attempts", flat=True)) == {6}

    OutboxTask.objects.update(attempts=MAX_ATTEMPTS - 1)
    assert outbox_run(new.pk) is False
    assert OutboxTask.objects.filter(failed_at__isnull=False).count() == 2


def test_work_set_aside_is_cleared_when_the_same_work_later_runs(broker_down):
    outbox_tasks.failing.add("a")
    outbox_enqueue(record_task, "a")
    OutboxTask.objects.update(attempts=MAX_ATTEMPTS - 1)
    assert outbox_run(OutboxTask.objects.get().pk) is False
    assert OutboxTask.objects.get().failed_at is not None

    outbox_tasks.failing.clear()
    outbox_enqueue(record_task, "a")  # asked for again, after the cause was mended
    fresh = OutboxTask.objects.get(failed_at__isnull=True)
    assert outbox_run(fresh.pk) is True
    assert not OutboxTask.objects.exists()
    out = StringIO()
    call_command("outbox", stdout=out)
    assert out.getvalue() == "0 tasks set aside\n"
