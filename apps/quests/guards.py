"""What deleting a metric or an achievement, or archiving a points system, does to quests
(apps/core/guards.py).

A goal names its metric, points system or achievement by public id (no foreign key): deleting a
metric or an achievement a quest's goal counts is refused, in words that say which quest and
what to do, since the goal could never be met again. Archiving a points system a quest counts
or pays into is not refused: the goal counts no more points and the reward pays none, which the
consequences say. (An achievement a reward completes is held by its foreign key.)"""

from collections.abc import Iterable

from apps.achievements.models import Achievement
from apps.core.guards import Consequence, consequences_of
from apps.metrics.models import Metric
from apps.points.models import PointsSystem
from apps.quests.choices import GoalKind, Status
from apps.quests.models import Quest


def _naming(tenant_id: int, kind: str, field: str, public_id: str) -> list[Quest]:
    quests = Quest.objects.filter(tenant_id=tenant_id).exclude(status=Status.ARCHIVED)
    return [
        quest
        for quest in quests.order_by("name", "pk")
        if any(g.get("kind") == kind and g.get(field) == public_id for g in quest.goals)
    ]


@consequences_of("metric")
def metric_quests(metric: Metric) -> Iterable[Consequence]:
    return [
        Consequence(
            f"the quest {quest.name} counts it in a goal (archive the quest or change its goals "
            "first)",
            blocks=True,
        )
        for quest in _naming(metric.tenant_id, GoalKind.METRIC, "metric_id", str(metric.public_id))
    ]


@consequences_of("achievement")
def achievement_quests(achievement: Achievement) -> Iterable[Consequence]:
    public_id = str(achievement.public_id)
    return [
        Consequence(
            f"the quest {quest.name} counts it in a goal (archive the quest or change its goals "
            "first)",
            blocks=True,
        )
        for quest in _naming(
            achievement.tenant_id, GoalKind.ACHIEVEMENT, "achievement_id", public_id
        )
    ]


@consequences_of("points system")
def points_system_quests(system: PointsSystem) -> Iterable[Consequence]:
    public_id = str(system.public_id)
    counted = _naming(system.tenant_id, GoalKind.POINTS, "points_system_id", public_id)
    paying = Quest.objects.filter(reward_points_system=system).exclude(status=Status.ARCHIVED)
    return [
        *(Consequence(f"the quest {q.name} counts its points no more") for q in counted),
        *(
            Consequence(f"the quest {q.name} pays its reward points no more")
            for q in paying.order_by("name", "pk")
        ),
    ]
