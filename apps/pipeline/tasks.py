from celery import shared_task

from apps.pipeline.batches import queued_events_process


@shared_task(name="apps.pipeline.tasks.queued_events_process_task")
def queued_events_process_task(batch_id: str) -> int:
    return queued_events_process(batch_id)
