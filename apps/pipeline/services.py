"""Event processing: the only module that knows the order of steps (ARCHITECTURE.md §5)."""

import datetime as dt
import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements.selectors import AchievementDef
from apps.achievements.services import ApiCompletion, Completed, achievement_complete_api
from apps.core.errors import ApplicationError
from apps.core.facts import Fact
from apps.core.outbox import outbox_enqueue
from apps.metrics.selectors import MetricDef, event_by_idempotency_key, user_metric_total
from apps.metrics.services import event_record
from apps.notifications.services import notifications_record
from apps.pipeline import steps
from apps.pipeline.config import EventConfig, event_config
from apps.pipeline.models import BatchRequest, QueuedEvent, QueuedEventStatus
from apps.pipeline.outcomes import StreakOutcome
from apps.points.services import points_for_achievements
from apps.users.models import EndUser
from apps.users.services import (
    UserUpsertResult,
    attribute_values_check,
    user_create_or_lock,
    user_lock,
    user_update_fields,
    user_upsert,
)
from apps.webhooks.services import webhooks_record

logger = logging.getLogger("gamify.pipeline")


@dataclass(frozen=True)
class EventInput:
    metric_key: str
    user_id: str
    user_fields: dict[str, Any]
    value: Decimal
    attributes: dict[str, str]
    idempotency_key: str | None = None


@dataclass(frozen=True)
class EventResult:
    body: dict[str, Any]
    replayed: bool


def _response(
    event_id: str,
    metric: MetricDef,
    total: Decimal,
    streak: StreakOutcome,
    achievements: list[dict[str, Any]],
    points: dict[str, Any],
    leaderboards: dict[str, Any],
    idempotency_key: str | None,
    replayed: bool,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "eventId": event_id,
        "metricId": metric.public_id,
        "total": total,
        "achievements": achievements,
        "currentStreak": streak.render(),
        "points": points,
        "leaderboards": leaderboards,
    }
    if idempotency_key is not None:
        body["idempotencyKey"] = idempotency_key
        body["idempotentReplayed"] = replayed
    return body


def event_process(tenant: Tenant, data: EventInput, now: dt.datetime | None = None) -> EventResult:
    """Process one metric event synchronously, in one transaction, and describe its effects.

    Raises NotFoundError for an unknown metric and ValidationError for undefined attribute
    keys before anything is written.
    """
    now = now or timezone.now()
    config = event_config(tenant, data.metric_key)
    attribute_values_check(tenant, data.attributes, "event")
    with transaction.atomic():
        identified = _event_user(tenant, user_lock(tenant, data.user_id), data, now)
        return event_apply(tenant, identified, config, data, now)


def _event_user(
    tenant: Tenant, locked: EndUser | None, data: EventInput, now: dt.datetime
) -> UserUpsertResult:
    """The event's user: the one whose row lock the caller took, or, unknown, created now with
    the event's user fields (or locked, if a concurrent request created it first)."""
    if locked is not None:
        return UserUpsertResult(user=locked, created=False)
    return user_create_or_lock(tenant, data.user_id, data.user_fields, now)


def event_apply(
    tenant: Tenant,
    identified: UserUpsertResult,
    config: EventConfig,
    data: EventInput,
    now: dt.datetime,
) -> EventResult:
    """Apply one event to a user whose row lock the caller holds, in the caller's transaction:
    the idempotency check, the inline user fields, the event and every feature step, then the
    notifications and webhooks of what it did. A single event (event_process) and a user's
    events of a batch (queued_events_process) both come through here."""
    user, created = identified.user, identified.created
    if not created and data.idempotency_key is not None:
        replay = _replay(tenant, user, config, data.idempotency_key, now)
        if replay is not None:
            return replay
    if not created:
        user_update_fields(tenant, user, data.user_fields, now)
    recorded = event_record(
        tenant, user, config.metric, data.value, data.attributes, data.idempotency_key, now
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
    )
    streak = steps.streak_step(ctx)
    achievements = steps.achievements_step(ctx, streak)
    points = steps.points_step(ctx, streak, achievements)
    leaderboards = steps.leaderboards_step(ctx, streak, points)
    facts = steps.event_facts(ctx, streak, achievements, points, leaderboards)
    # Notifications tell which of them became due: webhooks hear of those too.
    facts += notifications_record(tenant, user, facts, now)
    webhooks_record(tenant, user, facts, now)
    body = _response(
        str(recorded.event.public_id),
        config.metric,
        recorded.total,
        streak,
        list(achievements.completed),
        points.systems,
        leaderboards.boards,
        data.idempotency_key,
        replayed=False,
    )
    return EventResult(body=body, replayed=False)


