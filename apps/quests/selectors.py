"""Reads of quests: the tenant's quests and pools as the event path sees them (cached per
configuration version, ARCHITECTURE.md §5), which quests a user has in a period, a user's
progress and history."""

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from apps.accounts.models import Tenant
from apps.achievements.selectors import achievement_definitions
from apps.core.config_cache import tenant_cached
from apps.metrics.selectors import metric_definitions
from apps.points.selectors import points_config
from apps.quests import domain
from apps.quests.choices import Cadence, PoolStatus, Status
from apps.quests.models import Quest, QuestPool, QuestProgress
from apps.users.domain import attributes_match, local_date
from apps.users.models import EndUser
from apps.users.selectors import attribute_filters_resolve


@dataclass(frozen=True)
class QuestDef:
    pk: int
    public_id: str
    key: str
    name: str
    description: str | None
    badge_url: str | None
    status: str
    activated_at: dt.datetime | None
    cadence: str
    starts_on: dt.date | None
    ends_on: dt.date | None
    goals: tuple[domain.Goal, ...]
    goals_stored: tuple[dict[str, Any], ...]  # as configured (public ids)
    reward_points: int
    reward_system_pk: int | None
    reward_achievement_pk: int | None
    user_filters: dict[str, str] | None  # by attribute key; None: a deleted attribute

    def period(self, today: dt.date, tz_name: str | None) -> domain.Period | None:
        return domain.period_of(self.cadence, today, tz_name, self.starts_on, self.ends_on)


@dataclass(frozen=True)
class PoolDef:
    pk: int
    public_id: str
    key: str
    name: str
    status: str
    cadence: str
    size: int
    members: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class QuestsConfig:
    """Every quest of the tenant but archived ones (oldest first) and every pool."""

    quests: tuple[QuestDef, ...]
    pools: tuple[PoolDef, ...]

    @property
    def active(self) -> tuple[QuestDef, ...]:
        return tuple(q for q in self.quests if q.status == Status.ACTIVE)

    @property
    def any_active(self) -> bool:
        return any(q.status == Status.ACTIVE for q in self.quests)


def _goal(
    stored: Mapping[str, Any],
    metrics: Mapping[str, int],
    systems: Mapping[str, int],
    achievements: Mapping[str, int],
) -> domain.Goal:
    return domain.Goal(
        kind=stored["kind"],
        target=Decimal(str(stored.get("target") or 1)),
        metric_pk=metrics.get(stored.get("metric_id") or ""),
        system_pk=systems.get(stored.get("points_system_id") or ""),
        achievement_pk=achievements.get(stored.get("achievement_id") or ""),
    )


def quests_config(tenant: Tenant) -> QuestsConfig:
    """The tenant's quest configuration (cached)."""

    def load() -> QuestsConfig:
        metrics = {m.public_id: m.pk for m in metric_definitions(tenant).values()}
        systems = {s.public_id: s.pk for s in points_config(tenant).values()}
        achievements = {a.public_id: a.pk for a in achievement_definitions(tenant).values()}
        quests = Quest.objects.filter(tenant=tenant).exclude(status=Status.ARCHIVED)
        defs = tuple(
            QuestDef(
                pk=q.pk,
                public_id=str(q.public_id),
                key=q.key,
                name=q.name,
                description=q.description,
                badge_url=q.badge_url,
                status=q.status,
                activated_at=q.activated_at,
                cadence=q.cadence,
                starts_on=q.starts_on,
                ends_on=q.ends_on,
                goals=tuple(_goal(g, metrics, systems, achievements) for g in q.goals),
                goals_stored=tuple(q.goals),
                reward_points=q.reward_points,
                reward_system_pk=q.reward_points_system_id,
                reward_achievement_pk=q.reward_achievement_id,
                user_filters=attribute_filters_resolve(tenant, q.user_attributes),
            )
            for q in quests.order_by("created", "id")
        )
        pools = tuple(
            PoolDef(
                pk=p.pk,
                public_id=str(p.public_id),
                key=p.key,
                name=p.name,
                status=p.status,
                cadence=p.cadence,
                size=p.size,
                members=tuple(p.members),
            )
            for p in QuestPool.objects.filter(tenant=tenant).order_by("created", "id")
        )
        return QuestsConfig(defs, pools)

    return tenant_cached(tenant, "quests", load)


