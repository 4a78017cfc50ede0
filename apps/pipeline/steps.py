"""The feature steps of the pipeline, in the only order there is (ARCHITECTURE.md §5):

    streaks -> achievements -> points -> quests -> leaderboards -> leagues

Each step receives the event context and the outcomes of the steps before it and returns a
frozen outcome.
"""

import dataclasses
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from apps.accounts.models import Tenant
from apps.achievements.facts import AchievementCompleted
from apps.achievements.selectors import AchievementDef
from apps.achievements.services import (
    Completed,
    achievements_due,
    achievements_event_load,
    completions_insert,
)
from apps.core.db import load_together
from apps.core.facts import Fact, UserActive
from apps.fairplay.services import anomalies_check
from apps.leaderboards.facts import RankChanged
from apps.leaderboards.services import (
    BoardStanding,
    Entries,
    leaderboards_apply_event,
    leaderboards_event_load,
)
from apps.leagues.facts import LeagueScored
from apps.leagues.services import LeagueMove, leagues_apply_event
from apps.metrics.selectors import MetricDef
from apps.metrics.services import RecordedEvent
from apps.pipeline.outcomes import (
    AchievementsOutcome,
    LeaderboardsOutcome,
    LeaguesOutcome,
    PointsOutcome,
    QuestsOutcome,
    StreakOutcome,
)
from apps.points.choices import ExtensionTriggerType
from apps.points.facts import PointsChanged
from apps.points.ledger import Ledger, SystemChange
from apps.points.models import PointsTriggerMark
from apps.points.selectors import points_config
from apps.points.services import PointsLoaded, points_event_awards, points_event_load, points_pay
from apps.quests.facts import QuestCompleted, QuestProgressed, QuestsRenewed
from apps.quests.services import (
    Progressed,
    QuestsComputed,
    QuestsLoaded,
    happened_of,
    quests_event_compute,
    quests_event_load,
    quests_write,
)
from apps.streaks.facts import StreakExtended, StreakFreezesChanged, StreakLost
from apps.streaks.selectors import (
    streak_config,
    streak_state_get,
    streak_view,
    streaks_configured,
)
from apps.streaks.services import (
    StreakEventResult,
    StreakLoaded,
    streak_apply_event,
    streak_event_load,
)
from apps.users.models import EndUser


@dataclass(frozen=True)
class EventLoaded:
    """The user's rows every step reads, read together in one statement (PostgreSQL) before
    the steps run: each step then computes without reading."""

    streak: StreakLoaded | None
    completed: set[int]
    points: PointsLoaded | None
    entries: Entries
    quests: QuestsLoaded


def event_load(
    tenant: Tenant,
    user: EndUser,
    created: bool,
    metric_pk: int,
    value: Decimal,
    now: dt.datetime,
) -> EventLoaded:
    """Read what the steps need, for a user whose lock the caller holds. A user `created` by
    this event has no rows yet: nothing to read."""
    streak, completed, points, entries, quests = load_together(
        streak_event_load(tenant, user),
        achievements_event_load(tenant, user, metric_pk),
        points_event_load(tenant, user),
        leaderboards_event_load(
            tenant, user, metric_pk, streaks_configured(streak_config(tenant)), now
        ),
        quests_event_load(tenant, user, now),
        nothing_stored=created,
    )
    if created and streak is not None:
        # The new user's only change is this event's.
        streak = dataclasses.replace(streak, changes={metric_pk: value})
    return EventLoaded(streak, completed, points, entries, quests)


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
    return streak_outcome(result)


def streak_outcome(result: StreakEventResult) -> StreakOutcome:
    return StreakOutcome(
        view=result.view,
        extended=result.extended,
        started=result.started,
        lost=result.lost,
        freezes_consumed=result.freezes_consumed,
    )


def achievements_step(ctx: EventContext, streak: StreakOutcome) -> AchievementsOutcome:
    due = achievements_due_of(ctx, streak)
    completed = completions_insert(ctx.tenant, ctx.user, due, ctx.now) if due else []
    return achievements_outcome(ctx.user, completed)