def _replay(
    tenant: Tenant, user: EndUser, config: EventConfig, key: str, now: dt.datetime
) -> EventResult | None:
    """The answer to an event whose idempotency key this user already used for this metric,
    or None. Checked only with the user's lock held: a concurrent request with the same key
    has either committed its event (we replay it) or not started (we go first)."""
    original = event_by_idempotency_key(user, config.metric.pk, key)
    if original is None:
        return None
    # A replay applies nothing, not even the inline user fields: the state it reports is the
    # state the first request left, plus whatever came since.
    body = _response(
        str(original.public_id),
        config.metric,
        user_metric_total(user, config.metric.pk),
        steps.streak_current(tenant, user, now),
        [],
        {},
        {},
        key,
        replayed=True,
    )
    return EventResult(body=body, replayed=True)


@dataclass(frozen=True)
class CompletionResult:
    completion: ApiCompletion
    points: dict[str, dict[str, Any]]  # by system key, as the API's `points`


def achievement_complete(
    tenant: Tenant, user: EndUser, definition: AchievementDef, now: dt.datetime | None = None
) -> CompletionResult:
    """Complete an api-trigger achievement for a user whose row lock the caller holds (the API's
    POST /achievements/{key}/complete, the dashboard's user page): the completion and the
    composites it completes, their points triggers, then the notifications and webhooks of all
    that. Completing it again changes nothing (`completion.created` is False). Raises
    AchievementInvalidError for a locked achievement or a user outside its filters."""
    now = now or timezone.now()
    result = achievement_complete_api(tenant, user, definition, now)
    if not result.created:
        return CompletionResult(result, {})
    completed = (definition.pk, *(c.definition.pk for c in result.also_completed))
    points = points_for_achievements(tenant, user, completed, now)
    first = Completed(definition, result.completion_id, result.completed_at)
    facts: list[Fact] = list(steps.completion_facts(user, [first, *result.also_completed]))
    facts += steps.points_facts(user.pk, points)
    facts += notifications_record(tenant, user, facts, now)
    webhooks_record(tenant, user, facts, now)
    return CompletionResult(result, points)


def user_identify(
    tenant: Tenant,
    user_id: str,
    fields: dict[str, Any],
    *,
    create: bool,
    now: dt.datetime | None = None,
) -> UserUpsertResult:
    """POST /users, PUT and PATCH /users/{id}: the user's fields; a user created here gets the
    user_creation points at once, as Trophy pays them (a balance read right after identify shows
    them), reported to notifications and webhooks like any points change. The caller's
    transaction covers it all."""
    result = user_upsert(tenant, user_id, fields, create=create, now=now)
    if not result.created:
        return result
    now = now or timezone.now()
    # The new row is this transaction's own: no one else can hold or take its lock before commit.
    points = points_for_achievements(tenant, result.user, (), now)
    if points:
        facts = steps.points_facts(result.user.pk, points)
        facts += notifications_record(tenant, result.user, facts, now)
        webhooks_record(tenant, result.user, facts, now)
    return result


def event_input_from_payload(payload: dict[str, Any]) -> EventInput:
    """Rebuild an EventInput from a validated batch item stored as JSON."""
    return EventInput(
        metric_key=payload["key"],
        user_id=payload["userId"],
        user_fields=payload["userFields"],
        value=Decimal(payload["value"]),
        attributes=payload["attributes"],
        idempotency_key=payload.get("idempotencyKey"),
    )


def events_enqueue(
    tenant: Tenant, inputs: list[EventInput], idempotency_key: str | None = None
) -> int:
    """Record a validated batch, all of it or nothing, and process it after commit (a worker,
    or inline without one). With an idempotency key already used by the tenant, store nothing
    and answer the original batch's count."""
    from apps.pipeline.tasks import queued_events_process_task

    now = timezone.now()
    rows = [
        QueuedEvent(
            tenant=tenant,
            seq=seq,
            accepted_at=now,
            payload={
                "key": item.metric_key,
                "userId": item.user_id,
                "userFields": _json_ready(item.user_fields),
                "value": str(item.value),
                "attributes": item.attributes,
                "idempotencyKey": item.idempotency_key,
            },
        )
        for seq, item in enumerate(inputs)
    ]
    batch_id = rows[0].batch_id
    for row in rows:
        row.batch_id = batch_id
    with transaction.atomic():
        if idempotency_key is not None:
            replayed = _batch_replayed(tenant, idempotency_key, batch_id, len(rows), now)
            if replayed is not None:
                return replayed
        QueuedEvent.objects.bulk_create(rows)
        outbox_enqueue(queued_events_process_task, str(batch_id))
    return len(rows)


def _batch_replayed(
    tenant: Tenant, key: str, batch_id: Any, accepted: int, now: dt.datetime
) -> int | None:
    """The original `accepted` of a batch sent before with this key, or None after recording
    this batch under it. Two requests racing with one key: the unique constraint lets one
    record it; the other waits for it and answers as a replay."""
    existing = BatchRequest.objects.filter(tenant=tenant, idempotency_key=key).first()
    if existing is not None:
        return existing.accepted
    try:
        with transaction.atomic():
            BatchRequest.objects.create(
                tenant=tenant,
                idempotency_key=key,
                batch_id=batch_id,
                accepted=accepted,
                created=now,
            )
    except IntegrityError:
        return BatchRequest.objects.get(tenant=tenant, idempotency_key=key).accepted
    return None


