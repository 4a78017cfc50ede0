"""Reads of points configuration, balances, awards and summaries."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet, Sum

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.core.db import CompiledSelect
from apps.core.guards import ARCHIVE, Consequence, Impact, registered_consequences
from apps.core.wording import counted
from apps.points import domain, sql
from apps.points.choices import SystemStatus, TriggerStatus
from apps.points.models import (
    PointsAward,
    PointsBoost,
    PointsDailyChange,
    PointsLevel,
    PointsSystem,
    PointsTotal,
    PointsTrigger,
)
from apps.users.domain import attributes_match
from apps.users.models import EndUser
from apps.users.selectors import attribute_filters_resolve, attributes_q


@dataclass(frozen=True)
class TriggerDef:
    pk: int
    public_id: str
    type: str
    points: int
    status: str
    metric_pk: int | None
    metric_public_id: str | None
    metric_name: str | None
    metric_threshold: int | None
    achievement_pk: int | None
    achievement_public_id: str | None
    achievement_name: str | None
    streak_length: int | None
    time_unit: str | None
    time_interval: int | None
    block_if_out_of_points: bool
    user_filters: dict[str, str] | None
    event_filters: dict[str, str] | None
    user_filter_kv: tuple[tuple[str, str], ...]
    event_filter_kv: tuple[tuple[str, str], ...]
    created: dt.datetime
    updated: dt.datetime

    def open_to(self, attributes: dict[str, str]) -> bool:
        return attributes_match(self.user_filters, attributes)


@dataclass(frozen=True)
class BoostDef:
    pk: int
    public_id: str
    name: str
    start: dt.date
    end: dt.date | None
    multiplier: Decimal
    rounding: str
    user_pk: int | None
    user_filters: dict[str, str] | None

    def running_on(self, day: dt.date) -> bool:
        return self.start <= day and (self.end is None or day <= self.end)

    def status_on(self, day: dt.date) -> str:
        if day < self.start:
            return "scheduled"
        return "active" if self.end is None or day <= self.end else "finished"


@dataclass(frozen=True)
class SystemDef:
    pk: int
    public_id: str
    key: str
    name: str
    description: str
    badge_url: str | None
    max_points: int | None
    status: str
    triggers: tuple[TriggerDef, ...] = ()
    levels: tuple[Any, ...] = ()  # PointsLevel rows, by threshold
    boosts: tuple[BoostDef, ...] = ()  # global and attribute-filtered boosts
    has_user_boosts: bool = False
    level_points: tuple[domain.Level, ...] = field(default=())


def points_systems_active(tenant: Tenant | None) -> QuerySet[PointsSystem]:
    """The systems that award and that the APIs show: an archived system is kept read-only
    for its ledger and is out of reach (apps/points/configuration/archive.py)."""
    return PointsSystem.objects.filter(tenant=tenant, status=SystemStatus.ACTIVE)


def points_system_get(tenant: Tenant, public_id: str) -> PointsSystem | None:
    return points_systems_active(tenant).filter(public_id=public_id).first()


def points_config(tenant: Tenant) -> dict[str, SystemDef]:
    """Active systems by key, with active triggers, levels and boosts: cached per config
    version so the pipeline reads no configuration table per event."""

    def load() -> dict[str, SystemDef]:
        systems = list(points_systems_active(tenant).order_by("created", "id"))
        pks = [s.pk for s in systems]
        triggers = list(
            PointsTrigger.objects.filter(system_id__in=pks, status=TriggerStatus.ACTIVE)
            .select_related("metric", "achievement")
            .order_by("created", "id")
        )
        levels = list(PointsLevel.objects.filter(system_id__in=pks).order_by("points", "id"))
        boosts = list(PointsBoost.objects.filter(system_id__in=pks).order_by("start", "id"))
        result = {}
        for system in systems:
            result[system.key] = SystemDef(
                pk=system.pk,
                public_id=str(system.public_id),
                key=system.key,
                name=system.name,
                description=system.description,
                badge_url=system.badge_url,
                max_points=system.max_points,
                status=system.status,
                triggers=tuple(
                    trigger_def(t, tenant) for t in triggers if t.system_id == system.pk
                ),
                levels=tuple(lv for lv in levels if lv.system_id == system.pk),
                level_points=tuple(
                    domain.Level(lv.pk, lv.points) for lv in levels if lv.system_id == system.pk
                ),
                boosts=tuple(
                    boost_def(b, tenant)
                    for b in boosts
                    if b.system_id == system.pk and b.user_id is None
                ),
                has_user_boosts=any(
                    b.user_id is not None for b in boosts if b.system_id == system.pk
                ),
            )
        return result

    return tenant_cached(tenant, "points", load)


def trigger_def(t: PointsTrigger, tenant: Tenant) -> TriggerDef:
    user_filters = attribute_filters_resolve(tenant, t.user_attributes)
    event_filters = attribute_filters_resolve(tenant, t.event_attributes)
    return TriggerDef(
        pk=t.pk,
        public_id=str(t.public_id),
        type=t.type,
        points=t.points,
        status=t.status,
        metric_pk=t.metric_id,
        metric_public_id=str(t.metric.public_id) if t.metric else None,
        metric_name=t.metric.name if t.metric else None,
        metric_threshold=t.metric_threshold,
        achievement_pk=t.achievement_id,
        achievement_public_id=str(t.achievement.public_id) if t.achievement else None,
        achievement_name=t.achievement.name if t.achievement else None,
        streak_length=t.streak_length,
        time_unit=t.time_unit,
        time_interval=t.time_interval,
        block_if_out_of_points=t.block_if_out_of_points,
        user_filters=user_filters,
        event_filters=event_filters,
        user_filter_kv=tuple((user_filters or {}).items()),
        event_filter_kv=tuple((event_filters or {}).items()),
        created=t.created,
        updated=t.updated,
    )


def boost_def(b: PointsBoost, tenant: Tenant | None) -> BoostDef:
    return BoostDef(
        pk=b.pk,
        public_id=str(b.public_id),
        name=b.name,
        start=b.start,
        end=b.end,
        multiplier=b.multiplier,
        rounding=b.rounding,
        user_pk=b.user_id,
        user_filters=(attribute_filters_resolve(tenant, b.user_attributes) if tenant else {}),
    )


def system_by_key(tenant: Tenant, key: str) -> SystemDef | None:
    return points_config(tenant).get(key)


def user_boosts(user: EndUser, system: SystemDef) -> list[BoostDef]:
    """Boosts for this user: global ones they qualify for, plus their own (one query, only
    when the system has user boosts)."""
    boosts = [b for b in system.boosts if attributes_match(b.user_filters, user.attributes)]
    if system.has_user_boosts:
        boosts += [
            boost_def(b, None) for b in PointsBoost.objects.filter(system_id=system.pk, user=user)
        ]
    return boosts


# Hand-compiled (apps/core/db.py), for the points step of every event. All the user's totals
# (one per system they ever earned in: a handful), picked in Python: a fixed statement.
USER_TOTALS = CompiledSelect(PointsTotal, "{m[user]} = %s")


def user_totals(
    user: EndUser, system_pks: Sequence[int], loaded: list[PointsTotal] | None = None
) -> dict[int, PointsTotal]:
    """The user's totals in these systems: all their rows (`loaded` when the caller read
    them), picked in Python, so the statement is the same for every event."""
    wanted = set(system_pks)
    totals = loaded if loaded is not None else USER_TOTALS.many([user.pk])
    return {t.system_id: t for t in totals if t.system_id in wanted}


def user_total_by_external_id(
    tenant: Tenant, external_id: str, system_pk: int
) -> tuple[int, int] | None:
    """(pk, total in the system, 0 without one) of the user with this id, or None: one
    hand-written statement (apps/points/sql.py) for what GET /users/{id}/points/{key} would
    otherwise read in two."""
    row = sql.user_total_by_external_id(tenant.pk, external_id, system_pk)
    return None if row is None else (row[0], int(row[1] or 0))


# Hand-compiled (apps/core/db.py): the read of GET /users/{id}/points/{key}.
_LATEST_AWARDS = CompiledSelect(
    PointsAward, "{m[user]} = %s AND {m[system]} = %s ORDER BY {m[created]} DESC, {m[id]} DESC"
)


def user_awards(user_pk: int, system_pk: int, limit: int) -> list[PointsAward]:
    """The user's latest awards in the system, newest first."""
    awards: list[PointsAward] = _LATEST_AWARDS.many([user_pk, system_pk], limit)
    return awards


