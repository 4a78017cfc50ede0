"""Wire shapes of the analytics admin API, also the data of the dashboard's charts: each one
`Shape` (apps/core/api/shapes.py) that documents it, and below it the typed function that
renders it (`@renders`). They render what apps.analytics.selectors computed (definitions
there); no queries. Decimal sums leave as JSON numbers.

A ranged answer is rendered from the selector's result and its `DateRange` (`_Range`: start and
end come first)."""

from typing import Any, NamedTuple

from rest_framework import serializers

from apps.analytics.selectors import (
    AchievementRarity,
    AchievementsSummary,
    ActiveUsersDay,
    BoardParticipation,
    Cohort,
    CohortGroup,
    CompletionDay,
    DateRange,
    DayCount,
    LengthBucket,
    LevelCount,
    MetricDay,
    MetricSeries,
    Overview,
    PointsDay,
    Retention,
    Run,
    StreakActivity,
    StreakLengths,
    StreakPeriodCount,
    SystemPoints,
)
from apps.core.api.shapes import Shape, renders
from apps.streaks.choices import Frequency


def _percent(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def _dates(period: DateRange) -> list[str]:
    return [day.isoformat() for day in period.days()]


class _Range(Shape):
    # No docstring: subclasses would inherit it as their component description.
    start = serializers.DateField(help_text="First local date of the range.")
    end = serializers.DateField(help_text="Last local date of the range (included).")


class AnalyticsActiveUsersDay(Shape):
    date = serializers.DateField()
    dau = serializers.IntegerField(help_text="Users with at least one metric event that day.")
    mau = serializers.IntegerField(help_text="Users active in the 30 days ending that day.")


@renders(AnalyticsActiveUsersDay)
def analytics_active_users_day_render(day: ActiveUsersDay) -> dict[str, Any]:
    return {"date": day.date.isoformat(), "dau": day.dau, "mau": day.mau}


class AnalyticsActiveUsers(_Range):
    """Daily and monthly active users of each day of the range."""

    days = AnalyticsActiveUsersDay(many=True)


@renders(AnalyticsActiveUsers)
def analytics_active_users_render(days: list[ActiveUsersDay], period: DateRange) -> dict[str, Any]:
    return {
        "start": period.start.isoformat(),
        "end": period.end.isoformat(),
        "days": [analytics_active_users_day_render(day) for day in days],
    }


class AnalyticsNewUsersDay(Shape):
    date = serializers.DateField()
    newUsers = serializers.IntegerField(help_text="Users created that local date (their zone).")


@renders(AnalyticsNewUsersDay)
def analytics_new_users_day_render(day: DayCount) -> dict[str, Any]:
    return {"date": day.date.isoformat(), "newUsers": day.count}


class AnalyticsNewUsers(_Range):
    """Users created per day."""

    total = serializers.IntegerField()
    days = AnalyticsNewUsersDay(many=True)


@renders(AnalyticsNewUsers)
def analytics_new_users_render(days: list[DayCount], period: DateRange) -> dict[str, Any]:
    return {
        "start": period.start.isoformat(),
        "end": period.end.isoformat(),
        "total": sum(day.count for day in days),
        "days": [analytics_new_users_day_render(day) for day in days],
    }


class AnalyticsEventsDay(Shape):
    date = serializers.DateField()
    events = serializers.IntegerField()


@renders(AnalyticsEventsDay)
def analytics_events_day_render(date: str, events: int) -> dict[str, Any]:
    return {"date": date, "events": events}


class AnalyticsMetricDay(AnalyticsEventsDay):
    change = serializers.FloatField(help_text="The sum of the event values.")


@renders(AnalyticsMetricDay)
def analytics_metric_day_render(date: str, day: MetricDay) -> dict[str, Any]:
    return {"date": date, "events": day.events, "change": float(day.change)}


class AnalyticsMetric(Shape):
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    units = serializers.CharField(allow_null=True)
    events = serializers.IntegerField(help_text="Events in the range.")
    change = serializers.FloatField(help_text="Sum of the values in the range.")
    days = AnalyticsMetricDay(many=True)


@renders(AnalyticsMetric)
def analytics_metric_render(series: MetricSeries, dates: list[str]) -> dict[str, Any]:
    """`series` of the range whose local dates are `dates`."""
    metric = series.metric
    return {
        "id": metric.public_id,
        "key": metric.key,
        "name": metric.name,
        "units": metric.units or None,
        "events": series.events,
        "change": float(series.change),
        "days": [
            analytics_metric_day_render(date, day)
            for date, day in zip(dates, series.days, strict=True)
        ],
    }


class AnalyticsEvents(_Range):
    """Metric events per day (all metrics), and events and value sums per metric and day."""

    days = AnalyticsEventsDay(many=True)
    metrics = AnalyticsMetric(many=True, help_text="Every metric of the tenant, by key.")


@renders(AnalyticsEvents)
def analytics_events_render(series: list[MetricSeries], period: DateRange) -> dict[str, Any]:
    dates = _dates(period)
    return {
        "start": period.start.isoformat(),
        "end": period.end.isoformat(),
        "days": [
            analytics_events_day_render(date, sum(s.days[index].events for s in series))
            for index, date in enumerate(dates)
        ],
        "metrics": [analytics_metric_render(s, dates) for s in series],
    }


class _RetentionWeek(Shape):
    week = serializers.IntegerField(help_text="Weeks after the cohort's week (0 = that week).")
    activeUsers = serializers.IntegerField()


def _percent_field() -> Any:
    return serializers.FloatField(
        allow_null=True, help_text="Percent of the cohort active that week; null without users."
    )


class AnalyticsRetentionWeek(_RetentionWeek):
    percent = _percent_field()


@renders(AnalyticsRetentionWeek)
def analytics_retention_week_render(week: int, active: int, users: int) -> dict[str, Any]:
    """Week offset `week` of a cohort group of `users` users, `active` of them active in it."""
    return {"week": week, "activeUsers": active, "percent": _percent(active, users)}


class AnalyticsRetentionAverageWeek(_RetentionWeek):
    users = serializers.IntegerField(help_text="Users of the cohorts that reached this week.")
    percent = _percent_field()


@renders(AnalyticsRetentionAverageWeek)
def analytics_retention_average_week_render(week: int, active: int, users: int) -> dict[str, Any]:
    return {"week": week, "activeUsers": active, "users": users, "percent": _percent(active, users)}


class AnalyticsCohortGroup(Shape):
    users = serializers.IntegerField()
    weeks = AnalyticsRetentionWeek(many=True, help_text="The weeks begun by the range's end.")


@renders(AnalyticsCohortGroup)
def analytics_cohort_group_render(group: CohortGroup) -> dict[str, Any]:
    return {
        "users": group.users,
        "weeks": [
            analytics_retention_week_render(week, active, group.users)
            for week, active in enumerate(group.active)
        ],
    }


class AnalyticsCohort(Shape):
    week = serializers.DateField(help_text="The Sunday starting the cohort's week.")
    control = AnalyticsCohortGroup(help_text="Users in the control group.")
    treatment = AnalyticsCohortGroup(help_text="Every other user.")


@renders(AnalyticsCohort)
def analytics_cohort_render(cohort: Cohort) -> dict[str, Any]:
    return {
        "week": cohort.week.isoformat(),
        "control": analytics_cohort_group_render(cohort.control),
        "treatment": analytics_cohort_group_render(cohort.treatment),
    }


class AnalyticsRetentionAverage(Shape):
    control = AnalyticsRetentionAverageWeek(many=True)
    treatment = AnalyticsRetentionAverageWeek(many=True)


def _average_weeks(report: Retention, control: bool) -> list[dict[str, Any]]:
    return [
        analytics_retention_average_week_render(week, active, users)
        for week, (active, users) in enumerate(report.average(control=control))
    ]


@renders(AnalyticsRetentionAverage)
def analytics_retention_average_render(report: Retention) -> dict[str, Any]:
    return {"control": _average_weeks(report, True), "treatment": _average_weeks(report, False)}


class AnalyticsRetention(_Range):
    """Weekly retention of the users who started (were created) in the range, by the week they
    started, control group apart."""

    weeks = serializers.IntegerField(help_text="The largest week offset reported (at most 12).")
    average = AnalyticsRetentionAverage(help_text="All cohorts together, per week offset.")
    cohorts = AnalyticsCohort(many=True, help_text="Oldest first.")


@renders(AnalyticsRetention)
def analytics_retention_render(report: Retention, period: DateRange) -> dict[str, Any]:
    return {
        "start": period.start.isoformat(),
        "end": period.end.isoformat(),
        "weeks": report.weeks,
        "average": analytics_retention_average_render(report),
        "cohorts": [analytics_cohort_render(cohort) for cohort in report.cohorts],
    }


class AnalyticsStreakBucket(Shape):
    bucket = serializers.CharField(help_text="1, 2-3, ... 366+ periods.")
    min = serializers.IntegerField()
    max = serializers.IntegerField(allow_null=True)
    users = serializers.IntegerField()


@renders(AnalyticsStreakBucket)
def analytics_streak_bucket_render(bucket: LengthBucket) -> dict[str, Any]:
    return {"bucket": bucket.label, "min": bucket.low, "max": bucket.high, "users": bucket.users}


class AnalyticsStreakPeriod(Shape):
    periodStart = serializers.DateField()
    periodEnd = serializers.DateField()
    activeStreaks = serializers.IntegerField(
        help_text="Streaks extended, frozen or paused in the period."
    )


@renders(AnalyticsStreakPeriod)
def analytics_streak_period_render(period: StreakPeriodCount) -> dict[str, Any]:
    return {
        "periodStart": period.start.isoformat(),
        "periodEnd": period.end.isoformat(),
        "activeStreaks": period.streaks,
    }


class StreakReport(NamedTuple):
    """What AnalyticsStreaks renders: the current lengths and the activity of the range."""

    lengths: StreakLengths
    activity: StreakActivity


class AnalyticsStreaks(_Range):
    """Current streak lengths (now) and active streaks per period of the range."""

    frequency = serializers.ChoiceField(choices=Frequency.choices)
    users = serializers.IntegerField(help_text="Every user of the tenant.")
    usersWithStreak = serializers.IntegerField()
    lengths = AnalyticsStreakBucket(many=True, help_text="Live streaks by current length.")
    periods = AnalyticsStreakPeriod(many=True)


@renders(AnalyticsStreaks)
def analytics_streaks_render(report: StreakReport, period: DateRange) -> dict[str, Any]:
    lengths = report.lengths
    return {
        "start": period.start.isoformat(),
        "end": period.end.isoformat(),
        "frequency": lengths.frequency,
        "users": lengths.users,
        "usersWithStreak": lengths.with_streak,
        "lengths": [analytics_streak_bucket_render(bucket) for bucket in lengths.buckets],
        "periods": [analytics_streak_period_render(p) for p in report.activity.periods],
    }


class AnalyticsPointsDay(Shape):
    date = serializers.DateField()
    points = serializers.IntegerField(help_text="Net points awarded that day.")
    byTriggerType = serializers.DictField(
        child=serializers.IntegerField(), help_text="By trigger type (triggerTypes)."
    )


@renders(AnalyticsPointsDay)
def analytics_points_day_render(day: PointsDay) -> dict[str, Any]:
    return {
        "date": day.date.isoformat(),
        "points": day.points,
        "byTriggerType": day.by_trigger_type,
    }


class AnalyticsLevel(Shape):
    key = serializers.CharField(allow_null=True, help_text="null: below every level.")
    name = serializers.CharField()
    points = serializers.IntegerField()
    users = serializers.IntegerField()


@renders(AnalyticsLevel)
def analytics_level_render(level: LevelCount) -> dict[str, Any]:
    return {"key": level.key, "name": level.name, "points": level.points, "users": level.users}


class AnalyticsPointsSystem(Shape):
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    points = serializers.IntegerField(help_text="Net points awarded in the range.")
    triggerTypes = serializers.ListField(child=serializers.CharField())
    days = AnalyticsPointsDay(many=True)
    levels = AnalyticsLevel(many=True, help_text="Users per level now; empty without levels.")


@renders(AnalyticsPointsSystem)
def analytics_points_system_render(summary: SystemPoints) -> dict[str, Any]:
    system = summary.system
    return {
        "id": system.public_id,
        "key": system.key,
        "name": system.name,
        "points": sum(day.points for day in summary.days),
        "triggerTypes": summary.trigger_types,
        "days": [analytics_points_day_render(day) for day in summary.days],
        "levels": [analytics_level_render(level) for level in summary.levels],
    }


class AnalyticsPoints(_Range):
    """Points awarded per day and trigger type, and users per level, of each active system."""

    systems = AnalyticsPointsSystem(many=True)


@renders(AnalyticsPoints)
def analytics_points_render(systems: list[SystemPoints], period: DateRange) -> dict[str, Any]:
    return {
        "start": period.start.isoformat(),
        "end": period.end.isoformat(),
        "systems": [analytics_points_system_render(summary) for summary in systems],
    }


class AnalyticsCompletionsDay(Shape):
    date = serializers.DateField(
        help_text="The tenant's reporting-zone date (completions carry an instant)."
    )
    completions = serializers.IntegerField()
    backdated = serializers.IntegerField(help_text="Of which completed by backdating.")


@renders(AnalyticsCompletionsDay)
def analytics_completions_day_render(day: CompletionDay) -> dict[str, Any]:
    return {
        "date": day.date.isoformat(),
        "completions": day.completions,
        "backdated": day.backdated,
    }


class AnalyticsAchievement(Shape):
    id = serializers.UUIDField()
    key = serializers.CharField(allow_null=True)
    name = serializers.CharField()
    status = serializers.CharField()
    trigger = serializers.CharField()
    completions = serializers.IntegerField(help_text="Ever.")
    completionsInRange = serializers.IntegerField()
    rarity = serializers.FloatField(help_text="Percent of the tenant's users who completed it.")


@renders(AnalyticsAchievement)
def analytics_achievement_render(item: AchievementRarity) -> dict[str, Any]:
    achievement = item.achievement
    return {
        "id": achievement.public_id,
        "key": achievement.key,
        "name": achievement.name,
        "status": achievement.status,
        "trigger": achievement.trigger,
        "completions": item.completions,
        "completionsInRange": item.in_range,
        "rarity": item.rarity,
    }


class AnalyticsAchievements(_Range):
    """Achievement completions per day, and completions and rarity per achievement."""

    users = serializers.IntegerField()
    days = AnalyticsCompletionsDay(many=True)
    achievements = AnalyticsAchievement(many=True)


@renders(AnalyticsAchievements)
def analytics_achievements_render(
    summary: AchievementsSummary, period: DateRange
) -> dict[str, Any]:
    return {
        "start": period.start.isoformat(),
        "end": period.end.isoformat(),
        "users": summary.users,
        "days": [analytics_completions_day_render(day) for day in summary.days],
        "achievements": [analytics_achievement_render(item) for item in summary.achievements],
    }


class AnalyticsRun(Shape):
    start = serializers.DateField()
    end = serializers.DateField(allow_null=True, help_text="null: the run never ends.")
    participants = serializers.IntegerField()


@renders(AnalyticsRun)
def analytics_run_render(run: Run) -> dict[str, Any]:
    return {
        "start": run.start.isoformat(),
        "end": run.end.isoformat() if run.end else None,
        "participants": run.participants,
    }


class AnalyticsLeaderboard(Shape):
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    status = serializers.CharField()
    rankBy = serializers.CharField()
    currentRun = AnalyticsRun(
        allow_null=True,
        help_text="The run holding today (active boards), else the last run with participants.",
    )
    runs = AnalyticsRun(many=True, help_text="Runs with participants overlapping the range.")


@renders(AnalyticsLeaderboard)
def analytics_leaderboard_render(participation: BoardParticipation) -> dict[str, Any]:
    board = participation.board
    current = participation.current
    return {
        "id": board.public_id,
        "key": board.key,
        "name": board.name,
        "status": board.status,
        "rankBy": board.rank_by,
        "currentRun": analytics_run_render(current) if current else None,
        "runs": [analytics_run_render(run) for run in participation.runs],
    }


class AnalyticsLeaderboards(_Range):
    """Participants per leaderboard run."""

    leaderboards = AnalyticsLeaderboard(many=True)


@renders(AnalyticsLeaderboards)
def analytics_leaderboards_render(
    boards: list[BoardParticipation], period: DateRange
) -> dict[str, Any]:
    return {
        "start": period.start.isoformat(),
        "end": period.end.isoformat(),
        "leaderboards": [analytics_leaderboard_render(board) for board in boards],
    }


class AnalyticsOverview(Shape):
    """The tenant at a glance, as of today (the tenant's reporting-zone date)."""

    date = serializers.DateField()
    users = serializers.IntegerField()
    dau = serializers.IntegerField()
    mau = serializers.IntegerField()
    days = AnalyticsEventsDay(many=True, help_text="Events per day, the last 7 days.")


@renders(AnalyticsOverview)
def analytics_overview_render(report: Overview) -> dict[str, Any]:
    return {
        "date": report.date.isoformat(),
        "users": report.users,
        "dau": report.dau,
        "mau": report.mau,
        "days": [analytics_events_day_render(d.date.isoformat(), d.count) for d in report.events],
    }
