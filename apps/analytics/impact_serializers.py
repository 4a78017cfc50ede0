"""Wire shapes of the Impact Score (GET /admin/ext/v1/analytics/impact), also the data of the
dashboard's Impact Score chart: each a `Shape` with its typed render below it. They render what
selectors/impact.py counted and analytics.domain estimated; no queries. Rates and differences
are percent and percentage points, rounded to one decimal as the summary line writes them
(and as the retention series round their percents)."""

from typing import Any

from rest_framework import serializers

from apps.analytics.choices import Verdict
from apps.analytics.domain import MIN_GROUP_USERS, Estimate, Share, estimate_summary
from apps.analytics.selectors import Impact, ImpactWeek, MetricImpact
from apps.core.api.shapes import Shape, renders


def _points(fraction: float | None) -> float | None:
    return None if fraction is None else round(100 * fraction, 1)


class ImpactGroup(Shape):
    users = serializers.IntegerField(help_text="Users of the group whose day 14 is over.")
    retained = serializers.IntegerField(help_text="Of them, active on any of days 8 to 14.")
    percent = serializers.FloatField(
        allow_null=True, help_text="retained / users in percent; null without users."
    )


@renders(ImpactGroup)
def impact_group_render(share: Share) -> dict[str, Any]:
    return {"users": share.users, "retained": share.retained, "percent": _points(share.rate)}


class ImpactScore(Shape):
    treated = ImpactGroup(help_text="Everyone not in the control group.")
    control = ImpactGroup(help_text="The control group (users with `control: true`).")
    difference = serializers.FloatField(
        allow_null=True,
        help_text="Treated minus control retention, in percentage points; null when a group "
        "is empty.",
    )
    low = serializers.FloatField(
        allow_null=True,
        help_text="Lower bound of the 95 % interval of the difference (Newcombe's hybrid score "
        "interval), in percentage points.",
    )
    high = serializers.FloatField(allow_null=True, help_text="Upper bound of that interval.")
    significant = serializers.BooleanField(
        help_text=f"The interval leaves out 0 and each group has at least {MIN_GROUP_USERS} users."
    )
    status = serializers.ChoiceField(
        choices=Verdict.values,
        help_text="significant; notSignificant (the interval contains 0); tooFewUsers (a group "
        f"has fewer than {MIN_GROUP_USERS} users, or none); noUsers (nobody has reached day 14).",
    )
    summary = serializers.CharField(help_text="The finding, or why there is none yet, in words.")


@renders(ImpactScore)
def impact_score_render(estimate: Estimate) -> dict[str, Any]:
    return {
        "treated": impact_group_render(estimate.treated),
        "control": impact_group_render(estimate.control),
        "difference": _points(estimate.difference),
        "low": _points(estimate.low),
        "high": _points(estimate.high),
        "significant": estimate.significant,
        "status": estimate.verdict.value,
        "summary": estimate_summary(estimate),
    }


class ImpactCohortWeek(Shape):
    week = serializers.DateField(help_text="The Sunday starting the cohort week.")
    score = ImpactScore()


@renders(ImpactCohortWeek)
def impact_cohort_week_render(week: ImpactWeek) -> dict[str, Any]:
    return {"week": week.week.isoformat(), "score": impact_score_render(week.estimate)}


class ImpactMetric(Shape):
    key = serializers.CharField()
    name = serializers.CharField()
    score = ImpactScore(help_text="Active meaning an event of this metric, over all the weeks.")


@renders(ImpactMetric)
def impact_metric_render(row: MetricImpact) -> dict[str, Any]:
    return {
        "key": row.metric.key,
        "name": row.metric.name,
        "score": impact_score_render(row.estimate),
    }


class AnalyticsImpact(Shape):
    """The Impact Score: the difference in day-14 retention between treated users and the
    control group, over the users who started (were created) in the cohort weeks. A user is
    retained when active (a metric event; of the one metric asked for, if any) on any of days 8
    to 14 after their start, the local date their record was created; only users whose day 14
    is over in their own time zone count."""

    fromWeek = serializers.DateField(help_text="The Sunday starting the first cohort week.")
    toWeek = serializers.DateField(help_text="The Sunday starting the last cohort week.")
    metric = serializers.CharField(
        allow_null=True, help_text="The metric whose events count as activity; null: any."
    )
    overall = ImpactScore(help_text="All the cohort weeks together.")
    weeks = ImpactCohortWeek(many=True, help_text="Every cohort week, oldest first.")
    metrics = ImpactMetric(many=True, help_text="Per metric of the tenant, all the weeks together.")


@renders(AnalyticsImpact)
def analytics_impact_render(impact: Impact) -> dict[str, Any]:
    return {
        "fromWeek": impact.first_week.isoformat(),
        "toWeek": impact.last_week.isoformat(),
        "metric": impact.metric.key if impact.metric else None,
        "overall": impact_score_render(impact.overall),
        "weeks": [impact_cohort_week_render(week) for week in impact.weeks],
        "metrics": [impact_metric_render(row) for row in impact.metrics],
    }
