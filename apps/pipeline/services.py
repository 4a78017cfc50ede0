"""Event processing: the only module that knows the order of steps (ARCHITECTURE.md §5)."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements.errors import AchievementInvalidError
from apps.achievements.selectors import AchievementDef, achievement_definitions
from apps.achievements.services import ApiCompletion, Completed, achievement_complete_api
from apps.core.db import retrying_deadlocks
from apps.core.facts import Fact
from apps.leaderboards.services import leaderboards_apply_event
from apps.leagues.services import leagues_apply_event
from apps.metrics.selectors import event_by_idempotency_key, user_metric_total
from apps.metrics.services import event_record
from apps.notifications.services import notifications_record
from apps.pipeline import steps
from apps.pipeline.config import EventConfig, event_config
from apps.pipeline.outcomes import (
    AchievementsOutcome,
    LeaderboardsOutcome,
    PointsOutcome,
)
from apps.pipeline.wire import EventAnswer
from apps.points.ledger import SystemChange
from apps.points.services import points_for_achievements
from apps.points.wire import points_render
from apps.streams.services import streams_record
from apps.users.domain import UserFields
from apps.users.models import EndUser
from apps.users.services import (
    UserUpsertResult,
    attribute_values_check,
    user_create_or_lock,
    user_lock,
    user_update_fields,
)
from apps.users.wire import user_fields_restored
from apps.webhooks.services import webhooks_record


@dataclass(frozen=True)
class EventInput:
    metric_key: str
    user_id: str
    user_fields: UserFields
    value: Decimal
    attributes: dict[str, str]
    idempotency_key: str | None = None


def event_input_from_payload(payload: dict[str, Any]) -> EventInput:
    """Rebuild an EventInput from a validated batch item stored as JSON."""
    return EventInput(
        metric_key=payload["key"],
        user_id=payload["userId"],
        user_fields=user_fields_restored(payload["userFields"]),
        value=Decimal(payload["value"]),
        attributes=payload["attributes"],
        idempotency_key=payload.get("idempotencyKey"),
    )


def event_process(tenant: Tenant, data: EventInput, now: dt.datetime | None = None) -> EventAnswer:
    """Process one metric event synchronously, in one transaction, and say what it did (the
    view renders the answer: apps/pipeline/wire.py).

    Raises NotFoundError for an unknown metric and ValidationError for undefined attribute
    keys before anything is written.
    """
    now = now or timezone.now()
    config = event_config(tenant, data.metric_key)
    attribute_values_check(tenant, data.attributes, "event")

    def run() -> EventAnswer:
        with transaction.atomic():
            identified = event_user_resolve(tenant, user_lock(tenant, data.user_id), data, now)
            return event_apply(tenant, identified, config, data, now)

    # A deadlock victim (possible with a batch group holding several events' locks, see
    # apps/pipeline/batches.py) is run again rather than answered 500.
    return retrying_deadlocks(run, EVENT_DEADLOCK_RETRIES, f"an event of {data.user_id!r}")


EVENT_DEADLOCK_RETRIES = 2


def event_user_resolve(
    tenant: Tenant, locked: EndUser | None, data: EventInput, now: dt.datetime
) -> UserUpsertResult:
    """The event's user: the one whose row lock the caller took, or, unknown, created now with
    the event's user fields (or locked, if a concurrent request created it first)."""
    if locked is not None:
        return UserUpsertResult(user=locked, created=False)
    return user_create_or_lock(tenant, data.user_id, data.user_fields, now=now, active=True)


def event_apply(
    tenant: Tenant,
    identified: UserUpsertResult,
    config: EventConfig,
    data: EventInput,
    now: dt.datetime,
) -> EventAnswer:
    """Apply one event to a user whose row lock the caller holds, in the caller's transaction:
    the idempotency check, the inline user fields, the event and every feature step, then the
    notifications and webhooks of what it did. A single event (event_process) and a user's
    events of a batch (batches.queued_events_process) both come through here."""
    user, created = identified.user, identified.created
    if not created and data.idempotency_key is not None:
        replay = _replay(tenant, user, config, data.idempotency_key, now)
        if replay is not None:
            return replay
    if not created:
        user_update_fields(tenant, user, data.user_fields, now=now)
    recorded = event_record(
        tenant,
        user,
        config.metric,
        value=data.value,
        attributes=data.attributes,
        idempotency_key=data.idempotency_key,
        now=now,
    )
    ctx = steps.EventContext(
        tenant=tenant,
        user=user,
        user_created=created,
        metric=config.metric,
        value=data.value,
        attributes=data.attributes,
        recorded=recorded,
        now=now,
        loaded=steps.event_load(tenant, user, created, config.metric.pk, data.value, now),
    )
    streak = steps.streak_step(ctx)
    achievements = steps.achievements_step(ctx, streak)
    points = steps.points_step(ctx, streak, achievements)
    quests = steps.quests_step(ctx, streak, achievements, points)
    # Boards and leagues count a quest's reward as points gained; the response does not.
    gained = (
        PointsOutcome(points.changes + quests.reward_changes) if quests.reward_changes else points
    )
    leaderboards = steps.leaderboards_step(ctx, streak, gained)
    leagues = steps.leagues_step(ctx, gained)
    facts = steps.event_facts(ctx, streak, achievements, points, leaderboards, leagues, quests)
    facts += steps.anomalies_step(ctx, points)
    # Notifications tell which of them became due: webhooks hear of those too.
    facts += notifications_record(tenant, user, facts, now)
    facts_publish(tenant, user, facts, now)
    if quests.reward_achievements:
        quest_reward_achievements_complete(tenant, user, quests.reward_achievements, now)
    answer = EventAnswer(
        str(recorded.event.public_id),
        config.metric,
        recorded.total,
        streak,
        achievements,
        points,
        leaderboards,
        data.idempotency_key,
        replayed=False,
    )
    return answer