@dataclass(frozen=True)
class Assigned:
    """A quest a user has at a moment, with its period in the user's calendar."""

    quest: QuestDef
    period: domain.Period
    pool_key: str | None


def user_quests_at(
    tenant: Tenant,
    config: QuestsConfig,
    *,
    user_id: str,
    tz_name: str | None,
    attributes: Mapping[str, str],
    now: dt.datetime,
) -> list[Assigned]:
    """The active quests the user has at `now`: those outside every active pool that pass
    the user's attribute filters, and those the pools choose for the user (domain.pool_choice
    over the candidates as they stood when the user's period began). A quest added to a pool
    during the user's period stays everyone's until the next one. Reads nothing."""
    today = local_date(now, tz_name)
    periods: dict[str, domain.Period | None] = {}  # the user's current period of each cadence

    def period_of(quest: QuestDef | None, cadence: str) -> domain.Period | None:
        if quest is not None and cadence == Cadence.ONCE:
            return quest.period(today, tz_name)
        if cadence not in periods:
            periods[cadence] = domain.period_of(cadence, today, tz_name)
        return periods[cadence]

    eligible = {
        q.public_id: q for q in config.active if attributes_match(q.user_filters, attributes)
    }
    pooled: set[str] = set()
    chosen: list[Assigned] = []
    for pool in config.pools:
        period = period_of(None, pool.cadence)
        assert period is not None  # noqa: S101 - pools are never `once`
        # A quest is the pool's from the user's first period after it joined the pool; until
        # then it stays what it was (everyone's). An inactive pool's quests are nobody's.
        pooled.update(domain.pooled_at(pool.members, period.start))
        if pool.status != PoolStatus.ACTIVE:
            continue
        same_cadence = {k: q for k, q in eligible.items() if q.cadence == pool.cadence}
        candidates = domain.candidates_at(pool.members, period.start, same_cadence)
        keys = domain.pool_choice(
            candidates,
            pool.size,
            tenant_key=str(tenant.pk),
            pool_key=pool.key,
            user_id=user_id,
            index=domain.period_index(period.first, pool.cadence),
        )
        chosen.extend(Assigned(same_cadence[k], period, pool.key) for k in keys)
    seen = {a.quest.pk for a in chosen}
    free = []
    for quest in eligible.values():
        if quest.public_id in pooled or quest.pk in seen:
            continue
        period = period_of(quest, quest.cadence)
        if period is not None:
            free.append(Assigned(quest, period, None))
    return free + chosen


def progress_current(user: EndUser, assigned: Sequence[Assigned]) -> dict[int, QuestProgress]:
    """The user's progress rows of these quests' current periods, by quest pk."""
    if not assigned:
        return {}
    rows = QuestProgress.objects.filter(
        user=user, quest_id__in=[a.quest.pk for a in assigned]
    ).filter(period_first__in={a.period.first for a in assigned})
    wanted = {(a.quest.pk, a.period.first) for a in assigned}
    return {r.quest_id: r for r in rows if (r.quest_id, r.period_first) in wanted}


def progress_history(
    tenant: Tenant, user: EndUser, *, limit: int, before: dt.datetime
) -> list[QuestProgress]:
    """The user's quest periods that ended by `before`, newest first, with their quests."""
    return list(
        QuestProgress.objects.filter(tenant=tenant, user=user, period_end__lte=before)
        .select_related("quest")
        .order_by("-period_end", "quest_id")[:limit]
    )


