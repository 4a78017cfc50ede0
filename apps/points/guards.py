"""What deleting a metric or an achievement does to points systems (apps/core/guards.py): the
triggers that name it are deleted with it. Only configuration goes (the ledger keeps what they
paid), so these consequences need no confirmation on their own."""

from collections.abc import Iterable
from typing import Any

from django.db.models import Count

from apps.achievements.models import Achievement
from apps.core.guards import Consequence, consequences_of
from apps.core.wording import agreeing, counted
from apps.metrics.models import Metric
from apps.points.models import PointsTrigger


def _triggers(**condition: Any) -> list[Consequence]:
    rows = (
        PointsTrigger.objects.filter(**condition)
        .values("system__name")
        .annotate(count=Count("pk"))
        .order_by("system__name")
    )
    return [
        Consequence(
            f"{counted(row['count'], 'trigger')} of the points system {row['system__name']} "
            f"{agreeing(row['count'], 'is', 'are')} deleted"
        )
        for row in rows
    ]


@consequences_of("metric")
def metric_triggers(metric: Metric) -> Iterable[Consequence]:
    return _triggers(system__tenant_id=metric.tenant_id, metric=metric)


@consequences_of("achievement")
def achievement_triggers(achievement: Achievement) -> Iterable[Consequence]:
    return _triggers(system__tenant_id=achievement.tenant_id, achievement=achievement)
