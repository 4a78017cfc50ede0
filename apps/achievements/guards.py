"""What deleting a metric does to achievements (apps/core/guards.py): the achievements it
triggers are deleted with it, and the users who completed them lose them; one that another
achievement requires keeps the metric (the prerequisite's foreign key protects it), which the
refusal says in words."""

from collections.abc import Iterable

from django.db.models import Count

from apps.achievements.models import Achievement
from apps.achievements.selectors import achievement_loss
from apps.core.guards import Consequence, consequences_of
from apps.metrics.models import Metric


@consequences_of("metric")
def metric_achievements(metric: Metric) -> Iterable[Consequence]:
    achievements = (
        Achievement.objects.filter(tenant_id=metric.tenant_id, metric=metric)
        .annotate(completed=Count("completions"))
        .order_by("name", "pk")
    )
    found = [achievement_loss(achievement, achievement.completed) for achievement in achievements]
    requiring = (
        Achievement.objects.filter(prerequisites__in=achievements)
        .exclude(metric=metric)
        .distinct()
        .order_by("name")
    )
    for composite in requiring:
        text = f"the achievement {composite.name} requires an achievement it triggers"
        found.append(Consequence(text, blocks=True))
    return found