def points_event_summary(
    user: EndUser, system_pk: int, aggregation: str, start: dt.date, end: dt.date
) -> Any:
    from apps.metrics.domain import summary_buckets, summary_range_check

    summary_range_check(start, end)
    rows = PointsDailyChange.objects.filter(user=user, system_id=system_pk)
    before = rows.filter(date__lt=start).aggregate(total=Sum("change"))["total"] or 0
    changes = rows.filter(date__gte=start, date__lte=end).values_list("date", "change")
    return summary_buckets(
        start, end, aggregation, Decimal(before), [(d, Decimal(c)) for d, c in changes]
    )


def system_totals(
    tenant: Tenant, system_pk: int, user_filters: dict[str, str] | None = None
) -> list[int]:
    """Every user's total in the system (users without awards count as 0)."""
    users = EndUser.objects.filter(attributes_q(user_filters or {}), tenant=tenant)
    totals = dict(
        PointsTotal.objects.filter(system_id=system_pk, user__in=users).values_list(
            "user_id", "total"
        )
    )
    return [totals.get(pk, 0) for pk in users.values_list("pk", flat=True)]


def level_counts(tenant: Tenant, system: SystemDef) -> dict[int, int]:
    """Users per level, derived from totals and the current thresholds (users without any
    award count at 0): one aggregate query and one count."""
    from django.db.models import Count, Q

    levels = sorted(system.level_points, key=lambda lv: (lv.points, lv.pk))
    bands = {}
    for index, level in enumerate(levels):
        band = Q(total__gte=level.points)
        if index + 1 < len(levels):
            band &= Q(total__lt=levels[index + 1].points)
        bands[f"level_{level.pk}"] = Count("id", filter=band)
    rows = PointsTotal.objects.filter(system_id=system.pk).aggregate(
        **bands, with_total=Count("id")
    )
    counts = {level.pk: rows[f"level_{level.pk}"] for level in levels}
    zero_level = domain.level_for(0, levels)
    if zero_level is not None:
        without = EndUser.objects.filter(tenant=tenant).count() - rows["with_total"]
        counts[zero_level.pk] += max(0, without)
    return counts


