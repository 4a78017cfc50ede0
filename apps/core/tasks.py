from celery import shared_task

from apps.core.periodic import periodic_jobs_run_due


@shared_task(name="apps.core.tasks.periodic_jobs_run_due_task")
def periodic_jobs_run_due_task() -> list[str]:
    return periodic_jobs_run_due()


@shared_task(name="apps.core.tasks.outbox_run_task")
def outbox_run_task(pk: int) -> bool:
    from apps.core.outbox import outbox_run

    return outbox_run(pk)
