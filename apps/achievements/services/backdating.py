"""Backdating: when an achievement becomes active or its qualification changes, every user who
already qualifies completes it silently, in batches (run from the outbox)."""

import datetime as dt
import logging
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements import domain
from apps.achievements.choices import Status, Trigger
from apps.achievements.models import Achievement, AchievementCompletion
from apps.achievements.selectors import AchievementDef, achievement_definitions, qualifying_user_pks
from apps.users.domain import local_date
from apps.users.models import EndUser
from apps.users.selectors import attributes_q

logger = logging.getLogger("gamify.achievements")

BACKDATE_BATCH = 1000


def _qualifying_user_pks(definition: AchievementDef, tenant: Tenant, now: dt.datetime) -> Any:
    """A queryset of the pks of users who already qualify, before attribute filters. One day of
    slack for anniversaries in zones ahead of UTC; the exact check runs per user."""
    return qualifying_user_pks(definition, tenant, now.date() + dt.timedelta(days=1))


def achievement_backdate(achievement_pk: int, now: dt.datetime | None = None) -> int:
    """Complete an active achievement, silently, for every user who already qualifies: in
    batches, each one transaction, so millions of users never sit in one. Returns the number
    of completions created. Idempotent: the unique constraint skips users already done, so the
    outbox may run it again after a lost worker."""
    return _backdate(achievement_pk, now or timezone.now())


def _backdate(achievement_pk: int, now: dt.datetime) -> int:
    achievement = Achievement.objects.select_related("tenant").filter(pk=achievement_pk).first()
    if achievement is None or achievement.status != Status.ACTIVE:
        return 0
    tenant = achievement.tenant
    definition = achievement_definitions(tenant).get(achievement_pk)
    if definition is None or definition.user_filters is None:
        return 0
    candidates = (
        EndUser.objects.filter(
            attributes_q(definition.user_filters),
            tenant=tenant,
            pk__in=_qualifying_user_pks(definition, tenant, now),
        )
        .exclude(achievements__achievement_id=achievement_pk)
        .order_by("pk")
    )
    created, last_pk = 0, 0
    while True:
        batch = list(
            candidates.filter(pk__gt=last_pk).only("pk", "tz", "sign_up_date")[:BACKDATE_BATCH]
        )
        if not batch:
            break
        last_pk = batch[-1].pk
        if definition.trigger == Trigger.ANNIVERSARY:
            batch = [
                u
                for u in batch
                if domain.anniversary_reached(
                    u.sign_up_date, definition.anniversary_years or 0, local_date(now, u.tz)
                )
            ]
        rows = [
            AchievementCompletion(
                tenant=tenant,
                achievement_id=achievement_pk,
                user=u,
                completed_at=now,
                backdated=True,
            )
            for u in batch
        ]
        with transaction.atomic():
            AchievementCompletion.objects.bulk_create(rows, ignore_conflicts=True)
        created += len(rows)
    # Composites that require this achievement may now be complete for some users too.
    for composite in Achievement.objects.filter(prerequisites=achievement_pk, status=Status.ACTIVE):
        created += achievement_backdate(composite.pk, now)
    logger.info("backdated achievement=%s users=%d", achievement_pk, created)
    return created
