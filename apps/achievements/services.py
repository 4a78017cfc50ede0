"""Writes of achievements and completions."""

import datetime as dt
import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.achievements import domain
from apps.achievements.choices import Status, Trigger
from apps.achievements.errors import AchievementInvalidError
from apps.achievements.models import (
    Achievement,
    AchievementCompletion,
    AchievementPrerequisite,
)
from apps.achievements.selectors import (
    AchievementDef,
    achievement_definitions,
    qualifying_user_pks,
    user_completions,
)
from apps.core.outbox import outbox_enqueue
from apps.metrics.models import Metric
from apps.metrics.selectors import metric_filtered_total
from apps.users.choices import AttributeType
from apps.users.domain import local_date
from apps.users.models import EndUser
from apps.users.services import attribute_refs_check

logger = logging.getLogger("gamify.achievements")

# Fields that belong to one trigger only (reference §3.5).
TRIGGER_FIELDS = {
    Trigger.API: ("key",),
    Trigger.METRIC: ("metricId", "metricValue", "eventAttributes"),
    Trigger.STREAK: ("streakLength",),
    Trigger.ANNIVERSARY: ("anniversaryYears",),
    Trigger.ACHIEVEMENT: ("achievementIds",),
}
REQUIRED_FIELDS = {
    Trigger.API: ("key",),
    Trigger.METRIC: ("metricId", "metricValue"),
    Trigger.STREAK: ("streakLength",),
    Trigger.ANNIVERSARY: ("anniversaryYears",),
    Trigger.ACHIEVEMENT: ("achievementIds",),
}
BACKDATE_BATCH = 1000


@dataclass(frozen=True)
class Completed:
    definition: AchievementDef
    completion_id: str
    completed_at: dt.datetime


# --- completing -----------------------------------------------------------------------------


def _insert(
    tenant: Tenant, user: EndUser, definitions: list[AchievementDef], now: dt.datetime
) -> list[Completed]:
    """Insert the completions in one statement; the caller holds the user's lock, so only a
    backdating job can race it, and then each row is retried alone and the unique constraint
    decides."""
    if not definitions:
        return []
    rows = [
        AchievementCompletion(tenant=tenant, achievement_id=d.pk, user=user, completed_at=now)
        for d in definitions
    ]
    try:
        with transaction.atomic():
            AchievementCompletion.objects.bulk_create(rows)
        return [Completed(d, str(r.public_id), now) for d, r in zip(definitions, rows, strict=True)]
    except IntegrityError:
        pass
    completed = []
    for definition, row in zip(definitions, rows, strict=True):
        try:
            with transaction.atomic():
                row.save(force_insert=True)
        except IntegrityError:
            continue
        completed.append(Completed(definition, str(row.public_id), now))
    return completed


def _with_composites(
    tenant: Tenant, user: EndUser, done: set[int], newly: list[AchievementDef]
) -> list[AchievementDef]:
    """Add the composites that the new completions complete, in the same step."""
    definitions = achievement_definitions(tenant)
    composites = {
        d.pk: d.prerequisites
        for d in definitions.values()
        if d.trigger == Trigger.ACHIEVEMENT and d.completable and d.open_to(user.attributes)
    }
    extra = domain.composites_completed(done | {d.pk for d in newly}, composites)
    return newly + [definitions[pk] for pk in extra]


def achievements_apply_event(
    tenant: Tenant,
    user: EndUser,
    metric_pk: int,
    event_attributes: dict[str, str],
    total: Decimal,
    streak_length: int,
    now: dt.datetime,
) -> list[Completed]:
    """The achievements step of the pipeline (the caller holds the user's lock)."""
    definitions = achievement_definitions(tenant).values()
    metric_defs = [
        d
        for d in definitions
        if d.completable and d.trigger == Trigger.METRIC and d.metric_pk == metric_pk
    ]
    streak_defs = [
        d
        for d in definitions
        if d.completable
        and d.trigger == Trigger.STREAK
        and streak_length >= (d.streak_length or 0) > 0
    ]
    composites = any(d.completable and d.trigger == Trigger.ACHIEVEMENT for d in definitions)
    if not metric_defs and not streak_defs and not composites:
        return []
    done = set(user_completions(user))
    newly: list[AchievementDef] = []
    # Achievements sharing a filter share one aggregate query.
    filtered_totals: dict[tuple[tuple[str, str], ...], Decimal] = {}
    for d in metric_defs:
        if d.pk in done or not d.open_to(user.attributes) or d.metric_value is None:
            continue
        if d.event_filters:
            # Only matching events count; an event that does not match changes nothing.
            if not domain.attributes_match(d.event_filters, event_attributes):
                continue
            signature = tuple(sorted(d.event_filters.items()))
            if signature not in filtered_totals:
                filtered_totals[signature] = metric_filtered_total(user, metric_pk, d.event_filters)
            reached = filtered_totals[signature]
        elif d.event_filters is None:
            continue  # a filter names a deleted attribute
        else:
            reached = total
        if domain.metric_reached(reached, d.metric_value):
            newly.append(d)
    newly += [d for d in streak_defs if d.pk not in done and d.open_to(user.attributes)]
    return _insert(tenant, user, _with_composites(tenant, user, done, newly), now)


