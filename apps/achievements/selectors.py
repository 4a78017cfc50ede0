"""Reads of achievements, completions and their statistics."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count

from apps.accounts.models import Tenant
from apps.achievements.choices import Status, Trigger
from apps.achievements.domain import attributes_match
from apps.achievements.models import Achievement, AchievementCompletion
from apps.core.config_cache import tenant_cached
from apps.users.models import EndUser
from apps.users.selectors import attribute_filters_resolve


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
    """Completions per achievement and the tenant's user count: two aggregate queries."""
    counts = dict(
        AchievementCompletion.objects.filter(tenant=tenant)
        .values("achievement_id")
        .annotate(n=Count("id"))
        .values_list("achievement_id", "n")
    )
    return Stats(completions=counts, users=EndUser.objects.filter(tenant=tenant).count())


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
