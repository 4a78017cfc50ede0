"""The Impact Score: what gamification is worth, as the difference in day-14 retention between
the treated users and the control group (`EndUser.control`, drawn at a user's creation with the
tenant's control ratio), per cohort week, overall and per metric.

Definitions (also the admin API's and the dashboard's documentation):
- A user's *start* is the local date (their time zone) their record was created, and their
  *cohort week* the Sunday-to-Saturday week of that date: the retention cohorts' own notion
  (package docstring). Day k is the start plus k days; the start is day 0.
- A user is *active* on a local date when a row of the metric daily rollup exists for them on
  that date (any metric, or the one metric asked for), as everywhere in analytics.
- A user is *retained on day 14* when active on at least one of days 8 to 14.
- Only users whose day 14 is over count: those for whom the current date, in their own time
  zone, is after their day 14 (the rollup of each of those days is then complete). A user
  who has not got that far is in neither group yet, so recent weeks fill in as days pass.
- *Treated* users are everyone not in the control group. The score is treated retention minus
  control retention, with the 95 % interval and the verdict of `analytics.domain`.

Two queries, whatever the number of events: the users created in the weeks (their start needs
their time zone, which only Python applies exactly, as `_creations` in users.py does), and one
aggregate over the rollup, grouped by user and metric. That aggregate cannot know each user's
local start, but it knows their UTC creation date, and the local start is that date or the day
before or after it (zones run from UTC-12 to UTC+14): it counts, per user and metric, the
active days in each of the three candidate windows, and Python keeps the one of the user's
actual start. So no row per active day leaves the database.
"""

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, DurationField, ExpressionWrapper, F, Q
from django.db.models.functions import TruncDate

from apps.accounts.models import Tenant
from apps.analytics.domain import Estimate, Share, difference_estimate
from apps.analytics.selectors.ranges import DateRange, reporting_today
from apps.analytics.selectors.users import cohort_week
from apps.core.errors import ValidationError
from apps.metrics.models import MetricDailyChange
from apps.metrics.selectors import MetricDef, metric_definitions
from apps.users.domain import local_date
from apps.users.models import EndUser

RETAINED_FROM, RETAINED_TO = 8, 14  # the days after the start that count as retention
IMPACT_WEEKS = 12  # cohort weeks shown by default
MAX_IMPACT_WEEKS = 156  # about three years of cohorts, as MAX_RANGE_DAYS bounds the series
_WEEK = dt.timedelta(days=7)


@dataclass(frozen=True)
class ImpactWeek:
    week: dt.date  # the Sunday starting the cohort week
    estimate: Estimate


@dataclass(frozen=True)
class MetricImpact:
    metric: MetricDef
    estimate: Estimate


@dataclass(frozen=True)
class Impact:
    first_week: dt.date
    last_week: dt.date
    metric: MetricDef | None  # None: active means an event of any metric
    overall: Estimate
    weeks: list[ImpactWeek]  # every cohort week from first_week to last_week, oldest first
    metrics: list[MetricImpact]  # the whole span, per metric of the tenant


def impact_weeks_default(tenant: Tenant, now: dt.datetime) -> tuple[dt.date, dt.date]:
    """The IMPACT_WEEKS cohort weeks ending with the week of the latest start whose day 14 is
    over on the tenant's reporting-zone date."""
    last = cohort_week(reporting_today(tenant, now) - dt.timedelta(days=RETAINED_TO + 1))
    return last - (IMPACT_WEEKS - 1) * _WEEK, last


def impact_weeks_choose(
    tenant: Tenant, *, from_week: dt.date | None, to_week: dt.date | None, now: dt.datetime
) -> tuple[dt.date, dt.date]:
    """The cohort weeks a request asks for: the weeks holding the dates `from_week` and
    `to_week` (any day of each), both included. Without `to_week`, the default last week (or
    `from_week`'s week, when later); without `from_week`, the IMPACT_WEEKS weeks ending with
    `to_week`'s. The dashboard and the admin API apply the same rules. Weeks in the wrong
    order or too many are a broken rule (422, as the analytics ranges'), not a malformed
    request."""
    default_first, default_last = impact_weeks_default(tenant, now)
    if from_week is None and to_week is None:
        return default_first, default_last
    if to_week is None:
        assert from_week is not None  # noqa: S101 - one of the two is given
        return cohort_week(from_week), max(cohort_week(from_week), default_last)
    last = cohort_week(to_week)
    first = cohort_week(from_week) if from_week else last - (IMPACT_WEEKS - 1) * _WEEK
    if first > last:
        raise ValidationError(
            "{from_week} must not be after {to_week}", fields=("from_week", "to_week")
        )
    if (last - first) // _WEEK + 1 > MAX_IMPACT_WEEKS:
        raise ValidationError(
            f"{{from_week}} to {{to_week}} may span at most {MAX_IMPACT_WEEKS} weeks",
            fields=("from_week", "to_week"),
        )
    return first, last


