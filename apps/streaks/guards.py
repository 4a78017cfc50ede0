"""What deleting a metric does to the streak (apps/core/guards.py): its condition on the metric
goes with it; when it is the only one and users hold a streak, nobody could extend theirs
again, so the delete is refused (domain.conditionless_problem, the rule the settings apply)."""

from collections.abc import Iterable

from apps.core.guards import Consequence, consequences_of
from apps.core.wording import counted
from apps.metrics.models import Metric
from apps.streaks import domain
from apps.streaks.models import StreakCondition, StreakSettings
from apps.streaks.selectors import streaking_users


@consequences_of("metric")
def metric_condition(metric: Metric) -> Iterable[Consequence]:
    conditions = list(
        StreakCondition.objects.filter(tenant_id=metric.tenant_id).values_list(
            "metric_id", flat=True
        )
    )
    if metric.pk not in conditions:
        return []
    if len(conditions) > 1:
        return [Consequence(f"the streak no longer counts {metric.name}")]
    customizable = StreakSettings.objects.filter(
        tenant_id=metric.tenant_id, customization_enabled=True
    ).exists()
    streaking = streaking_users(metric.tenant)
    if domain.conditionless_problem(0, customizable, streaking) is None:
        return [Consequence("the streak loses its only condition: nobody extends a streak")]
    return [
        Consequence(
            f"it is the streak's only condition, and the streaks of "
            f"{counted(streaking, 'user')} could no longer be extended: add another metric to "
            "the streak settings first",
            blocks=True,
        )
    ]
