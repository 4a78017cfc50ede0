"""OpenAPI documentation of the analytics admin API (documentation only): the shapes
apps.analytics.admin_serializers emits. Definitions are those of apps.analytics.selectors."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.analytics.selectors import MAX_RANGE_DAYS
from apps.streaks.choices import Frequency

RANGE = OpenApiParameter(
    "range",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    enum=["7d", "30d", "90d", "all"],
    description="The days ending today (the server's date): 7, 30 (the default) or 90 days, or "
    f"all since the tenant's first day (at most the last {MAX_RANGE_DAYS} days). Not with start.",
)
START = OpenApiParameter(
    "start",
    OpenApiTypes.DATE,
    OpenApiParameter.QUERY,
    description="First local date of an explicit range (YYYY-MM-DD); instead of range.",
)
END = OpenApiParameter(
    "end",
    OpenApiTypes.DATE,
    OpenApiParameter.QUERY,
    description=f"Last local date of an explicit range, included (default today); needs start. "
    f"The range spans at most {MAX_RANGE_DAYS} days.",
)
RANGE_PARAMETERS = [RANGE, START, END]
RANGE_ERRORS = (
    "range is not one of 7d, 30d, 90d, all; a date is malformed; end without start; range "
    "together with start; start after end; or a span over the limit."
)


class _Range(serializers.Serializer):
    # No docstring: subclasses would inherit it as their component description.
    start = serializers.DateField(help_text="First local date of the range.")
    end = serializers.DateField(help_text="Last local date of the range (included).")


class AnalyticsActiveUsersDay(serializers.Serializer):
    date = serializers.DateField()
    dau = serializers.IntegerField(help_text="Users with at least one metric event that day.")
    mau = serializers.IntegerField(help_text="Users active in the 30 days ending that day.")


class AnalyticsActiveUsers(_Range):
    """Daily and monthly active users of each day of the range."""

    days = AnalyticsActiveUsersDay(many=True)


class AnalyticsNewUsersDay(serializers.Serializer):
    date = serializers.DateField()
    newUsers = serializers.IntegerField(help_text="Users created that local date (their zone).")


class AnalyticsNewUsers(_Range):
    """Users created per day."""

    total = serializers.IntegerField()
    days = AnalyticsNewUsersDay(many=True)


class AnalyticsEventsDay(serializers.Serializer):
    date = serializers.DateField()
    events = serializers.IntegerField()


class AnalyticsMetricDay(AnalyticsEventsDay):
    change = serializers.FloatField(help_text="The sum of the event values.")


class AnalyticsMetric(serializers.Serializer):
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    units = serializers.CharField(allow_null=True)
    events = serializers.IntegerField(help_text="Events in the range.")
    change = serializers.FloatField(help_text="Sum of the values in the range.")
    days = AnalyticsMetricDay(many=True)


class AnalyticsEvents(_Range):
    """Metric events per day (all metrics), and events and value sums per metric and day."""

    days = AnalyticsEventsDay(many=True)
    metrics = AnalyticsMetric(many=True, help_text="Every metric of the tenant, by key.")


class AnalyticsRetentionWeek(serializers.Serializer):
    week = serializers.IntegerField(help_text="Weeks after the cohort's week (0 = that week).")
    activeUsers = serializers.IntegerField()
    percent = serializers.FloatField(
        allow_null=True, help_text="Percent of the cohort active that week; null without users."
    )


class AnalyticsRetentionAverageWeek(AnalyticsRetentionWeek):
    users = serializers.IntegerField(help_text="Users of the cohorts that reached this week.")


class AnalyticsCohortGroup(serializers.Serializer):
    users = serializers.IntegerField()
    weeks = AnalyticsRetentionWeek(many=True, help_text="The weeks begun by the range's end.")


class AnalyticsCohort(serializers.Serializer):
    week = serializers.DateField(help_text="The Sunday starting the cohort's week.")
    control = AnalyticsCohortGroup(help_text="Users in the control group.")
    treatment = AnalyticsCohortGroup(help_text="Every other user.")


class AnalyticsRetentionAverage(serializers.Serializer):
    control = AnalyticsRetentionAverageWeek(many=True)
    treatment = AnalyticsRetentionAverageWeek(many=True)


class AnalyticsRetention(_Range):
    """Weekly retention of the users who started (were created) in the range, by the week they
    started, control group apart."""

    weeks = serializers.IntegerField(help_text="The largest week offset reported (at most 12).")
    average = AnalyticsRetentionAverage(help_text="All cohorts together, per week offset.")
    cohorts = AnalyticsCohort(many=True, help_text="Oldest first.")


class AnalyticsStreakBucket(serializers.Serializer):
    bucket = serializers.CharField(help_text="1, 2-3, ... 366+ periods.")
    min = serializers.IntegerField()
    max = serializers.IntegerField(allow_null=True)
    users = serializers.IntegerField()


class AnalyticsStreakPeriod(serializers.Serializer):
    periodStart = serializers.DateField()
    periodEnd = serializers.DateField()
    activeStreaks = serializers.IntegerField(
        help_text="Streaks extended, frozen or paused in the period."
    )


class AnalyticsStreaks(_Range):
    """Current streak lengths (now) and active streaks per period of the range."""

    frequency = serializers.ChoiceField(choices=Frequency.choices)
    users = serializers.IntegerField(help_text="Every user of the tenant.")
    usersWithStreak = serializers.IntegerField()
    lengths = AnalyticsStreakBucket(many=True, help_text="Live streaks by current length.")
    periods = AnalyticsStreakPeriod(many=True)


class AnalyticsPointsDay(serializers.Serializer):
    date = serializers.DateField()
    points = serializers.IntegerField(help_text="Net points awarded that day.")
    byTriggerType = serializers.DictField(
        child=serializers.IntegerField(), help_text="By trigger type (triggerTypes)."
    )


class AnalyticsLevel(serializers.Serializer):
    key = serializers.CharField(allow_null=True, help_text="null: below every level.")
    name = serializers.CharField()
    points = serializers.IntegerField()
    users = serializers.IntegerField()


class AnalyticsPointsSystem(serializers.Serializer):
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    points = serializers.IntegerField(help_text="Net points awarded in the range.")
    triggerTypes = serializers.ListField(child=serializers.CharField())
    days = AnalyticsPointsDay(many=True)
    levels = AnalyticsLevel(many=True, help_text="Users per level now; empty without levels.")


class AnalyticsPoints(_Range):
    """Points awarded per day and trigger type, and users per level, of each active system."""

    systems = AnalyticsPointsSystem(many=True)


class AnalyticsCompletionsDay(serializers.Serializer):
    date = serializers.DateField(help_text="The server's date (completions carry an instant).")
    completions = serializers.IntegerField()
    backdated = serializers.IntegerField(help_text="Of which completed by backdating.")


class AnalyticsAchievement(serializers.Serializer):
    id = serializers.UUIDField()
    key = serializers.CharField(allow_null=True)
    name = serializers.CharField()
    status = serializers.CharField()
    trigger = serializers.CharField()
    completions = serializers.IntegerField(help_text="Ever.")
    completionsInRange = serializers.IntegerField()
    rarity = serializers.FloatField(help_text="Percent of the tenant's users who completed it.")


class AnalyticsAchievements(_Range):
    """Achievement completions per day, and completions and rarity per achievement."""

    users = serializers.IntegerField()
    days = AnalyticsCompletionsDay(many=True)
    achievements = AnalyticsAchievement(many=True)


class AnalyticsRun(serializers.Serializer):
    start = serializers.DateField()
    end = serializers.DateField(allow_null=True, help_text="null: the run never ends.")
    participants = serializers.IntegerField()


class AnalyticsLeaderboard(serializers.Serializer):
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


class AnalyticsLeaderboards(_Range):
    """Participants per leaderboard run."""

    leaderboards = AnalyticsLeaderboard(many=True)


class AnalyticsOverview(serializers.Serializer):
    """The tenant at a glance, as of today (the server's date)."""

    date = serializers.DateField()
    users = serializers.IntegerField()
    dau = serializers.IntegerField()
    mau = serializers.IntegerField()
    days = AnalyticsEventsDay(many=True, help_text="Events per day, the last 7 days.")