@dataclass(frozen=True)
class _Starter:
    week: dt.date
    control: bool
    shift: int  # the local start minus the UTC creation date: -1, 0 or 1


def _starters(tenant: Tenant, dates: DateRange, now: dt.datetime) -> dict[int, _Starter]:
    """The users who started on `dates` and whose day 14 is over, by primary key."""
    lo, hi = dates.utc_window()
    rows = EndUser.objects.filter(tenant=tenant, created__gte=lo, created__lt=hi).values_list(
        "pk", "created", "tz", "control"
    )
    starters = {}
    for pk, created, tz, control in rows.iterator(chunk_size=5000):
        start = local_date(created, tz)
        if start in dates and local_date(now, tz) > start + dt.timedelta(days=RETAINED_TO):
            shift = (start - created.astimezone(dt.UTC).date()).days
            starters[pk] = _Starter(cohort_week(start), control, shift)
    return starters


def _retained(
    tenant: Tenant, dates: DateRange, starters: dict[int, _Starter]
) -> dict[int, set[int]]:
    """For each starter retained by at least one metric, the primary keys of those metrics."""
    lo, hi = dates.utc_window()
    offset = ExpressionWrapper(
        F("date") - TruncDate("user__created", tzinfo=dt.UTC), output_field=DurationField()
    )

    def days(n: int) -> dt.timedelta:
        return dt.timedelta(days=n)

    # Offsets from the UTC creation date: a start one day before it (shift -1) puts days 8-14
    # at offsets 7-13, the same day at 8-14, one day after at 9-15.
    windows = {
        shift: Count(
            "pk",
            filter=Q(
                offset__gte=days(RETAINED_FROM + shift), offset__lte=days(RETAINED_TO + shift)
            ),
        )
        for shift in (-1, 0, 1)
    }
    rows = (
        MetricDailyChange.objects.filter(
            tenant=tenant,
            user__created__gte=lo,
            user__created__lt=hi,
            date__gte=dates.start + days(RETAINED_FROM - 1),
            date__lte=dates.end + days(RETAINED_TO + 1),
        )
        .annotate(offset=offset)
        .filter(offset__gte=days(RETAINED_FROM - 1), offset__lte=days(RETAINED_TO + 1))
        .values("user_id", "metric_id")
        .annotate(before=windows[-1], same=windows[0], after=windows[1])
        .values_list("user_id", "metric_id", "before", "same", "after")
        .order_by()
    )
    retained: dict[int, set[int]] = defaultdict(set)
    for user_pk, metric_pk, *counts in rows.iterator(chunk_size=5000):
        starter = starters.get(user_pk)
        if starter is not None and counts[starter.shift + 1]:
            retained[user_pk].add(metric_pk)
    return retained


def _estimate(users: list[tuple[_Starter, bool]]) -> Estimate:
    """The score of (starter, retained) pairs."""
    shares = {True: [0, 0], False: [0, 0]}
    for starter, kept in users:
        shares[starter.control][0] += 1
        shares[starter.control][1] += kept
    return difference_estimate(Share(*shares[False]), Share(*shares[True]))


def impact_score(
    tenant: Tenant,
    *,
    first_week: dt.date,
    last_week: dt.date,
    metric: MetricDef | None,
    now: dt.datetime,
) -> Impact:
    """The Impact Score of the users who started in the cohort weeks first_week..last_week
    (Sundays, both included), active meaning an event of `metric` (any metric when None)."""
    dates = DateRange(first_week, last_week + dt.timedelta(days=6))
    starters = _starters(tenant, dates, now)
    retained = _retained(tenant, dates, starters) if starters else {}

    def kept(pk: int) -> bool:
        return metric.pk in retained.get(pk, ()) if metric else pk in retained

    by_week: dict[dt.date, list[tuple[_Starter, bool]]] = defaultdict(list)
    for pk, starter in starters.items():
        by_week[starter.week].append((starter, kept(pk)))
    weeks = []
    week = first_week
    while week <= last_week:
        weeks.append(ImpactWeek(week, _estimate(by_week[week])))
        week += _WEEK
    everyone = [pair for pairs in by_week.values() for pair in pairs]
    per_metric = [
        MetricImpact(
            definition,
            _estimate([(s, definition.pk in retained.get(pk, ())) for pk, s in starters.items()]),
        )
        for definition in metric_definitions(tenant).values()
    ]
    return Impact(first_week, last_week, metric, _estimate(everyone), weeks, per_metric)
