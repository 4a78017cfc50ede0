"""A user's year in review (GET /users/{id}/wrapped, reference §3.8): pure reads of the daily
rollups, in a fixed number of queries whatever the user's history.

The rules (also stated in the README):

- Calendar. Days are the user's local dates, as the rollups recorded them. Weeks run Monday to
  Sunday and are clipped to the year, so the first and last week of a year may be shorter.
- Active. A day is active when the user recorded at least one metric event on it (a daily
  rollup row); a week or a month is active when one of its days is.
- Most active. The day, week and month with the most metric events (all metrics together);
  ties go to the earliest. A year without events yields 1 January, its week and January.
- Figures of a metric or points system in a period: `currentTotal` is the total at the end of
  the period, `changeThisPeriod` the net change within it, and `percentChange` the change
  relative to the total at the start of the period (how much the total grew), to one decimal;
  from a starting total of 0 it is 100 for a gain, -100 for a loss and 0 without change. This
  is the rule Trophy's published examples follow (2,500 added to 12,500 -> 20; a year that
  starts at 0 -> 100).
- `percentileThisPeriod` (weeks, months and the year, not days): the percentage of the
  tenant's users active on that metric (who earned or lost points in that system) during the
  same period whose change was at most the user's, to one decimal; 0 when nobody was. The
  distribution of changes per (tenant, metric or system, period) is computed once and cached
  for PERCENTILE_TTL; past 1,001 users it is kept as 1,001 cut points (0.1 % resolution).
- `byAttribute`: per event attribute key and value, the figures of the events carrying that
  value, for values used in the period (no percentile).
- Achievements: those completed in the period, by local date in the user's current time zone.
- Leaderboards: per leaderboard, the best rank of the user's daily snapshots in the period
  (snapshots are taken per UTC date), the latest one on a tie; boards where the user never
  ranked within the maximum participants are absent.
- Longest streak: the greatest length the user's streak (at the tenant's current frequency)
  reached in a period overlapping the year; `started` is when that streak began (perhaps the
  year before), `periodStart`/`periodEnd` the span from its start to the end of that period.

`figures` holds the values and the pure rules, `reads` the queries, `review` puts the year
together (`user_wrapped`); the rest of the code imports them from this package.
"""

from apps.analytics.wrapped.figures import (
    CUT_POINTS,
    Completion,
    Figures,
    LongestStreak,
    MetricFigures,
    Period,
    PeriodActivity,
    PointsFigures,
    Ranking,
    Wrapped,
    busiest,
    cut_points,
    month_of,
    percent_change,
    percentile,
    week_of,
)
from apps.analytics.wrapped.reads import PERCENTILE_TTL, VISIBLE_BOARDS
from apps.analytics.wrapped.review import user_wrapped

__all__ = [
    "CUT_POINTS",
    "PERCENTILE_TTL",
    "VISIBLE_BOARDS",
    "Completion",
    "Figures",
    "LongestStreak",
    "MetricFigures",
    "Period",
    "PeriodActivity",
    "PointsFigures",
    "Ranking",
    "Wrapped",
    "busiest",
    "cut_points",
    "month_of",
    "percent_change",
    "percentile",
    "user_wrapped",
    "week_of",
]
