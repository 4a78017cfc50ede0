"""The feature steps of the pipeline, in the only order there is (ARCHITECTURE.md §5):

    streaks -> achievements -> points -> leaderboards

Each step receives the event context and the outcomes of the steps before it and returns a
frozen outcome.
"""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from apps.accounts.models import Tenant
from apps.achievements.services import (
    Completed,
    achievements_apply_event,
    achievements_event_load,
)
from apps.achievements.wire import user_achievement_render
from apps.core.db import load_together
from apps.core.facts import (
    AchievementCompleted,
    Fact,
    PointsChanged,
    RankChanged,
    StreakExtended,
    StreakFreezesChanged,
    StreakLost,
    UserActive,
)
from apps.leaderboards.services import Entries, leaderboards_apply_event, leaderboards_event_load
from apps.metrics.selectors import MetricDef
from apps.metrics.services import RecordedEvent
from apps.pipeline.outcomes import (
    AchievementsOutcome,
    LeaderboardsOutcome,
    PointsOutcome,
    StreakOutcome,
)
from apps.points.selectors import points_config
from apps.points.services import PointsLoaded, points_apply_event, points_event_load
from apps.streaks.selectors import (
    streak_config,
    streak_state_get,
    streak_view,
    streaks_configured,
)
from apps.streaks.services import StreakLoaded, streak_apply_event, streak_event_load
from apps.streaks.wire import streak_base_render
from apps.users.models import EndUser


@dataclass(frozen=True)
class EventLoaded:
    """The user's rows every step reads, read together in one statement (PostgreSQL) before
    the steps run: each step then computes without reading."""

    streak: StreakLoaded | None
    completed: set[int]
    points: PointsLoaded | None
    entries: Entries


def event_load(
    tenant: Tenant, user: EndUser, created: bool, metric_pk: int, now: dt.datetime
) -> EventLoaded:
    """Read what the steps need, for a user whose lock the caller holds. A user `created` by
    this event has no rows yet: nothing to read."""
    streak, completed, points, entries = load_together(
        streak_event_load(tenant, user),
        achievements_event_load(tenant, user, metric_pk),
        points_event_load(tenant, user),
        leaderboards_event_load(
            tenant, user, metric_pk, streaks_configured(streak_config(tenant)), now
        ),
        nothing_stored=created,
    )
    return EventLoaded(streak, completed, points, entries)


@dataclass(frozen=True)
class EventContext:
    tenant: Tenant
    user: EndUser
    user_created: bool
    metric: MetricDef
    value: Decimal
    attributes: dict[str, str]
    recorded: RecordedEvent
    now: dt.datetime
    loaded: EventLoaded


def streak_step(ctx: EventContext) -> StreakOutcome:
    result = streak_apply_event(
        ctx.tenant, ctx.user, ctx.metric.pk, ctx.now, loaded=ctx.loaded.streak
    )
    return StreakOutcome(
        streak=streak_base_render(result.view),
        extended=result.extended,
        started=result.started,
        lost=result.lost,
        freezes_consumed=result.freezes_consumed,
    )


def achievements_step(ctx: EventContext, streak: StreakOutcome) -> AchievementsOutcome:
    completed = achievements_apply_event(
        ctx.tenant,
        ctx.user,
        ctx.metric.pk,
        ctx.attributes,
        ctx.recorded.total,
        streak.length,
        ctx.now,
        done=ctx.loaded.completed,
    )
    return AchievementsOutcome(
        completed=tuple(user_achievement_render(c.definition, c.completed_at) for c in completed),
        achievement_pks=tuple(c.definition.pk for c in completed),
        facts=completion_facts(ctx.user, completed),
    )


def completion_facts(user: EndUser, completed: list[Completed]) -> tuple[AchievementCompleted, ...]:
    return tuple(
        AchievementCompleted(
            user_pk=user.pk,
            achievement_pk=c.definition.pk,
            completion_id=c.completion_id,
            completed_at=c.completed_at,
        )
        for c in completed
    )


def points_step(
    ctx: EventContext, streak: StreakOutcome, achievements: AchievementsOutcome
) -> PointsOutcome:
    systems = points_apply_event(
        ctx.tenant,
        ctx.user,
        ctx.metric.pk,
        ctx.attributes,
        ctx.recorded.total,
        streak.extended,
        streak.length,
        streak.streak.get("started"),
        achievements.achievement_pks,
        ctx.now,
        loaded=ctx.loaded.points,
    )
    config = points_config(ctx.tenant)
    return PointsOutcome(
        systems=systems,
        added_by_pk={
            config[key].pk: body["added"] for key, body in systems.items() if key in config
        },
    )


def leaderboards_step(
    ctx: EventContext, streak: StreakOutcome, points: PointsOutcome
) -> LeaderboardsOutcome:
    boards = leaderboards_apply_event(
        ctx.tenant,
        ctx.user,
        ctx.metric.pk,
        ctx.value,
        points.added_by_pk,
        streak.length if (streak.extended or streak.lost) else None,
        ctx.now,
        loaded=ctx.loaded.entries,
    )
    return LeaderboardsOutcome(boards=boards)


def streak_current(tenant: Tenant, user: EndUser, now: dt.datetime) -> StreakOutcome:
    """The user's streak as of now, for responses that apply nothing (idempotent replays)."""
    stored = streak_state_get(user) if streaks_configured(streak_config(tenant)) else None
    view = streak_view(tenant, user, stored, now)
    return StreakOutcome(streak=streak_base_render(view))


def points_facts(user_pk: int, systems: dict[str, dict[str, Any]]) -> list[Fact]:
    """What awarding points did (the `points` map of a response), as facts."""
    return [
        PointsChanged(
            user_pk,
            key,
            int(body["added"]),
            int(body["total"]),
            tuple(award["id"] for award in body.get("awards", ())),
        )
        for key, body in systems.items()
    ]


def event_facts(
    ctx: EventContext,
    streak: StreakOutcome,
    achievements: AchievementsOutcome,
    points: PointsOutcome,
    leaderboards: LeaderboardsOutcome,
) -> list[Fact]:
    """What the event did, as facts for the apps that react to it (notifications)."""
    user_pk = ctx.user.pk
    facts: list[Fact] = [UserActive(user_pk, ctx.now)]
    if streak.lost:
        facts.append(StreakLost(user_pk, streak.lost))
    if streak.freezes_consumed:
        left = int(streak.streak.get("freezes", 0))
        facts.append(StreakFreezesChanged(user_pk, streak.freezes_consumed, 0, left))
    if streak.extended:
        facts.append(StreakExtended(user_pk, streak.length, streak.started))
    facts.extend(achievements.facts)
    facts.extend(points_facts(user_pk, points.systems))
    facts.extend(
        RankChanged(user_pk, key, body.get("rank"), body.get("previousRank"))
        for key, body in leaderboards.boards.items()
    )
    return facts
