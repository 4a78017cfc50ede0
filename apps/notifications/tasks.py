"""Delivery tasks. Both take ids only and may run twice: the dispatcher's claim and each
message's conditional claim make a repeated task a no-op."""

from celery import shared_task
from django.utils import timezone

from apps.core.cells import cell_queue
from apps.notifications.delivery import messages_due_claim, messages_send


@shared_task(name="apps.notifications.tasks.messages_dispatch_task")
def messages_dispatch_task() -> int:
    """Hand every due message to a send task on its queue, in chunks of at most 100."""
    chunks = messages_due_claim(timezone.now())
    for queue, id_lists in chunks.items():
        for ids in id_lists:
            messages_send_task.apply_async((ids,), queue=cell_queue(queue))
    return sum(len(ids) for id_lists in chunks.values() for ids in id_lists)


@shared_task(name="apps.notifications.tasks.messages_send_task")
def messages_send_task(ids: list[int]) -> dict[str, int]:
    return messages_send(ids)
