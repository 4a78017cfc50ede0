"""Batches of events (POST /admin/v1/metrics/events): stored all or nothing with the request,
then applied by a worker one user at a time through the pipeline of services.event_apply."""

import datetime as dt
import logging
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.core.api.naming import wire_namer
from apps.core.db import retrying_deadlocks
from apps.core.errors import ApplicationError
from apps.core.outbox import outbox_enqueue
from apps.pipeline.config import event_config
from apps.pipeline.models import BatchRequest, QueuedEvent, QueuedEventStatus
from apps.pipeline.services import EventInput, event_apply, event_user_resolve
from apps.users.models import EndUser
from apps.users.services import attribute_values_check, user_lock
from apps.users.wire import user_fields_restored, user_fields_stored

logger = logging.getLogger("gamify.pipeline")


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
                "userFields": user_fields_stored(item.user_fields),
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


# A user's events of a batch are applied in one transaction of at most this many: the user's
# row lock is held until it commits (about 10 ms an event with every feature configured), so a
# batch of 1,000 events for one user keeps that user's own API requests waiting half a second
# at a time, not ten seconds. Batches spread over users rarely reach it (1,000 events over 50
# users: 20 each, one lock and one commit per user).
GROUP_MAX_EVENTS = 50
# A group that PostgreSQL aborts as a deadlock is run again at once, this many times, before the
# error goes to the outbox's later retries. Unlike a single event, a group holds the locks of
# several events, taken in no fixed order: an earlier event's per-run lock as a newcomer on a
# full board (apps/leaderboards/sql.lock_run) while a later one waits for the user's own entry,
# which another newcomer displacing it holds, and that newcomer waits for the per-run lock.
GROUP_DEADLOCK_RETRIES = 2


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
            processed += _group_process_retried(row_ids[start : start + GROUP_MAX_EVENTS])
    return processed


def _group_process_retried(row_ids: list[int]) -> int:
    # A group rolled back as a deadlock victim left its rows pending: it runs again whole.
    return retrying_deadlocks(
        lambda: _group_process(row_ids),
        GROUP_DEADLOCK_RETRIES,
        f"a batch group (rows from {row_ids[0]})",
    )


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
                # In the admin API's words, as the event was sent.
                row.status, row.error = QueuedEventStatus.FAILED, exc.worded(wire_namer(None))
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
    identified = event_user_resolve(tenant, user, data, row.accepted_at)
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
