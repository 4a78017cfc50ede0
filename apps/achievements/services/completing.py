"""Completing achievements for one user: the pipeline's achievements step, POST
/achievements/{key}/complete and the anniversaries of the day, each with the composites it
completes. The caller holds the user's lock; the unique constraint decides any race with a
backdating job."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.achievements import domain
from apps.achievements.choices import Status, Trigger
from apps.achievements.errors import AchievementInvalidError
from apps.achievements.models import AchievementCompletion
from apps.achievements.selectors import AchievementDef, achievement_definitions, user_completions
from apps.core.db import CompiledSelect, Load, insert
from apps.metrics.selectors import metric_filtered_total
from apps.users.domain import attributes_match, local_date
from apps.users.models import EndUser


@dataclass(frozen=True)
class Completed:
    definition: AchievementDef
    completion_id: str
    completed_at: dt.datetime


def completions_insert(
    tenant: Tenant, user: EndUser, definitions: list[AchievementDef], now: dt.datetime
) -> list[Completed]:
    """Insert the completions; the caller holds the user's lock, so only a backdating job can
    race it, and then the unique constraint decides: a completion it made first is skipped
    (ON CONFLICT DO NOTHING, one statement per completion, no savepoint)."""
    completed = []
    for definition in definitions:
        row = AchievementCompletion(
            tenant=tenant, achievement_id=definition.pk, user=user, completed_at=now
        )
        if insert(row, unless_conflict=("achievement", "user")):
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


_COMPLETIONS = CompiledSelect(AchievementCompletion, "{m[user]} = %s")


def achievements_event_load(tenant: Tenant, user: EndUser, metric_pk: int) -> Load[set[int]]:
    """What the achievements step reads (the user's completed achievements), for the pipeline
    to read with the other steps' rows; nothing when no achievement can complete."""
    if not any(
        d.completable
        and (
            d.trigger in (Trigger.STREAK, Trigger.ACHIEVEMENT)
            or (d.trigger == Trigger.METRIC and d.metric_pk == metric_pk)
        )
        for d in achievement_definitions(tenant).values()
    ):
        return Load((), _none_completed)
    return Load(((_COMPLETIONS, (user.pk,)),), completed_pks)


def completions_load_many(user_pks: list[int]) -> dict[int, set[int]]:
    """The completed achievements of many users at once (PostgreSQL), one statement."""
    done: dict[int, set[int]] = {pk: set() for pk in user_pks}
    rows = AchievementCompletion.objects.filter(user_id__in=user_pks).values_list(
        "user_id", "achievement_id"
    )
    for user_pk, achievement_pk in rows:
        done[user_pk].add(achievement_pk)
    return done


def _none_completed(_rows: list[list[AchievementCompletion]]) -> set[int]:
    return set()


def completed_pks(rows: list[list[AchievementCompletion]]) -> set[int]:
    return {c.achievement_id for c in rows[0]}


def achievements_due(
    tenant: Tenant,
    user: EndUser,
    *,
    metric_pk: int,
    event_attributes: dict[str, str],
    total: Decimal,
    streak_length: int,
    done: set[int] | None = None,
) -> list[AchievementDef]:
    """The achievements step of the pipeline, without its write (the caller holds the user's
    lock; `completions_insert` writes, a batch in bulk its own way): the achievements an event
    completes, with the composites they complete. `done`: the user's completed achievements,
    when the caller read them (achievements_event_load); only what it lacks is read, and the
    totals of event-filtered achievements."""
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
    if done is None:
        done = set(user_completions(user))
    newly: list[AchievementDef] = []
    # Achievements sharing a filter share one aggregate query.
    filtered_totals: dict[tuple[tuple[str, str], ...], Decimal] = {}
    for d in metric_defs:
        if d.pk in done or not d.open_to(user.attributes) or d.metric_value is None:
            continue
        if d.event_filters:
            # Only matching events count; an event that does not match changes nothing.
            if not attributes_match(d.event_filters, event_attributes):
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
    return _with_composites(tenant, user, done, newly)


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
    completed = completions_insert(
        tenant, user, _with_composites(tenant, user, done, [definition]), now
    )
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
                (
                    user,
                    completions_insert(
                        tenant, user, _with_composites(tenant, user, done, due), now
                    ),
                )
            )
    return results