@dataclass(frozen=True)
class ApiCompletion:
    completion_id: str
    completed_at: dt.datetime
    created: bool
    also_completed: list[Completed]  # composites completed with it


def achievement_complete_api(
    tenant: Tenant, user: EndUser, definition: AchievementDef, now: dt.datetime | None = None
) -> ApiCompletion:
    """POST /achievements/{key}/complete. Completing twice returns the first completion
    (created=False) and creates nothing."""
    now = now or timezone.now()
    existing = AchievementCompletion.objects.filter(achievement_id=definition.pk, user=user).first()
    if existing is not None:
        return ApiCompletion(str(existing.public_id), existing.completed_at, False, [])
    if definition.status != Status.ACTIVE:
        raise AchievementInvalidError("This achievement is locked: it cannot be completed")
    if not definition.open_to(user.attributes):
        raise AchievementInvalidError(
            "This user does not meet the achievement's user attribute filters"
        )
    done = set(user_completions(user))
    completed = _insert(tenant, user, _with_composites(tenant, user, done, [definition]), now)
    first = next((c for c in completed if c.definition.pk == definition.pk), None)
    if first is None:  # created concurrently by a backdating job
        row = AchievementCompletion.objects.get(achievement_id=definition.pk, user=user)
        return ApiCompletion(str(row.public_id), row.completed_at, False, completed)
    return ApiCompletion(
        first.completion_id, now, True, [c for c in completed if c.definition.pk != definition.pk]
    )


def anniversaries_complete(
    tenant: Tenant, users: list[EndUser], now: dt.datetime
) -> list[tuple[EndUser, list[Completed]]]:
    """Complete the anniversary achievements due to these users today in their time zone."""
    definitions = [
        d
        for d in achievement_definitions(tenant).values()
        if d.trigger == Trigger.ANNIVERSARY and d.completable
    ]
    results = []
    for user in users:
        today = local_date(now, user.tz)
        done = set(user_completions(user))
        due = [
            d
            for d in definitions
            if d.pk not in done
            and d.open_to(user.attributes)
            and domain.anniversary_reached(user.sign_up_date, d.anniversary_years or 0, today)
        ]
        if due:
            results.append(
                (user, _insert(tenant, user, _with_composites(tenant, user, done, due), now))
            )
    return results


# --- backdating -----------------------------------------------------------------------------


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
        EndUser.objects.filter(tenant=tenant, pk__in=_qualifying_user_pks(definition, tenant, now))
        .exclude(achievements__achievement_id=achievement_pk)
        .order_by("pk")
    )
    for key, value in definition.user_filters.items():
        candidates = candidates.filter(**{f"attributes__{key}": value})
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


# --- configuration (admin API) ---------------------------------------------------------------


