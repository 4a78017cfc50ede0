"""Completions per day and per achievement, and each achievement's rarity."""

import datetime as dt
from dataclasses import dataclass

from django.db.models import Count, Q
from django.db.models.functions import TruncDate

from apps.accounts.models import Tenant
from apps.achievements.domain import rarity
from apps.achievements.models import AchievementCompletion
from apps.achievements.selectors import AchievementDef, achievement_definitions, achievement_stats
from apps.analytics.selectors.ranges import DateRange, reporting_zone


@dataclass(frozen=True)
class CompletionDay:
    date: dt.date
    completions: int
    backdated: int  # of which completed by backdating (an activation or an edit)


@dataclass(frozen=True)
class AchievementRarity:
    achievement: AchievementDef
    completions: int  # ever
    in_range: int
    rarity: float  # percent of the tenant's users who completed it (as the API reports it)


@dataclass(frozen=True)
class AchievementsSummary:
    users: int
    days: list[CompletionDay]
    achievements: list[AchievementRarity]


def achievements_summary(tenant: Tenant, period: DateRange) -> AchievementsSummary:
    """Completions per day and per achievement, and each achievement's rarity. Completions
    carry an instant, not a user's local date: days here are the tenant's reporting-zone
    dates. Three aggregate queries and a user count."""
    tz = reporting_zone(tenant)
    since, until = period.zone_window(tz)
    completions = AchievementCompletion.objects.filter(
        tenant=tenant, completed_at__gte=since, completed_at__lt=until
    )
    per_day = {
        day: (n, backdated)
        for day, n, backdated in completions.annotate(day=TruncDate("completed_at", tzinfo=tz))
        .values("day")
        .annotate(n=Count("id"), backdated=Count("id", filter=Q(backdated=True)))
        .values_list("day", "n", "backdated")
    }
    in_range = dict(
        completions.values("achievement_id")
        .annotate(n=Count("id"))
        .values_list("achievement_id", "n")
    )
    stats = achievement_stats(tenant)
    return AchievementsSummary(
        users=stats.users,
        days=[CompletionDay(day, *per_day.get(day, (0, 0))) for day in period.days()],
        achievements=[
            AchievementRarity(
                achievement=definition,
                completions=stats.completions.get(pk, 0),
                in_range=in_range.get(pk, 0),
                rarity=rarity(stats.completions.get(pk, 0), stats.users),
            )
            for pk, definition in achievement_definitions(tenant).items()
        ],
    )
