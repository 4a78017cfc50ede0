"""Handing due rows of a delivery log to workers: the claim every dispatcher makes (email and
push messages, webhook deliveries), written once.

A dispatcher run picks the rows that are due and not already handed out, marks them
`enqueued_at`, and sends their ids to send tasks. Several dispatchers may run at once (beat,
cron, `serve`): `select_for_update(skip_locked=True)` keeps them off each other's rows, and the
update repeats the due condition, so a row another run handed out in between is not handed out
twice. A row handed out longer ago than `reenqueue_after` without being sent (a lost task) is
due again; the send task's own conditional claim makes a second hand-out harmless.
"""

import datetime as dt
from typing import Any

from django.db import models, transaction
from django.db.models import Q


def due_rows_enqueue(
    model: type[models.Model],
    due: Q,
    now: dt.datetime,
    *,
    reenqueue_after: dt.timedelta,
    order_by: tuple[str, ...],
    fields: tuple[str, ...] = (),
    limit: int,
) -> list[tuple[Any, ...]]:
    """Mark up to `limit` rows of `model` that are `due`, in `order_by` order, as handed to
    workers now; returns (pk, *fields) of each."""
    due = due & (Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=now - reenqueue_after))
    manager = model._default_manager
    with transaction.atomic():
        rows = list(
            manager.select_for_update(skip_locked=True)
            .filter(due)
            .order_by(*order_by)
            .values_list("pk", *fields)[:limit]
        )
        manager.filter(due, pk__in=[row[0] for row in rows]).update(enqueued_at=now)
    return rows