def _apply(tenant: Tenant, achievement: Achievement, data: dict[str, Any], creating: bool) -> bool:
    """Set fields from validated data; returns whether qualification may have changed."""
    trigger = data.get("trigger", achievement.trigger)
    changed_trigger = trigger != achievement.trigger
    for other, fields in TRIGGER_FIELDS.items():
        if other != trigger:
            given = [f for f in fields if data.get(f) is not None]
            if given:
                raise AchievementInvalidError(
                    f"{', '.join(given)} only apply to {other} achievements"
                )
    if creating or changed_trigger:
        missing = [f for f in REQUIRED_FIELDS[trigger] if data.get(f) is None]
        if missing:
            raise AchievementInvalidError(f"{trigger} achievements need {', '.join(missing)}")
        achievement.key = achievement.metric = achievement.metric_value = None
        achievement.streak_length = achievement.anniversary_years = None
        achievement.event_attributes = []
    if trigger == Trigger.ACHIEVEMENT and "achievementIds" in data and not data["achievementIds"]:
        raise AchievementInvalidError("achievementIds: a composite needs at least one prerequisite")
    achievement.trigger = trigger
    for wire, attr in (("name", "name"), ("description", "description"), ("status", "status")):
        if wire in data:
            setattr(achievement, attr, data[wire])
    if "badge" in data:
        achievement.badge_url = data["badge"]["url"] if data["badge"] else None
    if "userAttributes" in data:
        achievement.user_attributes = attribute_refs_check(
            tenant, data["userAttributes"] or [], AttributeType.USER
        )
    if data.get("key") is not None:
        clash = Achievement.objects.filter(tenant=tenant, key=data["key"]).exclude(
            pk=achievement.pk
        )
        if clash.exists():
            raise AchievementInvalidError("Key already in use by another achievement")
        achievement.key = data["key"]
    if data.get("metricId") is not None:
        metric = Metric.objects.filter(tenant=tenant, public_id=data["metricId"]).first()
        if metric is None:
            raise AchievementInvalidError("metricId: Metric not found by ID")
        achievement.metric = metric
    if data.get("metricValue") is not None:
        achievement.metric_value = data["metricValue"]
    if "eventAttributes" in data:
        achievement.event_attributes = attribute_refs_check(
            tenant, data["eventAttributes"] or [], AttributeType.EVENT
        )
    for wire, attr in (
        ("streakLength", "streak_length"),
        ("anniversaryYears", "anniversary_years"),
    ):
        if data.get(wire) is not None:
            setattr(achievement, attr, data[wire])
    return (
        creating
        or changed_trigger
        or bool(
            {
                "metricId",
                "metricValue",
                "eventAttributes",
                "streakLength",
                "anniversaryYears",
                "achievementIds",
                "userAttributes",
                "status",
            }
            & set(data)
        )
    )


def _set_prerequisites(tenant: Tenant, achievement: Achievement, ids: list[str]) -> None:
    prerequisites = list(Achievement.objects.filter(tenant=tenant, public_id__in=ids))
    if len(prerequisites) != len(set(ids)):
        raise AchievementInvalidError("achievementIds: Achievement not found by ID")
    if any(p.pk == achievement.pk for p in prerequisites):
        raise AchievementInvalidError("achievementIds: an achievement cannot require itself")
    # Refuse cycles: no prerequisite may (transitively) require this achievement.
    frontier = {p.pk for p in prerequisites}
    seen: set[int] = set()
    while frontier:
        if achievement.pk in frontier:
            raise AchievementInvalidError("achievementIds: prerequisites would form a cycle")
        seen |= frontier
        frontier = (
            set(
                AchievementPrerequisite.objects.filter(composite_id__in=frontier).values_list(
                    "prerequisite_id", flat=True
                )
            )
            - seen
        )
    achievement.prerequisites.set(prerequisites)


def achievement_save(
    tenant: Tenant, achievement: Achievement | None, data: dict[str, Any]
) -> Achievement:
    """Create (achievement None) or update from a validated admin item. Activating, or
    editing an active achievement's qualification, backdates it after commit."""
    creating = achievement is None
    target = achievement or Achievement(tenant=tenant)
    was_active = not creating and target.status == Status.ACTIVE
    qualification_changed = _apply(tenant, target, data, creating)
    target.save()
    if target.trigger == Trigger.ACHIEVEMENT and data.get("achievementIds") is not None:
        _set_prerequisites(tenant, target, data["achievementIds"])
    elif target.trigger != Trigger.ACHIEVEMENT:
        target.prerequisites.clear()
    tenant_config_changed(tenant)
    if target.status == Status.ACTIVE and (not was_active or qualification_changed):
        from apps.achievements.tasks import achievement_backdate_task

        # Recorded in this transaction: if the task never arrives, the outbox sends it again.
        outbox_enqueue(achievement_backdate_task, target.pk)
    return target


def achievement_delete(tenant: Tenant, achievement: Achievement) -> None:
    """Deletes the achievement and its completions."""
    if achievement.required_by.exists():
        raise AchievementInvalidError(
            "Other achievements require this one; remove it from their achievementIds first"
        )
    achievement.delete()
    tenant_config_changed(tenant)
