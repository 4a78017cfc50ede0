"""Reads of achievements, completions and their statistics."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count, Sum

from apps.accounts.models import Tenant
from apps.achievements.choices import Status, Trigger
from apps.achievements.domain import anniversary_date
from apps.achievements.models import Achievement, AchievementCompletion
from apps.core.config_cache import tenant_cached
from apps.core.guards import Consequence, Impact, registered_consequences
from apps.core.wording import counted
from apps.metrics.models import MetricEvent, MetricTotal
from apps.streaks.models import StreakPeriod
from apps.streaks.selectors import streak_config
from apps.users.domain import attributes_match
from apps.users.models import EndUser
from apps.users.selectors import attribute_filters_resolve, attributes_q


@dataclass(frozen=True)
class AchievementDef:
    """What evaluation and rendering need of an achievement, cached per config version."""

    pk: int
    public_id: str
    name: str
    description: str | None
    badge_url: str | None
    trigger: str
    status: str
    key: str | None
    metric_pk: int | None
    metric_public_id: str | None
    metric_name: str | None
    metric_value: Decimal | None
    streak_length: int | None
    anniversary_years: int | None
    prerequisites: frozenset[int]
    prerequisite_ids: tuple[str, ...]
    # Filters by attribute key; None when one names a deleted attribute (nobody matches).
    user_filters: dict[str, str] | None
    event_filters: dict[str, str] | None

    @property
    def completable(self) -> bool:
        return self.status == Status.ACTIVE

    def open_to(self, user_attributes: dict[str, str]) -> bool:
        return attributes_match(self.user_filters, user_attributes)


def achievement_definitions(tenant: Tenant) -> dict[int, AchievementDef]:
    def load() -> dict[int, AchievementDef]:
        rows = (
            Achievement.objects.filter(tenant=tenant)
            .select_related("metric")
            .prefetch_related("prerequisites")
            .order_by("created", "id")
        )
        return {
            a.pk: AchievementDef(
                pk=a.pk,
                public_id=str(a.public_id),
                name=a.name,
                description=a.description,
                badge_url=a.badge_url,
                trigger=a.trigger,
                status=a.status,
                key=a.key,
                metric_pk=a.metric_id,
                metric_public_id=str(a.metric.public_id) if a.metric else None,
                metric_name=a.metric.name if a.metric else None,
                metric_value=a.metric_value,
                streak_length=a.streak_length,
                anniversary_years=a.anniversary_years,
                prerequisites=frozenset(p.pk for p in a.prerequisites.all()),
                prerequisite_ids=tuple(str(p.public_id) for p in a.prerequisites.all()),
                user_filters=attribute_filters_resolve(tenant, a.user_attributes),
                event_filters=attribute_filters_resolve(tenant, a.event_attributes),
            )
            for a in rows
        }

    return tenant_cached(tenant, "achievements", load)


def user_completions(user: EndUser) -> dict[int, dt.datetime]:
    """achievement pk -> completion time."""
    return dict(
        AchievementCompletion.objects.filter(user=user).values_list(
            "achievement_id", "completed_at"
        )
    )


@dataclass(frozen=True)
class Stats:
    completions: dict[int, int]
    users: int


def achievement_stats(tenant: Tenant) -> Stats:
    """Completions per achievement and the tenant's user count, without the users excluded
    from the rankings: two aggregate queries."""
    counts = dict(
        AchievementCompletion.objects.filter(tenant=tenant, user__excluded_at__isnull=True)
        .values("achievement_id")
        .annotate(n=Count("id"))
        .values_list("achievement_id", "n")
    )
    return Stats(completions=counts, users=rarity_users(tenant))


def achievements_list(tenant: Tenant, limit: int, skip: int) -> Sequence[Achievement]:
    return list(
        Achievement.objects.filter(tenant=tenant)
        .select_related("metric")
        .prefetch_related("prerequisites")
        .order_by("created", "id")[skip : skip + limit]
    )


def achievement_get(tenant: Tenant, public_id: str) -> Achievement | None:
    return (
        Achievement.objects.filter(tenant=tenant, public_id=public_id)
        .select_related("metric")
        .prefetch_related("prerequisites")
        .first()
    )


def achievement_settings(a: Achievement) -> dict[str, Any]:
    """A stored achievement's settings as its services take them: the common ones, then those
    of its trigger (a composite's prerequisites cost a query)."""
    settings: dict[str, Any] = {
        "name": a.name,
        "description": a.description,
        "trigger": a.trigger,
        "status": a.status,
        "badge_url": a.badge_url or None,
        "user_attributes": list(a.user_attributes),
    }
    if a.trigger == Trigger.API:
        settings["key"] = a.key
    elif a.trigger == Trigger.METRIC:
        settings.update(
            metric_id=str(a.metric.public_id) if a.metric else None,
            metric_value=a.metric_value,
            event_attributes=list(a.event_attributes),
        )
    elif a.trigger == Trigger.STREAK:
        settings["streak_length"] = a.streak_length
    elif a.trigger == Trigger.ANNIVERSARY:
        settings["anniversary_years"] = a.anniversary_years
    elif a.trigger == Trigger.ACHIEVEMENT:
        settings["achievement_ids"] = [str(p.public_id) for p in a.prerequisites.all()]
    return settings


def achievement_by_key(tenant: Tenant, key: str) -> AchievementDef | None:
    for definition in achievement_definitions(tenant).values():
        if definition.key == key and definition.status != Status.INACTIVE:
            return definition
    return None


def visible_to(definition: AchievementDef, completed: bool) -> bool:
    """Inactive ones are invisible; locked ones only to users who completed them."""
    if definition.status == Status.INACTIVE:
        return False
    return definition.status == Status.ACTIVE or completed


def metric_achievements(tenant: Tenant, metric_pk: int) -> list[AchievementDef]:
    return [
        d
        for d in achievement_definitions(tenant).values()
        if d.trigger == Trigger.METRIC and d.metric_pk == metric_pk
    ]


# --- dashboard reads ---------------------------------------------------------------------------

# Counting the users backdating has not reached yet stops here: the dashboard shows "10,000+"
# rather than scanning a huge tenant on every view of the page.
BACKDATE_PENDING_CAP = 10_000


def rarity_users(tenant: Tenant) -> int:
    """The number of users that rarity is a percentage of (domain.rarity): users excluded from
    the rankings (apps/fairplay) count neither here nor among the completions."""
    return EndUser.objects.filter(tenant=tenant, excluded_at__isnull=True).count()


def achievement_completions_latest(
    tenant: Tenant, achievement_pk: int, limit: int
) -> list[AchievementCompletion]:
    """The newest completions first, with their users. Completions are inserted as they happen
    (backdated ones too, with the time of backdating), so the primary key follows time."""
    return list(
        AchievementCompletion.objects.filter(tenant=tenant, achievement_id=achievement_pk)
        .select_related("user")
        .order_by("-pk")[:limit]
    )


@dataclass(frozen=True)
class BackdateProgress:
    """How far backdating of an active achievement has come: users completed by it so far, and
    users who qualify but have no completion yet (at most BACKDATE_PENDING_CAP)."""

    backdated: int
    pending: int

    @property
    def finished(self) -> bool:
        return self.pending == 0

    @property
    def pending_capped(self) -> bool:
        return self.pending >= BACKDATE_PENDING_CAP

    @property
    def percent(self) -> int:
        total = self.backdated + self.pending
        return 100 if total == 0 else self.backdated * 100 // total


def qualifying_user_pks(definition: AchievementDef, tenant: Tenant, anniversary_by: dt.date) -> Any:
    """A queryset of the pks of the tenant's users who meet the achievement's condition, before
    user attribute filters (backdating completes them; its progress counts them). Anniversaries
    count users whose anniversary falls on or before `anniversary_by`."""
    users = EndUser.objects.filter(tenant=tenant)
    if definition.trigger == Trigger.METRIC and definition.metric_pk is not None:
        if definition.event_filters is None:
            return users.none().values("pk")  # a filter names a deleted attribute
        if definition.event_filters:
            events = MetricEvent.objects.filter(
                attributes_q(definition.event_filters),
                metric_id=definition.metric_pk,
                undone__isnull=True,  # undone events count for nothing (apps/pipeline/undo.py)
            )
            return (
                events.values("user_id")
                .annotate(total=Sum("value"))
                .filter(total__gte=definition.metric_value)
                .values("user_id")
            )
        return MetricTotal.objects.filter(
            metric_id=definition.metric_pk, total__gte=definition.metric_value
        ).values("user_id")
    if definition.trigger == Trigger.STREAK:
        # Only periods of the tenant's current frequency: a 3-day streak is no 3-week one.
        return StreakPeriod.objects.filter(
            tenant=tenant,
            frequency=streak_config(tenant).frequency,
            length__gte=definition.streak_length,
        ).values("user_id")
    if definition.trigger == Trigger.ANNIVERSARY:
        latest = anniversary_date(anniversary_by, -(definition.anniversary_years or 0))
        return users.filter(sign_up_date__lte=latest).values("pk")
    if definition.trigger == Trigger.ACHIEVEMENT and definition.prerequisites:
        return (
            AchievementCompletion.objects.filter(achievement_id__in=definition.prerequisites)
            .values("user_id")
            .annotate(n=Count("achievement_id", distinct=True))
            .filter(n=len(definition.prerequisites))
            .values("user_id")
        )
    return users.none().values("pk")


def achievement_backdate_progress(
    tenant: Tenant, achievement_pk: int, today: dt.date
) -> BackdateProgress | None:
    """None unless the achievement is active (only active ones are backdated). Pending users are
    those backdating would still complete: they qualify, match the user attribute filters and
    have no completion; it falls to 0 when backdating has finished."""
    definition = achievement_definitions(tenant).get(achievement_pk)
    if definition is None or not definition.completable:
        return None
    backdated = AchievementCompletion.objects.filter(
        tenant=tenant, achievement_id=achievement_pk, backdated=True
    ).count()
    if definition.user_filters is None:
        return BackdateProgress(backdated=backdated, pending=0)
    # Anniversaries due everywhere on Earth (a day behind UTC at most): users whose local
    # anniversary is still ahead of them are not waiting for backdating.
    qualifying = qualifying_user_pks(definition, tenant, today - dt.timedelta(days=1))
    candidates = EndUser.objects.filter(
        attributes_q(definition.user_filters), tenant=tenant, pk__in=qualifying
    ).exclude(achievements__achievement_id=achievement_pk)
    pending = candidates.values("pk")[:BACKDATE_PENDING_CAP].count()
    return BackdateProgress(backdated=backdated, pending=pending)


def user_completion_rows(user: EndUser) -> list[AchievementCompletion]:
    """The user's completions, oldest first, with how each came (backdated or not)."""
    return list(AchievementCompletion.objects.filter(user=user).order_by("completed_at", "pk"))


def achievement_loss(achievement: Achievement, completions: int) -> Consequence:
    """What users lose with an achievement that goes: "60 users lose the achievement Week
    warrior" (with none, only the configuration goes)."""
    if not completions:
        return Consequence(f"the achievement {achievement.name} is deleted")
    return Consequence(
        f"{counted(completions, 'user')} lose the achievement {achievement.name}",
        users=completions,
    )


def achievement_deletion_impact(tenant: Tenant, achievement: Achievement) -> Impact:
    """What deleting the achievement does: its completions go (users lose it), and what the
    apps above tell (the points triggers that name it: apps/core/guards.py)."""
    completions = AchievementCompletion.objects.filter(
        tenant=tenant, achievement=achievement
    ).count()
    own = [achievement_loss(achievement, completions)] if completions else []
    return Impact(
        noun="achievement",
        name=achievement.name,
        key=achievement.key or achievement.name,
        public_id=str(achievement.public_id),
        key_label="key" if achievement.key else "name",
        consequences=(*own, *registered_consequences("achievement", achievement)),
    )