def _json_ready(fields: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value.isoformat() if isinstance(value, dt.date) else value
        for key, value in fields.items()
    }


# A user's events of a batch are applied in one transaction of at most this many: the user's
# row lock is held until it commits (about 10 ms an event with every feature configured), so a
# batch of 1,000 events for one user keeps that user's own API requests waiting half a second
# at a time, not ten seconds. Batches spread over users rarely reach it (1,000 events over 50
# users: 20 each, one lock and one commit per user).
GROUP_MAX_EVENTS = 50


def queued_events_process(batch_id: str) -> int:
    """Process a batch's pending events, grouped by user; returns how many were processed now.

    Each user's events are applied in `seq` order, in transactions of at most GROUP_MAX_EVENTS
    that lock their rows, take the user's lock once and load the user once (`_group_process`);
    users come in the order of their first event. Events of different users commute except on
    leaderboards (README, Batches). Safe to run twice or concurrently: the rows are locked and
    re-checked before they are applied, and marked done in the same transaction. The locks are
    blocking ones, so a second worker waits instead of overtaking and reordering a user's
    events; a worker that dies leaves the committed groups done and the rest pending.
    """
    groups: dict[tuple[int, str], list[int]] = {}
    pending = (
        QueuedEvent.objects.filter(batch_id=batch_id, status=QueuedEventStatus.PENDING)
        .order_by("seq")
        .values_list("pk", "tenant_id", "payload")
    )
    for pk, tenant_pk, payload in pending:
        groups.setdefault((tenant_pk, payload["userId"]), []).append(pk)
    processed = 0
    for row_ids in groups.values():
        for start in range(0, len(row_ids), GROUP_MAX_EVENTS):
            processed += _group_process(row_ids[start : start + GROUP_MAX_EVENTS])
    return processed


def _group_process(row_ids: list[int]) -> int:
    """Apply the still pending rows among `row_ids` (one user's, in seq order) in one
    transaction; returns how many. An event that raises ApplicationError rolls back to its
    savepoint and is kept as failed with its reason; any other error rolls back the group."""
    with transaction.atomic():
        rows = list(
            # `of`: the rows only, not the tenant joined to them (a configuration change
            # writes the tenant row, and need not wait for a batch).
            QueuedEvent.objects.select_for_update(of=("self",))
            .select_related("tenant")
            .filter(pk__in=row_ids, status=QueuedEventStatus.PENDING)
            .order_by("seq")
        )
        if not rows:
            return 0
        tenant, user_id = rows[0].tenant, rows[0].payload["userId"]
        user = user_lock(tenant, user_id)  # None until an event of the group creates it
        done: list[int] = []
        for row in rows:
            try:
                with transaction.atomic():
                    user = _queued_event_apply(tenant, user, row)
                done.append(row.pk)
            except ApplicationError as exc:
                # Validated at acceptance; configuration may have changed since (a deleted
                # metric or attribute), or the stored user (an email removed). The event is
                # kept with its reason.
                row.status, row.error = QueuedEventStatus.FAILED, exc.message
                row.processed_at = timezone.now()
                row.save(update_fields=["status", "error", "processed_at"])
                logger.warning("queued event %s failed: %s", row, exc.message)
                # The savepoint undid the event's writes, not what it set on the loaded
                # user: load it again, as the next event alone would.
                user = user_lock(tenant, user_id)
        QueuedEvent.objects.filter(pk__in=done).update(
            status=QueuedEventStatus.DONE, processed_at=timezone.now()
        )
    return len(rows)


def _queued_event_apply(tenant: Tenant, user: EndUser | None, row: QueuedEvent) -> EndUser:
    """One event of a group, for the locked `user` (None: unknown yet); returns the user, who
    may have been created by this event."""
    data = event_input_from_payload(row.payload)
    config = event_config(tenant, data.metric_key)
    attribute_values_check(tenant, data.attributes, "event")
    identified = _event_user(tenant, user, data, row.accepted_at)
    event_apply(tenant, identified, config, data, row.accepted_at)
    return identified.user


def queued_events_purge_processed(older_than: dt.datetime) -> int:
    """Delete processed (done or failed) batch rows accepted before `older_than`."""
    deleted, _ = QueuedEvent.objects.filter(
        accepted_at__lt=older_than,
        status__in=[QueuedEventStatus.DONE, QueuedEventStatus.FAILED],
    ).delete()
    # Keys of batches whose rows are gone: a replay that late stores the batch again.
    BatchRequest.objects.filter(created__lt=older_than).delete()
    return deleted
