from celery import shared_task

from apps.core.cells import cell_queue, cells, cells_configured, using_cell
from apps.core.periodic import periodic_jobs_run_due, periodic_jobs_run_due_here


@shared_task(name="apps.core.tasks.periodic_jobs_run_due_task")
def periodic_jobs_run_due_task() -> list[str]:
    """Beat's one entry. With several cells it fans out one run per cell, each a task published
    in that cell (so run by that cell's workers, in it: apps/cells/tasks.py)."""
    if not cells_configured():
        return periodic_jobs_run_due()
    for cell in cells():
        with using_cell(cell):
            periodic_jobs_run_due_cell_task.apply_async(queue=cell_queue(None))
    return []


@shared_task(name="apps.core.tasks.periodic_jobs_run_due_cell_task")
def periodic_jobs_run_due_cell_task() -> list[str]:
    return periodic_jobs_run_due_here()


@shared_task(name="apps.core.tasks.outbox_run_task")
def outbox_run_task(pk: int) -> bool:
    from apps.core.outbox import outbox_run

    return outbox_run(pk)