# --- dashboard reads: the end-user page ------------------------------------------------------


def user_points_totals(user: EndUser) -> list[PointsTotal]:
    """The user's total in each system they have one in (archived systems too), with its
    level: one query."""
    return list(
        PointsTotal.objects.filter(user=user)
        .select_related("system", "level")
        .order_by("system__created", "system_id")
    )


def points_totals_of(users: Sequence[EndUser], system_pks: Sequence[int]) -> list[PointsTotal]:
    """The totals of a page of users in these systems, with their levels: one query."""
    return list(
        PointsTotal.objects.filter(
            user__in=list(users), system_id__in=list(system_pks)
        ).select_related("level")
    )


def user_awards_latest(user: EndUser, limit: int) -> list[PointsAward]:
    """The user's latest awards in every system, newest first: one query."""
    return list(
        PointsAward.objects.filter(user=user)
        .select_related("system")
        .order_by("-created", "-id")[:limit]
    )


def points_system_archive_impact(tenant: Tenant, system: PointsSystem) -> Impact:
    """What archiving the system (its "delete") does: the ledger is kept, but the users' points
    leave the APIs for good, and what the apps above tell (leaderboards and leagues that rank by
    it: apps/core/guards.py)."""
    users = PointsTotal.objects.filter(tenant=tenant, system=system).count()
    own = []
    if users:
        text = (
            f"the {system.name} points of {counted(users, 'user')} leave the APIs for good "
            "(the ledger is kept)"
        )
        own.append(Consequence(text, users=users))
    return Impact(
        noun="points system",
        name=system.name,
        key=system.key,
        public_id=str(system.public_id),
        consequences=(*own, *registered_consequences("points system", system)),
        verb=ARCHIVE,
    )