def achievements_due_of(ctx: EventContext, streak: StreakOutcome) -> list[AchievementDef]:
    """The achievements step's computation (a batch in bulk writes what it finds its way)."""
    return achievements_due(
        ctx.tenant,
        ctx.user,
        metric_pk=ctx.metric.pk,
        event_attributes=ctx.attributes,
        total=ctx.recorded.total,
        streak_length=streak.length,
        done=ctx.loaded.completed,
    )


def achievements_outcome(user: EndUser, completed: list[Completed]) -> AchievementsOutcome:
    return AchievementsOutcome(completed=tuple(completed), facts=completion_facts(user, completed))


def completion_facts(user: EndUser, completed: list[Completed]) -> tuple[AchievementCompleted, ...]:
    return tuple(
        AchievementCompleted(
            user_pk=user.pk,
            definition=c.definition,
            completion_id=c.completion_id,
            completed_at=c.completed_at,
        )
        for c in completed
    )


def points_step(
    ctx: EventContext, streak: StreakOutcome, achievements: AchievementsOutcome
) -> PointsOutcome:
    return PointsOutcome(changes=tuple(points_pay(points_awards_of(ctx, streak, achievements))))


def points_awards_of(
    ctx: EventContext, streak: StreakOutcome, achievements: AchievementsOutcome
) -> tuple[Ledger, list[PointsTriggerMark]] | None:
    """The points step's computation (a batch in bulk writes what it finds its way)."""
    return points_event_awards(
        ctx.tenant,
        ctx.user,
        now=ctx.now,
        metric_pk=ctx.metric.pk,
        event_attributes=ctx.attributes,
        metric_total=ctx.recorded.total,
        streak_extended=streak.extended,
        streak_length=streak.length,
        streak_started=streak.started_on,
        achievement_pks=achievements.achievement_pks,
        loaded=ctx.loaded.points,
    )


def quests_step(
    ctx: EventContext,
    streak: StreakOutcome,
    achievements: AchievementsOutcome,
    points: PointsOutcome,
) -> QuestsOutcome:
    """The user's quests after the event, from what the earlier steps computed (the event's
    metric and value, the streak's extension, the points gained, the achievements completed):
    one statement writes every row it moved; a completion pays its points reward through the
    ledger (a read of the balances and the ledger's write, on completions only)."""
    happened = happened_of(
        ctx.user,
        now=ctx.now,
        metric_pk=ctx.metric.pk,
        value=ctx.value,
        streak_extended=streak.extended,
        points_added=points.added_by_pk,
        achievement_pks=achievements.achievement_pks,
    )
    computed = quests_event_compute(
        ctx.tenant, ctx.user, loaded=ctx.loaded.quests, happened=happened, now=ctx.now
    )
    if not computed.moved:
        return QuestsOutcome()
    quests_write(computed.moved)
    return quests_outcome(ctx.tenant, ctx.user, computed, ctx.now)


def quests_outcome(
    tenant: Tenant, user: EndUser, computed: QuestsComputed, now: dt.datetime
) -> QuestsOutcome:
    moved = computed.moved
    done = [m for m in moved if m.completed]
    changes = quest_rewards_pay(tenant, user, done, now) if done else []
    return QuestsOutcome(
        renewed=tuple(QuestsRenewed(user.pk, r) for r in computed.renewed),
        progressed=tuple(
            QuestProgressed(user.pk, m.quest, m.row) for m in moved if not m.completed
        ),
        completed=tuple(QuestCompleted(user.pk, m.quest, m.row) for m in done),
        reward_changes=tuple(changes),
        reward_achievements=tuple(
            m.quest.reward_achievement_pk for m in done if m.quest.reward_achievement_pk
        ),
    )


def quest_rewards_pay(
    tenant: Tenant, user: EndUser, done: Sequence[Progressed], now: dt.datetime
) -> list[SystemChange]:
    """The completions' points, each once: the ledger's dedupe key names the quest and the
    period, so a retried or replayed completion is refused by the ledger's unique constraint.
    The award's trigger snapshot says it was a quest (type `quest`, ExtensionTriggerType). A
    points system archived since pays nothing."""
    systems = {s.pk: s for s in points_config(tenant).values()}
    paying = [
        (m, systems[m.quest.reward_system_pk])
        for m in done
        if m.quest.reward_points and m.quest.reward_system_pk in systems
    ]
    if not paying:
        return []
    ledger = Ledger(tenant, user, now)
    ledger.load([system for _, system in paying])
    for m, system in paying:
        source: dict[str, object] = {
            "type": ExtensionTriggerType.QUEST.value,
            "id": m.quest.public_id,
            "key": m.quest.key,
            "name": m.quest.name,
            "points": m.quest.reward_points,
            "period": m.row.period_first.isoformat(),
        }
        dedupe = f"quest:{m.quest.pk}:{m.row.period_first.isoformat()}"
        ledger.award(system, None, m.quest.reward_points, dedupe, source=source)
    return ledger.flush()


