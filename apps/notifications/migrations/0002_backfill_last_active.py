"""Users active before notifications existed get their last-active date from their events, so
reactivation and recap sweeps see them from the first run."""

import zoneinfo

from django.db import migrations
from django.db.models import Max

BATCH = 1000
DEFAULT_ZONE = "America/New_York"  # apps.notifications.domain.DEFAULT_ZONE, frozen here


def backfill(apps, schema_editor):
    EndUser = apps.get_model("users", "EndUser")
    MetricEvent = apps.get_model("metrics", "MetricEvent")
    last_pk = 0
    while True:
        users = list(
            EndUser.objects.filter(pk__gt=last_pk, last_active_at__isnull=True).order_by("pk")[
                :BATCH
            ]
        )
        if not users:
            return
        last_pk = users[-1].pk
        latest = dict(
            MetricEvent.objects.filter(user__in=users)
            .values("user_id")
            .annotate(at=Max("occurred_at"))
            .values_list("user_id", "at")
        )
        changed = []
        for user in users:
            at = latest.get(user.pk)
            if at is None:
                continue
            user.last_active_at = at
            user.last_active_on = at.astimezone(zoneinfo.ZoneInfo(user.tz or DEFAULT_ZONE)).date()
            changed.append(user)
        EndUser.objects.bulk_update(changed, ["last_active_at", "last_active_on"])


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0001_initial"),
        ("metrics", "0001_initial"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
