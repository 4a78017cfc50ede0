"""Tasks for the outbox tests: they record their runs, and fail while told to."""

from celery import shared_task

runs: list[str] = []
failing: set[str] = set()


@shared_task(name="tests.core.outbox_tasks.record_task")
def record_task(label: str = "") -> None:
    runs.append(label)
    if label in failing:
        raise RuntimeError(f"{label} failed")
