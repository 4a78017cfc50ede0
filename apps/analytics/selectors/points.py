"""Points awarded per day and trigger type, and users per level, of each points system."""

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Sum
from django.db.models.fields.json import KT

from apps.accounts.models import Tenant
from apps.analytics.selectors.ranges import DateRange
from apps.points.models import PointsAward
from apps.points.selectors import SystemDef, level_counts, points_config
from apps.users.models import EndUser


@dataclass(frozen=True)
class PointsDay:
    date: dt.date
    by_trigger_type: dict[str, int]

    @property
    def points(self) -> int:
        return sum(self.by_trigger_type.values())


@dataclass(frozen=True)
class LevelCount:
    key: str | None  # None: below every level
    name: str
    points: int
    users: int


@dataclass(frozen=True)
class SystemPoints:
    system: SystemDef
    trigger_types: list[str]  # every type seen in the range, in TRIGGER_ORDER first
    days: list[PointsDay]
    levels: list[LevelCount] = field(default_factory=list)


TRIGGER_ORDER = ("metric", "streak", "achievement", "time", "user_creation")


def points_summary(tenant: Tenant, period: DateRange) -> list[SystemPoints]:
    """Per active points system: points awarded (net, from the ledger) per local date and
    trigger type (as the award's trigger snapshot records it, so deleted triggers still count),
    and how many users are at each level now. One ledger query, then per system one or two
    for the levels (apps.points.selectors.level_counts) and one user count."""
    systems = list(points_config(tenant).values())
    rows = (
        PointsAward.objects.filter(
            tenant=tenant, local_date__gte=period.start, local_date__lte=period.end
        )
        .values("system_id", "local_date", kind=KT("trigger_snapshot__type"))
        .annotate(points=Sum("awarded"))
        .values_list("system_id", "local_date", "kind", "points")
    )
    awarded: dict[int, dict[dt.date, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for system_pk, day, kind, points in rows:
        kind = kind or "unknown"
        by_type = awarded[system_pk][day]
        by_type[kind] = by_type.get(kind, 0) + int(points)
    users = EndUser.objects.filter(tenant=tenant).count() if systems else 0
    result = []
    for system in systems:
        days = awarded.get(system.pk, {})
        seen = {kind for by_type in days.values() for kind in by_type}
        kinds = [k for k in TRIGGER_ORDER if k in seen] + sorted(seen - set(TRIGGER_ORDER))
        series = [
            PointsDay(day, {kind: days.get(day, {}).get(kind, 0) for kind in kinds})
            for day in period.days()
        ]
        result.append(SystemPoints(system, kinds, series, _levels(tenant, system, users)))
    return result


def _levels(tenant: Tenant, system: SystemDef, users: int) -> list[LevelCount]:
    if not system.levels:
        return []
    counts = level_counts(tenant, system)
    levels = [LevelCount(lv.key, lv.name, lv.points, counts.get(lv.pk, 0)) for lv in system.levels]
    below = users - sum(level.users for level in levels)
    if below > 0:
        levels.insert(0, LevelCount(None, "No level", 0, below))
    return levels
