"""Wire shapes of the analytics admin API, also the data of the dashboard's charts: each one
`Shape` (apps/core/api/shapes.py) that both documents and renders it. They render what
apps.analytics.selectors computed (definitions there); no queries. Decimal sums leave as JSON
numbers.

A ranged answer renders its series with, as context, its `DateRange` (`_Range`: start and end
come first). Rows that are no object of the selectors (a date with its counts) are tuples."""

from operator import attrgetter
from typing import Any, NamedTuple

from rest_framework import serializers

from apps.analytics.selectors import DateRange, MetricSeries, StreakActivity, StreakLengths
from apps.core.api.shapes import Getter, Shape, out
from apps.streaks.choices import Frequency


def _iso(attribute: str) -> Getter:
    return lambda obj, _: getattr(obj, attribute).isoformat()


def _each(shape: type[Shape], path: str = "") -> Getter:
    """The renders of the items at `path` of the object (of the object itself: "")."""
    items = attrgetter(path) if path else (lambda obj: obj)
    return lambda obj, _: [shape.render(item) for item in items(obj)]


def _column(index: int) -> Getter:
    return lambda row, _: row[index]


def _percent(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def _dates(period: DateRange) -> list[str]:
    return [day.isoformat() for day in period.days()]


class _Range(Shape):
    # No docstring: subclasses would inherit it as their component description.
    start = out(
        serializers.DateField(help_text="First local date of the range."),
        lambda _, period: period.start.isoformat(),
    )
    end = out(
        serializers.DateField(help_text="Last local date of the range (included)."),
        lambda _, period: period.end.isoformat(),
    )


class AnalyticsActiveUsersDay(Shape):
    # Renders an ActiveUsersDay.
    date = out(serializers.DateField(), _iso("date"))
    dau = serializers.IntegerField(help_text="Users with at least one metric event that day.")
    mau = serializers.IntegerField(help_text="Users active in the 30 days ending that day.")


class AnalyticsActiveUsers(_Range):
    """Daily and monthly active users of each day of the range."""

    # Renders the ActiveUsersDays of the range.
    days = out(AnalyticsActiveUsersDay(many=True), _each(AnalyticsActiveUsersDay))


class AnalyticsNewUsersDay(Shape):
    # Renders a DayCount.
    date = out(serializers.DateField(), _iso("date"))
    newUsers = out(
        serializers.IntegerField(help_text="Users created that local date (their zone)."),
        "count",
    )


class AnalyticsNewUsers(_Range):
    """Users created per day."""

    # Renders the DayCounts of the range.
    total = out(serializers.IntegerField(), lambda days, _: sum(d.count for d in days))
    days = out(AnalyticsNewUsersDay(many=True), _each(AnalyticsNewUsersDay))


class AnalyticsEventsDay(Shape):
    # Renders a (date, events) row.
    date = out(serializers.DateField(), _column(0))
    events = out(serializers.IntegerField(), _column(1))


class AnalyticsMetricDay(AnalyticsEventsDay):
    # Renders a (date, events, change) row.
    change = out(serializers.FloatField(help_text="The sum of the event values."), _column(2))


def _metric_days(s: MetricSeries, dates: list[str]) -> list[dict[str, Any]]:
    return [
        AnalyticsMetricDay.render((date, day.events, float(day.change)))
        for date, day in zip(dates, s.days, strict=True)
    ]


class AnalyticsMetric(Shape):
    # Renders a MetricSeries with, as context, the dates of the range.
    id = out(serializers.UUIDField(), "metric.public_id")
    key = out(serializers.CharField(), "metric.key")
    name = out(serializers.CharField(), "metric.name")
    units = out(serializers.CharField(allow_null=True), lambda s, _: s.metric.units or None)
    events = serializers.IntegerField(help_text="Events in the range.")
    change = out(
        serializers.FloatField(help_text="Sum of the values in the range."),
        lambda s, _: float(s.change),
    )
    days = out(AnalyticsMetricDay(many=True), _metric_days)


def _events_days(series: list[MetricSeries], period: DateRange) -> list[dict[str, Any]]:
    return [
        AnalyticsEventsDay.render((date, sum(s.days[index].events for s in series)))
        for index, date in enumerate(_dates(period))
    ]


def _metrics(series: list[MetricSeries], period: DateRange) -> list[dict[str, Any]]:
    dates = _dates(period)
    return [AnalyticsMetric.render(s, dates) for s in series]


class AnalyticsEvents(_Range):
    """Metric events per day (all metrics), and events and value sums per metric and day."""

    # Renders the MetricSeries of the range.
    days = out(AnalyticsEventsDay(many=True), _events_days)
    metrics = out(
        AnalyticsMetric(many=True, help_text="Every metric of the tenant, by key."),
        _metrics,
    )


class _RetentionWeek(Shape):
    # Renders a (week offset, active users, ...) row.
    week = out(
        serializers.IntegerField(help_text="Weeks after the cohort's week (0 = that week)."),
        _column(0),
    )
    activeUsers = out(serializers.IntegerField(), _column(1))


def _percent_field(get: Getter) -> Any:
    return out(
        serializers.FloatField(
            allow_null=True,
            help_text="Percent of the cohort active that week; null without users.",
        ),
        get,
    )


class AnalyticsRetentionWeek(_RetentionWeek):
    # Renders a (week offset, active users) row with, as context, the cohort group's users.
    percent = _percent_field(lambda row, users: _percent(row[1], users))


class AnalyticsRetentionAverageWeek(_RetentionWeek):
    # Renders a (week offset, active users, users) row.
    users = out(
        serializers.IntegerField(help_text="Users of the cohorts that reached this week."),
        _column(2),
    )
    percent = _percent_field(lambda row, _: _percent(row[1], row[2]))


class AnalyticsCohortGroup(Shape):
    # Renders a CohortGroup.
    users = serializers.IntegerField()
    weeks = out(
        AnalyticsRetentionWeek(many=True, help_text="The weeks begun by the range's end."),
        lambda g, _: [AnalyticsRetentionWeek.render(row, g.users) for row in enumerate(g.active)],
    )


def _cohort_group(attribute: str, help_text: str) -> Any:
    return out(
        AnalyticsCohortGroup(help_text=help_text),
        lambda c, _: AnalyticsCohortGroup.render(getattr(c, attribute)),
    )


class AnalyticsCohort(Shape):
    # Renders a Cohort.
    week = out(
        serializers.DateField(help_text="The Sunday starting the cohort's week."), _iso("week")
    )
    control = _cohort_group("control", "Users in the control group.")
    treatment = _cohort_group("treatment", "Every other user.")


def _average(control: bool) -> Getter:
    return lambda report, _: [
        AnalyticsRetentionAverageWeek.render((offset, active, users))
        for offset, (active, users) in enumerate(report.average(control=control))
    ]


class AnalyticsRetentionAverage(Shape):
    # Renders a Retention.
    control = out(AnalyticsRetentionAverageWeek(many=True), _average(True))
    treatment = out(AnalyticsRetentionAverageWeek(many=True), _average(False))


class AnalyticsRetention(_Range):
    """Weekly retention of the users who started (were created) in the range, by the week they
    started, control group apart."""

    # Renders a Retention.
    weeks = serializers.IntegerField(help_text="The largest week offset reported (at most 12).")
    average = out(
        AnalyticsRetentionAverage(help_text="All cohorts together, per week offset."),
        lambda report, _: AnalyticsRetentionAverage.render(report),
    )
    cohorts = out(
        AnalyticsCohort(many=True, help_text="Oldest first."), _each(AnalyticsCohort, "cohorts")
    )


class AnalyticsStreakBucket(Shape):
    # Renders a LengthBucket.
    bucket = out(serializers.CharField(help_text="1, 2-3, ... 366+ periods."), "label")
    min = out(serializers.IntegerField(), "low")
    max = out(serializers.IntegerField(allow_null=True), "high")
    users = serializers.IntegerField()


class AnalyticsStreakPeriod(Shape):
    # Renders a StreakPeriodCount.
    periodStart = out(serializers.DateField(), _iso("start"))
    periodEnd = out(serializers.DateField(), _iso("end"))
    activeStreaks = out(
        serializers.IntegerField(help_text="Streaks extended, frozen or paused in the period."),
        "streaks",
    )


class StreakReport(NamedTuple):
    """What AnalyticsStreaks renders: the current lengths and the activity of the range."""

    lengths: StreakLengths
    activity: StreakActivity


class AnalyticsStreaks(_Range):
    """Current streak lengths (now) and active streaks per period of the range."""

    # Renders a StreakReport.
    frequency = out(serializers.ChoiceField(choices=Frequency.choices), "lengths.frequency")
    users = out(serializers.IntegerField(help_text="Every user of the tenant."), "lengths.users")
    usersWithStreak = out(serializers.IntegerField(), "lengths.with_streak")
    lengths = out(
        AnalyticsStreakBucket(many=True, help_text="Live streaks by current length."),
        _each(AnalyticsStreakBucket, "lengths.buckets"),
    )
    periods = out(
        AnalyticsStreakPeriod(many=True), _each(AnalyticsStreakPeriod, "activity.periods")
    )


class AnalyticsPointsDay(Shape):
    # Renders a PointsDay.
    date = out(serializers.DateField(), _iso("date"))
    points = serializers.IntegerField(help_text="Net points awarded that day.")
    byTriggerType = serializers.DictField(
        child=serializers.IntegerField(), help_text="By trigger type (triggerTypes)."
    )


class AnalyticsLevel(Shape):
    # Renders a LevelCount.
    key = serializers.CharField(allow_null=True, help_text="null: below every level.")
    name = serializers.CharField()
    points = serializers.IntegerField()
    users = serializers.IntegerField()


class AnalyticsPointsSystem(Shape):
    # Renders a SystemPoints.
    id = out(serializers.UUIDField(), "system.public_id")
    key = out(serializers.CharField(), "system.key")
    name = out(serializers.CharField(), "system.name")
    points = out(
        serializers.IntegerField(help_text="Net points awarded in the range."),
        lambda s, _: sum(day.points for day in s.days),
    )
    triggerTypes = serializers.ListField(child=serializers.CharField())
    days = out(AnalyticsPointsDay(many=True), _each(AnalyticsPointsDay, "days"))
    levels = out(
        AnalyticsLevel(many=True, help_text="Users per level now; empty without levels."),
        _each(AnalyticsLevel, "levels"),
    )


class AnalyticsPoints(_Range):
    """Points awarded per day and trigger type, and users per level, of each active system."""

    # Renders the SystemPoints of the range.
    systems = out(AnalyticsPointsSystem(many=True), _each(AnalyticsPointsSystem))


class AnalyticsCompletionsDay(Shape):
    # Renders a CompletionDay.
    date = out(
        serializers.DateField(help_text="The server's date (completions carry an instant)."),
        _iso("date"),
    )
    completions = serializers.IntegerField()
    backdated = serializers.IntegerField(help_text="Of which completed by backdating.")


class AnalyticsAchievement(Shape):
    # Renders an AchievementRarity.
    id = out(serializers.UUIDField(), "achievement.public_id")
    key = out(serializers.CharField(allow_null=True), "achievement.key")
    name = out(serializers.CharField(), "achievement.name")
    status = out(serializers.CharField(), "achievement.status")
    trigger = out(serializers.CharField(), "achievement.trigger")
    completions = serializers.IntegerField(help_text="Ever.")
    completionsInRange = out(serializers.IntegerField(), "in_range")
    rarity = serializers.FloatField(help_text="Percent of the tenant's users who completed it.")


class AnalyticsAchievements(_Range):
    """Achievement completions per day, and completions and rarity per achievement."""

    # Renders an AchievementsSummary.
    users = serializers.IntegerField()
    days = out(AnalyticsCompletionsDay(many=True), _each(AnalyticsCompletionsDay, "days"))
    achievements = out(AnalyticsAchievement(many=True), _each(AnalyticsAchievement, "achievements"))


class AnalyticsRun(Shape):
    # Renders a Run.
    start = out(serializers.DateField(), _iso("start"))
    end = out(
        serializers.DateField(allow_null=True, help_text="null: the run never ends."),
        lambda run, _: run.end.isoformat() if run.end else None,
    )
    participants = serializers.IntegerField()


class AnalyticsLeaderboard(Shape):
    # Renders a BoardParticipation.
    id = out(serializers.UUIDField(), "board.public_id")
    key = out(serializers.CharField(), "board.key")
    name = out(serializers.CharField(), "board.name")
    status = out(serializers.CharField(), "board.status")
    rankBy = out(serializers.CharField(), "board.rank_by")
    currentRun = out(
        AnalyticsRun(
            allow_null=True,
            help_text="The run holding today (active boards), else the last run with participants.",
        ),
        lambda b, _: AnalyticsRun.render(b.current) if b.current else None,
    )
    runs = out(
        AnalyticsRun(many=True, help_text="Runs with participants overlapping the range."),
        _each(AnalyticsRun, "runs"),
    )


class AnalyticsLeaderboards(_Range):
    """Participants per leaderboard run."""

    # Renders the BoardParticipations of the range.
    leaderboards = out(AnalyticsLeaderboard(many=True), _each(AnalyticsLeaderboard))


class AnalyticsOverview(Shape):
    """The tenant at a glance, as of today (the server's date)."""

    # Renders an Overview.
    date = out(serializers.DateField(), _iso("date"))
    users = serializers.IntegerField()
    dau = serializers.IntegerField()
    mau = serializers.IntegerField()
    days = out(
        AnalyticsEventsDay(many=True, help_text="Events per day, the last 7 days."),
        lambda report, _: [
            AnalyticsEventsDay.render((d.date.isoformat(), d.count)) for d in report.events
        ],
    )
