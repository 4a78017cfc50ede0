"""Batches still pending when the task outbox arrives get an outbox row each, so the outbox
sweep (which replaces queued-events-recover) processes them."""

import json

from django.db import migrations
from django.utils import timezone

TASK = "apps.pipeline.tasks.queued_events_process_task"


def pending_to_outbox(apps, schema_editor):
    QueuedEvent = apps.get_model("pipeline", "QueuedEvent")
    OutboxTask = apps.get_model("core", "OutboxTask")
    now = timezone.now()
    batches = (
        QueuedEvent.objects.filter(status="pending").values_list("batch_id", flat=True).distinct()
    )
    OutboxTask.objects.bulk_create(
        OutboxTask(
            task=TASK,
            args=[str(batch_id)],
            key=f"{TASK}:{json.dumps([str(batch_id)])}",
            created=now,
            available_at=now,
        )
        for batch_id in batches
    )


class Migration(migrations.Migration):
    dependencies = [
        ("pipeline", "0002_batch_request"),
        ("core", "0002_outbox_task"),
    ]

    operations = [migrations.RunPython(pending_to_outbox, migrations.RunPython.noop)]
