"""Delivery tasks on their own queue ("webhooks"): ids only, safe to run twice."""

from celery import shared_task
from django.utils import timezone

from apps.core.cells import cell_queue
from apps.webhooks.delivery import deliveries_due_claim, deliveries_send

QUEUE = "webhooks"


@shared_task(name="apps.webhooks.tasks.webhooks_dispatch_task")
def webhooks_dispatch_task() -> int:
    chunks = deliveries_due_claim(timezone.now())
    for ids in chunks:
        webhooks_send_task.apply_async((ids,), queue=cell_queue(QUEUE))
    return sum(len(ids) for ids in chunks)


@shared_task(name="apps.webhooks.tasks.webhooks_send_task")
def webhooks_send_task(ids: list[int]) -> dict[str, int]:
    return deliveries_send(ids)