# --- admin ------------------------------------------------------------------------------------


def quests_list(tenant: Tenant, limit: int, skip: int) -> Sequence[Quest]:
    return list(
        Quest.objects.filter(tenant=tenant)
        .select_related("reward_points_system", "reward_achievement")
        .order_by("created", "id")[skip : skip + limit]
    )


def quest_get(tenant: Tenant, public_id: str) -> Quest | None:
    return (
        Quest.objects.filter(tenant=tenant, public_id=public_id)
        .select_related("reward_points_system", "reward_achievement")
        .first()
    )


def pools_list(tenant: Tenant, limit: int, skip: int) -> Sequence[QuestPool]:
    return list(
        QuestPool.objects.filter(tenant=tenant).order_by("created", "id")[skip : skip + limit]
    )


def pool_get(tenant: Tenant, public_id: str) -> QuestPool | None:
    return QuestPool.objects.filter(tenant=tenant, public_id=public_id).first()


def quest_has_history(quest: Quest) -> bool:
    return QuestProgress.objects.filter(quest=quest).exists()


@dataclass(frozen=True)
class Names:
    """How the application API names what quests refer to: the keys of metrics and points
    systems by public id, the keys of points systems and the public ids of achievements by
    primary key (from the cached configurations: nothing is read)."""

    keys: dict[str, str]
    system_keys: dict[int, str]
    achievement_ids: dict[int, str]


def names(tenant: Tenant) -> Names:
    metrics = metric_definitions(tenant).values()
    systems = points_config(tenant).values()
    return Names(
        keys={m.public_id: m.key for m in metrics} | {s.public_id: s.key for s in systems},
        system_keys={s.pk: s.key for s in systems},
        achievement_ids={a.pk: a.public_id for a in achievement_definitions(tenant).values()},
    )


# --- dashboard analytics ----------------------------------------------------------------------


@dataclass(frozen=True)
class QuestStats:
    """A quest's figures over some periods: users who made progress, completions, the median
    time from a user's first counted event of a period to the completion, reward points paid."""

    started: int
    completed: int
    median_seconds: int | None
    points_paid: int

    @property
    def rate(self) -> float | None:
        return self.completed / self.started if self.started else None


def quest_period_stats(
    tenant: Tenant, quest_pk: int, periods: int
) -> list[tuple[dt.date, dt.date, QuestStats]]:
    """The quest's last `periods` periods that anyone made progress in, newest first."""
    firsts = list(
        QuestProgress.objects.filter(tenant=tenant, quest_id=quest_pk)
        .values_list("period_first", "period_last")
        .distinct()
        .order_by("-period_first")[:periods]
    )
    if not firsts:
        return []
    rows = QuestProgress.objects.filter(
        tenant=tenant, quest_id=quest_pk, period_first__gte=firsts[-1][0]
    ).only("period_first", "started_at", "completed_at", "reward_points")
    by_period: dict[dt.date, list[QuestProgress]] = {first: [] for first, _ in firsts}
    for row in rows:
        by_period.setdefault(row.period_first, []).append(row)
    return [(first, last, _stats(by_period[first])) for first, last in firsts]


def _stats(rows: Sequence[QuestProgress]) -> QuestStats:
    done = [r for r in rows if r.completed_at is not None]
    times = sorted(int((r.completed_at - r.started_at).total_seconds()) for r in done)  # type: ignore[operator]
    median = times[len(times) // 2] if times else None
    return QuestStats(len(rows), len(done), median, sum(r.reward_points for r in done))


def user_quest_rows(tenant: Tenant, user: EndUser, limit: int) -> list[QuestProgress]:
    """The user's latest quest periods (current and past), newest first, with their quests."""
    return list(
        QuestProgress.objects.filter(tenant=tenant, user=user)
        .select_related("quest")
        .order_by("-period_first", "quest__name")[:limit]
    )
