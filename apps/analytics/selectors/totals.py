"""A range's totals, for comparing a range with the period of the same length before it.

Each total has the definition of the series it sums (package docstring): events, active users
and new users on users' local dates, points on the award's local date, completions on the
reporting zone's dates. Five aggregate queries, whatever the range's length."""

from dataclasses import dataclass, field

from django.db.models import Count, Sum

from apps.accounts.models import Tenant
from apps.achievements.models import AchievementCompletion
from apps.analytics.selectors.ranges import DateRange, reporting_zone
from apps.metrics.models import MetricDailyChange
from apps.points.models import PointsAward
from apps.users.domain import local_date
from apps.users.models import EndUser


@dataclass(frozen=True)
class RangeTotals:
    period: DateRange
    events: int
    active_users: int  # distinct users with a metric event in the range
    new_users: int
    points: int  # net points awarded, every system
    completions: int
    events_by_metric: dict[int, int] = field(default_factory=dict)  # metric pk -> events
    points_by_system: dict[int, int] = field(default_factory=dict)  # system pk -> points


def range_totals(tenant: Tenant, period: DateRange) -> RangeTotals:
    rollups = MetricDailyChange.objects.filter(
        tenant=tenant, date__gte=period.start, date__lte=period.end
    )
    by_metric = {
        pk: int(n)
        for pk, n in rollups.values("metric_id")
        .annotate(n=Sum("events"))
        .values_list("metric_id", "n")
    }
    active = rollups.values("user_id").distinct().count()
    by_system = {
        pk: int(n)
        for pk, n in PointsAward.objects.filter(
            tenant=tenant, local_date__gte=period.start, local_date__lte=period.end
        )
        .values("system_id")
        .annotate(n=Sum("awarded"))
        .values_list("system_id", "n")
    }
    since, until = period.zone_window(reporting_zone(tenant))
    completions = AchievementCompletion.objects.filter(
        tenant=tenant, completed_at__gte=since, completed_at__lt=until
    ).aggregate(n=Count("id"))["n"]
    return RangeTotals(
        period=period,
        events=sum(by_metric.values()),
        active_users=active,
        new_users=_new_users(tenant, period),
        points=sum(by_system.values()),
        completions=completions or 0,
        events_by_metric=by_metric,
        points_by_system=by_system,
    )


def _new_users(tenant: Tenant, period: DateRange) -> int:
    """Users created in the range, on their own local date (as new_users counts them)."""
    lo, hi = period.utc_window()
    rows = EndUser.objects.filter(tenant=tenant, created__gte=lo, created__lt=hi).values_list(
        "created", "tz"
    )
    return sum(
        1 for created, tz in rows.iterator(chunk_size=5000) if local_date(created, tz) in period
    )


@dataclass(frozen=True)
class Change:
    """A figure beside the same figure of the previous period."""

    now: int
    before: int

    @property
    def percent(self) -> float | None:
        """The change in percent; None when the previous period had nothing."""
        if self.before == 0:
            return None
        return 100 * (self.now - self.before) / self.before

    @property
    def direction(self) -> str:
        return "up" if self.now > self.before else "down" if self.now < self.before else "same"
