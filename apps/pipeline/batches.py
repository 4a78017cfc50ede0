"""Batches of events (POST /admin/v1/metrics/events): stored all or nothing with the request,
then applied by a worker one user at a time through the pipeline of services.event_apply."""

import datetime as dt
import logging
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.core.api.naming import wire_namer
from apps.core.db import retrying_deadlocks
from apps.core.errors import ApplicationError
from apps.core.outbox import outbox_enqueue
from apps.pipeline import bulk
from apps.pipeline.config import event_config
from apps.pipeline.models import BatchRequest, QueuedEvent, QueuedEventStatus
from apps.pipeline.services import (
    EventInput,
    event_apply,
    event_input_from_payload,
    event_user_resolve,
)
from apps.users.models import EndUser
from apps.users.services import attribute_values_check, user_lock
from apps.users.wire import user_fields_stored

logger = logging.getLogger("gamify.pipeline")


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
    """Process a batch's pending events; returns how many were processed now.

    On PostgreSQL, for a tenant whose configuration allows it (bulk.bulk_ready), the events go
    in chunks of bulk.BULK_MAX_EVENTS in `seq` order, each applied in bulk in one transaction
    (apps/pipeline/bulk.py); a chunk that cannot be goes the grouped way. Otherwise they are
    grouped by user: each user's events are applied in `seq` order, in transactions of at most
    GROUP_MAX_EVENTS that lock their rows, take the user's lock once and load the user once
    (`_group_process`); users come in the order of their first event. Events of different users
    commute except on leaderboards (README, Batches). Safe to run twice or concurrently: the
    rows are locked and re-checked before they are applied, and marked done in the same
    transaction. The locks are blocking ones, so a second worker waits instead of overtaking and
    reordering a user's events; a worker that dies leaves the committed chunks or groups done
    and the rest pending.
    """
    pending = list(
        QueuedEvent.objects.filter(batch_id=batch_id, status=QueuedEventStatus.PENDING)
        .order_by("seq")
        .values_list("pk", "tenant_id", "payload")
    )
    if not pending:
        return 0
    tenant = Tenant.objects.get(pk=pending[0][1])
    if not bulk.bulk_ready(tenant):
        return _grouped_process(pending)
    processed = 0
    for start in range(0, len(pending), bulk.BULK_MAX_EVENTS):
        processed += _chunk_process(pending[start : start + bulk.BULK_MAX_EVENTS])
    return processed


Pending = list[tuple[int, int, dict[str, Any]]]  # (row pk, tenant pk, payload) in seq order


def _grouped_process(pending: Pending) -> int:
    groups: dict[tuple[int, str], list[int]] = {}
    for pk, tenant_pk, payload in pending:
        groups.setdefault((tenant_pk, payload["userId"]), []).append(pk)
    processed = 0
    for row_ids in groups.values():
        for start in range(0, len(row_ids), GROUP_MAX_EVENTS):
            processed += _group_process_retried(row_ids[start : start + GROUP_MAX_EVENTS])
    return processed


def _chunk_process(pending: Pending) -> int:
    """One chunk in bulk, or, when bulk.NotInBulk says so (its transaction rolled back), the
    grouped way."""
    row_ids = [pk for pk, _, _ in pending]
    try:
        return retrying_deadlocks(
            lambda: _chunk_bulk(row_ids),
            GROUP_DEADLOCK_RETRIES,
            f"a batch chunk (rows from {row_ids[0]})",
        )
    except bulk.NotInBulk:
        return _grouped_process(pending)


def _chunk_bulk(row_ids: list[int]) -> int:
    with transaction.atomic():
        rows = _rows_locked(row_ids)
        if not rows:
            return 0
        _outcome_save(bulk.chunk_apply(rows[0].tenant, rows, _group_apply))
    return len(rows)


def _rows_locked(row_ids: list[int]) -> list[QueuedEvent]:
    """The still pending rows among `row_ids` (one tenant's), locked, in seq order."""
    rows = list(
        # The rows only, not the tenant (a configuration change writes the tenant row, and
        # need not wait for a batch), which is read once.
        QueuedEvent.objects.select_for_update()
        .filter(pk__in=row_ids, status=QueuedEventStatus.PENDING)
        .order_by("seq")
    )
    if rows:
        tenant = Tenant.objects.get(pk=rows[0].tenant_id)
        for row in rows:
            row.tenant = tenant
    return rows


def _group_process_retried(row_ids: list[int]) -> int:
    # A group rolled back as a deadlock victim left its rows pending: it runs again whole.
    return retrying_deadlocks(
        lambda: _group_process(row_ids),
        GROUP_DEADLOCK_RETRIES,
        f"a batch group (rows from {row_ids[0]})",
    )


def _group_process(row_ids: list[int]) -> int:
    """Apply the still pending rows among `row_ids` (one user's, in seq order) in one
    transaction; returns how many."""
    with transaction.atomic():
        rows = _rows_locked(row_ids)
        if not rows:
            return 0
        _outcome_save(_group_apply(rows[0].tenant, rows))
    return len(rows)


def _group_apply(tenant: Tenant, rows: list[QueuedEvent]) -> bulk.ChunkResult:
    """Apply one user's locked rows event by event in the caller's transaction. An event that
    raises ApplicationError rolls back to its savepoint and fails with its reason; any other
    error rolls back the caller's transaction."""
    user_id = rows[0].payload["userId"]
    user = user_lock(tenant, user_id)  # None until an event of the group creates it
    result = bulk.ChunkResult([], [])
    for row in rows:
        try:
            with transaction.atomic():
                user = _queued_event_apply(tenant, user, row)
            result.done.append(row.pk)
        except ApplicationError as exc:
            # Validated at acceptance; configuration may have changed since (a deleted
            # metric or attribute), or the stored user (an email removed). The event is
            # kept with its reason.
            result.failed.append((row, exc))
            # The savepoint undid the event's writes, not what it set on the loaded
            # user: load it again, as the next event alone would.
            user = user_lock(tenant, user_id)
    return result


def _outcome_save(result: bulk.ChunkResult) -> None:
    """Mark the applied rows done and the failed ones failed, with their reasons."""
    now = timezone.now()
    for row, exc in result.failed:
        # In the admin API's words, as the event was sent.
        row.status, row.error = QueuedEventStatus.FAILED, exc.worded(wire_namer(None))
        row.processed_at = now
        row.save(update_fields=["status", "error", "processed_at"])
        logger.warning("queued event %s failed: %s", row, exc.message)
    QueuedEvent.objects.filter(pk__in=result.done).update(
        status=QueuedEventStatus.DONE, processed_at=now
    )


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