def quest_reward_achievements_complete(
    tenant: Tenant, user: EndUser, pks: Sequence[int], now: dt.datetime
) -> None:
    """The api achievements that quests' completions complete, as an API completion does
    (their composites, points, boards, notifications and webhooks); completing one twice
    changes nothing, and one the user cannot complete (locked, outside its filters) or gone
    since is skipped."""
    definitions = achievement_definitions(tenant)
    for pk in pks:
        definition = definitions.get(pk)
        if definition is None:
            continue
        try:
            achievement_complete(tenant, user, definition, now)
        except AchievementInvalidError:
            continue


def _replay(
    tenant: Tenant, user: EndUser, config: EventConfig, key: str, now: dt.datetime
) -> EventAnswer | None:
    """The answer to an event whose idempotency key this user already used for this metric,
    or None. Checked only with the user's lock held: a concurrent request with the same key
    has either committed its event (we replay it) or not started (we go first)."""
    original = event_by_idempotency_key(user, config.metric.pk, key)
    if original is None:
        return None
    # A replay applies nothing, not even the inline user fields: the state it reports is the
    # state the first request left, plus whatever came since.
    answer = EventAnswer(
        str(original.public_id),
        config.metric,
        user_metric_total(user, config.metric.pk),
        steps.streak_current(tenant, user, now),
        AchievementsOutcome(),
        PointsOutcome(),
        LeaderboardsOutcome(),
        key,
        replayed=True,
    )
    return answer


@dataclass(frozen=True)
class CompletionResult:
    completion: ApiCompletion
    points: dict[str, dict[str, Any]]  # by system key, as the API's `points`


def achievement_complete(
    tenant: Tenant,
    user: EndUser,
    definition: AchievementDef,
    now: dt.datetime | None = None,
    *,
    created: bool = False,
) -> CompletionResult:
    """Complete an api-trigger achievement for a user whose row lock the caller holds (the API's
    POST /achievements/{key}/complete, the dashboard's user page): the completion and the
    composites it completes, their points triggers, then the notifications and webhooks of all
    that. Completing it again changes nothing (`completion.created` is False). Raises
    AchievementInvalidError for a locked achievement or a user outside its filters. `created`:
    the caller has just created the user (their boards hold nothing of them yet)."""
    now = now or timezone.now()
    result = achievement_complete_api(tenant, user, definition, now)
    if not result.created:
        return CompletionResult(result, {})
    completed = (definition.pk, *(c.definition.pk for c in result.also_completed))
    changes = points_for_achievements(tenant, user, completed, now)
    first = Completed(definition, result.completion_id, result.completed_at)
    facts: list[Fact] = list(steps.completion_facts(user, [first, *result.also_completed]))
    facts += points_paid_outside_event(tenant, user, changes, now, created=created)
    facts_tell(tenant, user, facts, now)
    return CompletionResult(result, points_render(changes))


def user_creation_points_pay(tenant: Tenant, user: EndUser, now: dt.datetime) -> None:
    """A user that an identification (POST /users, PUT /users/{id}) just created gets the
    user_creation points at once, as Trophy pays them (a balance read right after identify
    shows them), on the points boards and told to notifications and webhooks like any points
    change: the step after `user_upsert` in the identification's transaction
    (`user_identify_paying` in apps/pipeline/intake.py). (An event's new user is paid by the
    event's points step.)"""
    # The new row is this transaction's own: no one else can hold or take its lock before commit.
    changes = points_for_achievements(tenant, user, (), now)
    facts_tell(
        tenant, user, points_paid_outside_event(tenant, user, changes, now, created=True), now
    )


def points_paid_outside_event(
    tenant: Tenant,
    user: EndUser,
    changes: Sequence[SystemChange],
    now: dt.datetime,
    *,
    created: bool = False,
    leagues: bool = True,
) -> list[Fact]:
    """Points paid outside an event (identify's user_creation, an API or anniversary
    completion, a time trigger, a league's reward) move the user's points boards and count in
    their points leagues as an event's points do; returns
    the facts of both. The caller holds the user's lock; `created`: the user was created by
    this change (leaderboards_apply_event); `leagues`: False for a league's own rewards."""
    if not changes:
        return []
    added = {c.system.pk: c.added for c in changes}
    standings = leaderboards_apply_event(tenant, user, now=now, points_added=added, created=created)
    moves = leagues_apply_event(tenant, user, now=now, points_added=added) if leagues else []
    return [
        *steps.points_facts(user.pk, changes),
        *steps.rank_facts(user.pk, standings),
        *steps.league_facts(user.pk, moves),
    ]


def facts_tell(tenant: Tenant, user: EndUser, facts: Sequence[Fact], now: dt.datetime) -> None:
    """Hand what a change did to the apps that react to it, in the caller's transaction:
    notifications first (what they schedule is told too), then webhooks."""
    if facts:
        told = [*facts, *notifications_record(tenant, user, list(facts), now)]
        facts_publish(tenant, user, told, now)


def facts_publish(tenant: Tenant, user: EndUser, facts: Sequence[Fact], now: dt.datetime) -> None:
    """What a change did, to the webhooks (outbox events in the caller's transaction) and to
    the live streams (published once it commits)."""
    webhooks_record(tenant, user, facts, now)
    streams_record(tenant, user, facts)
