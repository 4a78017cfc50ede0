"""Backdating requests move from Achievement.backdate_due_at to the task outbox: pending ones
become outbox rows (the sweep sends them), then the field goes."""

from django.db import migrations
from django.utils import timezone

TASK = "apps.achievements.tasks.achievement_backdate_task"


def pending_to_outbox(apps, schema_editor):
    Achievement = apps.get_model("achievements", "Achievement")
    OutboxTask = apps.get_model("core", "OutboxTask")
    now = timezone.now()
    OutboxTask.objects.bulk_create(
        OutboxTask(task=TASK, args=[pk], key=f"{TASK}:[{pk}]", created=now, available_at=now)
        for pk in Achievement.objects.filter(backdate_due_at__isnull=False).values_list(
            "pk", flat=True
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("achievements", "0003_achievement_backdate_due"),
        ("core", "0002_outbox_task"),
    ]

    operations = [
        migrations.RunPython(pending_to_outbox, migrations.RunPython.noop),
        migrations.RemoveField(model_name="achievement", name="backdate_due_at"),
    ]
