"""Reads behind the dashboard's analytics: a tenant's series over a range of local dates.

Every series comes from rollups and state tables (the metric daily rollup, the points ledger,
streak state and periods, completions, leaderboard entries), never from a scan of raw events,
so a page costs a bounded number of aggregate queries whatever the tenant's event volume.

Definitions (they are also the dashboard's and the admin API's documentation):
- *Today* is the tenant's reporting-zone date (`Tenant.reporting_tz`, set on the tenant's
  dashboard page; UTC by default), and named ranges end on it (selectors.ranges). The home
  page, the analytics page and the admin analytics API read it the same way.
- *Per user-local date*: the metric daily rollup, the points ledger and streak periods are
  keyed by the user's own local date, so events, active users (DAU, MAU), new users,
  retention, points per day and active streaks count a row on the date the user had when it
  happened. At 23:40 UTC, a user in Pacific/Kiritimati is already on the next date: their
  events since their midnight are on tomorrow's bar, not today's (the home page says how
  many). Achievement completions carry only an instant: they are counted on the reporting
  zone's dates. Live streaks, levels and leaderboard participation are counted now.
- A user is *active* on a local date when they recorded at least one metric event that day: a
  row of the metric daily rollup exists for them (in the user's time zone, as the rollup is).
- *MAU* of a day: distinct users active in the 30 days ending that day (inclusive).
- A user's *start* is the local date (in their time zone) their record was created; retention
  cohorts are the Sunday-to-Saturday weeks of that date, and week offset k of a cohort is the
  k-th week after it (0 = the week they started). A cohort's share at offset k is the percent of
  its users active at least once in that week; control-group users are counted apart.
- A *live streak* is one the streak endpoint would show as longer than 0 right now (missed
  periods settled with the user's freezes and pauses, as the streak reads do).
- *Active streaks* of a period: users whose streak was extended, frozen or paused in that
  period (their stored streak period row); days off leave no row, so a daily streak with days
  off dips on those days.

- The *Impact Score* (impact.py, which states its definitions): the difference in day-14
  retention between treated users and the control group, by cohort week of the same start.

One submodule per subject (ranges, users, impact, events, streaks, points, achievements,
leaderboards); this package is where the rest of the code imports them from.
"""

from apps.analytics.selectors.achievements import (
    AchievementRarity,
    AchievementsSummary,
    CompletionDay,
    achievements_summary,
)
from apps.analytics.selectors.events import MetricDay, MetricSeries, metric_series
from apps.analytics.selectors.impact import (
    IMPACT_WEEKS,
    MAX_IMPACT_WEEKS,
    Impact,
    ImpactWeek,
    MetricImpact,
    impact_score,
    impact_weeks_choose,
    impact_weeks_default,
)
from apps.analytics.selectors.leaderboards import BoardParticipation, Run, leaderboard_participation
from apps.analytics.selectors.points import (
    TRIGGER_ORDER,
    LevelCount,
    PointsDay,
    SystemPoints,
    points_summary,
)
from apps.analytics.selectors.ranges import (
    DEFAULT_RANGE,
    MAX_RANGE_DAYS,
    RANGE_ALL,
    RANGES,
    DateRange,
    date_range_choose,
    date_range_resolve,
    reporting_today,
    reporting_zone,
    tenant_first_day,
)
from apps.analytics.selectors.streaks import (
    STREAK_BUCKETS,
    LengthBucket,
    StreakActivity,
    StreakLengths,
    StreakPeriodCount,
    streak_activity,
    streak_lengths,
)
from apps.analytics.selectors.totals import Change, RangeTotals, range_totals
from apps.analytics.selectors.users import (
    MAU_DAYS,
    OVERVIEW_DAYS,
    RETENTION_WEEKS,
    ActiveUsersDay,
    Cohort,
    CohortGroup,
    DayCount,
    Overview,
    Retention,
    active_users,
    cohort_week,
    new_users,
    overview,
    retention,
)

__all__ = [
    "DEFAULT_RANGE",
    "IMPACT_WEEKS",
    "MAU_DAYS",
    "MAX_IMPACT_WEEKS",
    "MAX_RANGE_DAYS",
    "OVERVIEW_DAYS",
    "RANGES",
    "RANGE_ALL",
    "RETENTION_WEEKS",
    "STREAK_BUCKETS",
    "TRIGGER_ORDER",
    "AchievementRarity",
    "AchievementsSummary",
    "ActiveUsersDay",
    "BoardParticipation",
    "Change",
    "Cohort",
    "CohortGroup",
    "CompletionDay",
    "DateRange",
    "DayCount",
    "Impact",
    "ImpactWeek",
    "LengthBucket",
    "LevelCount",
    "MetricDay",
    "MetricImpact",
    "MetricSeries",
    "Overview",
    "PointsDay",
    "RangeTotals",
    "Retention",
    "Run",
    "StreakActivity",
    "StreakLengths",
    "StreakPeriodCount",
    "SystemPoints",
    "achievements_summary",
    "active_users",
    "cohort_week",
    "date_range_choose",
    "date_range_resolve",
    "impact_score",
    "impact_weeks_choose",
    "impact_weeks_default",
    "leaderboard_participation",
    "metric_series",
    "new_users",
    "overview",
    "points_summary",
    "range_totals",
    "reporting_today",
    "reporting_zone",
    "retention",
    "streak_activity",
    "streak_lengths",
    "tenant_first_day",
]
