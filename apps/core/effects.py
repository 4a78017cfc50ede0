"""Side effects leave only after commit: a task enqueued inside a transaction that later rolls
back would act on rows that never existed."""

from typing import Any

from django.db import transaction


def enqueue_after_commit(task: Any, *args: Any) -> None:
    """`task.delay(*args)` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: task.delay(*args))