def leaderboards_step(
    ctx: EventContext, streak: StreakOutcome, points: PointsOutcome
) -> LeaderboardsOutcome:
    standings = leaderboards_apply_event(
        ctx.tenant,
        ctx.user,
        now=ctx.now,
        metric_pk=ctx.metric.pk,
        value=ctx.value,
        points_added=points.added_by_pk,
        streak_length=streak.length if (streak.extended or streak.lost) else None,
        loaded=ctx.loaded.entries,
        created=ctx.user_created,
    )
    return LeaderboardsOutcome(standings=tuple(standings))


def leagues_step(ctx: EventContext, points: PointsOutcome) -> LeaguesOutcome:
    moves = leagues_apply_event(
        ctx.tenant,
        ctx.user,
        now=ctx.now,
        metric_pk=ctx.metric.pk,
        value=ctx.value,
        points_added=points.added_by_pk,
    )
    return LeaguesOutcome(moves=tuple(moves))


def anomalies_step(ctx: EventContext, points: PointsOutcome) -> list[Fact]:
    """Fair play's anomaly rules (apps/fairplay): the user flagged, as facts; nothing read or
    written for a tenant without active rules."""
    return anomalies_check(
        ctx.tenant,
        ctx.user,
        now=ctx.now,
        metric_pk=ctx.metric.pk,
        value=ctx.value,
        points_added=points.added_by_pk,
    )


def streak_current(tenant: Tenant, user: EndUser, now: dt.datetime) -> StreakOutcome:
    """The user's streak as of now, for responses that apply nothing (idempotent replays)."""
    stored = streak_state_get(user) if streaks_configured(streak_config(tenant)) else None
    view = streak_view(tenant, user, stored, now)
    return StreakOutcome(view=view)


def points_facts(user_pk: int, changes: Sequence[SystemChange]) -> list[Fact]:
    """What awarding points did, as facts."""
    return [PointsChanged(user_pk, change) for change in changes]


def rank_facts(user_pk: int, standings: Sequence[BoardStanding]) -> list[Fact]:
    """Where the leaderboards step left the user, as facts."""
    return [RankChanged(user_pk, standing) for standing in standings]


def league_facts(user_pk: int, moves: Sequence[LeagueMove]) -> list[Fact]:
    """What the leagues step did, as facts."""
    return [LeagueScored(user_pk, move) for move in moves]


def event_facts(
    ctx: EventContext,
    streak: StreakOutcome,
    achievements: AchievementsOutcome,
    points: PointsOutcome,
    leaderboards: LeaderboardsOutcome,
    leagues: LeaguesOutcome,
    quests: QuestsOutcome | None = None,
) -> list[Fact]:
    """What the event did, as facts for the apps that react to it (notifications, webhooks),
    carrying what the steps computed: a reaction reads nothing again."""
    user_pk = ctx.user.pk
    facts: list[Fact] = [UserActive(user_pk, ctx.now)]
    if streak.lost:
        facts.append(StreakLost(user_pk, streak.lost))
    if streak.freezes_consumed:
        left = streak.freezes
        facts.append(StreakFreezesChanged(user_pk, streak.freezes_consumed, 0, left))
    if streak.extended:
        facts.append(StreakExtended(user_pk, streak.view, streak.started))
    facts.extend(achievements.facts)
    facts.extend(points_facts(user_pk, points.changes))
    if quests is not None:
        facts.extend(quests.renewed)
        facts.extend(quests.progressed)
        facts.extend(quests.completed)
        facts.extend(points_facts(user_pk, quests.reward_changes))
    facts.extend(rank_facts(user_pk, leaderboards.standings))
    facts.extend(league_facts(user_pk, leagues.moves))
    return facts
