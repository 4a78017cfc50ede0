"""Points awarding (pipeline step, API completions, time job) and configuration writes."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction

from apps.accounts.models import Tenant
from apps.core.db import CompiledSelect, Load
from apps.metrics.selectors import metric_filtered_total
from apps.points import domain
from apps.points.choices import TriggerType
from apps.points.errors import PointsBlockedError
from apps.points.ledger import Ledger, SystemChange
from apps.points.models import PointsTotal, PointsTriggerMark
from apps.points.selectors import USER_TOTALS, SystemDef, TriggerDef, points_config
from apps.users.domain import attributes_match
from apps.users.models import EndUser

# Hand-compiled (apps/core/db.py): the user's marks (one per trigger they reached), picked in
# Python, so the statement is the same for every event.
_USER_MARKS = CompiledSelect(PointsTriggerMark, "{m[user]} = %s")


def _marks(
    user: EndUser, triggers: list[TriggerDef], loaded: list[PointsTriggerMark] | None = None
) -> dict[int, PointsTriggerMark]:
    if not triggers:
        return {}
    wanted = {t.pk for t in triggers}
    marks = loaded if loaded is not None else _USER_MARKS.many([user.pk])
    return {m.trigger_id: m for m in marks if m.trigger_id in wanted}


@dataclass(frozen=True)
class PointsLoaded:
    """The user's points rows, read with the other steps' (points_event_load)."""

    totals: list[PointsTotal]
    marks: list[PointsTriggerMark]


def points_event_load(tenant: Tenant, user: EndUser) -> Load[PointsLoaded | None]:
    """What the points step reads (the user's totals and trigger marks), for the pipeline to
    read with the other steps' rows; nothing when no system has a trigger."""
    if not any(system.triggers for system in points_config(tenant).values()):
        return Load((), _nothing)
    return Load(((USER_TOTALS, (user.pk,)), (_USER_MARKS, (user.pk,))), _loaded)


_TOTALS_OF = CompiledSelect(PointsTotal, "{m[user]} = ANY(%s)")
_MARKS_OF = CompiledSelect(PointsTriggerMark, "{m[user]} = ANY(%s)")


def points_load_many(user_pks: list[int]) -> dict[int, PointsLoaded]:
    """points_event_load for many users at once (PostgreSQL), two statements."""
    loaded = {pk: PointsLoaded([], []) for pk in user_pks}
    for total in _TOTALS_OF.many([user_pks]):
        loaded[total.user_id].totals.append(total)
    for mark in _MARKS_OF.many([user_pks]):
        loaded[mark.user_id].marks.append(mark)
    return loaded


def _nothing(_rows: list[list[object]]) -> None:
    return None


def _loaded(rows: list[list[object]]) -> PointsLoaded:
    totals, marks = rows
    return PointsLoaded(totals, marks)  # type: ignore[arg-type]


def points_event_awards(
    tenant: Tenant,
    user: EndUser,
    *,
    now: dt.datetime,
    metric_pk: int | None = None,
    event_attributes: dict[str, str] | None = None,
    metric_total: Decimal = Decimal(0),
    streak_extended: bool = False,
    streak_length: int = 0,
    streak_started: str | None = None,
    achievement_pks: tuple[int, ...] = (),
    loaded: PointsLoaded | None = None,
) -> tuple[Ledger, list[PointsTriggerMark]] | None:
    """The points step of the pipeline, without its write (the caller holds the user's lock):
    the ledger holding the event's awards, and the trigger marks that moved (None: no trigger
    applies); `points_pay` writes them, a batch in bulk its own way. An event's metric, total
    and attributes, and what its streak and achievement steps did, name the triggers it may
    pay; without them only user_creation and the given achievements pay. `loaded`: the user's
    rows when the caller read them (points_event_load); only what it lacks is read."""
    config = points_config(tenant)
    plan: list[tuple[SystemDef, TriggerDef]] = []
    for system in config.values():
        for t in system.triggers:
            if not t.open_to(user.attributes):
                continue
            if (
                (t.type == TriggerType.METRIC and t.metric_pk == metric_pk)
                or (
                    t.type == TriggerType.STREAK
                    and streak_extended
                    and t.streak_length
                    and streak_length % t.streak_length == 0
                )
                or (t.type == TriggerType.ACHIEVEMENT and t.achievement_pk in achievement_pks)
                or t.type == TriggerType.USER_CREATION
            ):
                plan.append((system, t))
    if not plan:
        return None
    ledger = Ledger(tenant, user, now)
    ledger.load(list({s.pk: s for s, _ in plan}.values()), loaded.totals if loaded else None)
    metric_triggers = [t for _, t in plan if t.type == TriggerType.METRIC]
    marks = _marks(user, metric_triggers, loaded.marks if loaded else None)
    new_marks: list[PointsTriggerMark] = []
    for system, t in plan:
        if t.type == TriggerType.USER_CREATION:
            # Paid at the user's first contact with the system (the dedupe key makes it once).
            if not ledger.has_history(system):
                ledger.award(system, t, t.points, f"user_creation:{t.pk}")
        elif t.type == TriggerType.METRIC and metric_pk is not None:
            total = metric_total
            if t.event_filters is None:
                continue
            if t.event_filters:
                if not attributes_match(t.event_filters, event_attributes or {}):
                    continue
                total = metric_filtered_total(user, metric_pk, t.event_filters)
            mark = marks.get(t.pk) or PointsTriggerMark(user_id=user.pk, trigger_id=t.pk, mark=0)
            count, reached = domain.metric_trigger_new_multiples(
                mark.mark, total, t.metric_threshold or 1
            )
            if count:
                ledger.award(system, t, t.points * count, f"metric:{t.pk}:{reached}")
                mark.mark = reached
                new_marks.append(mark)
        elif t.type == TriggerType.STREAK:
            ledger.award(system, t, t.points, f"streak:{t.pk}:{streak_started}:{streak_length}")
        elif t.type == TriggerType.ACHIEVEMENT:
            ledger.award(system, t, t.points, f"achievement:{t.pk}:{t.achievement_pk}")
    return ledger, new_marks


def points_pay(awarded: tuple[Ledger, list[PointsTriggerMark]] | None) -> list[SystemChange]:
    """Write what points_event_awards found; what changed, by system (only those it changed)."""
    if awarded is None:
        return []
    ledger, marks = awarded
    return ledger.flush(marks)


def points_for_achievements(
    tenant: Tenant, user: EndUser, achievement_pks: tuple[int, ...], now: dt.datetime
) -> list[SystemChange]:
    """Points for completions outside an event (API completion): achievement triggers, and
    user_creation when this is the user's first contact with a system."""
    return points_pay(points_event_awards(tenant, user, now=now, achievement_pks=achievement_pks))


def time_trigger_pay(
    tenant: Tenant, user: EndUser, system: SystemDef, trigger: TriggerDef, now: dt.datetime
) -> list[SystemChange]:
    """Pay the intervals of a time trigger completed since the user's first activity (their
    creation); the caller holds the user's lock. Idempotent through the mark and dedupe keys."""
    mark = PointsTriggerMark.objects.filter(
        user=user, trigger_id=trigger.pk
    ).first() or PointsTriggerMark(user=user, trigger_id=trigger.pk, mark=0)
    unit, interval = trigger.time_unit or "days", trigger.time_interval or 1
    elapsed = domain.intervals_elapsed(user.created, now, unit, interval)
    result: list[SystemChange] = []
    if elapsed > mark.mark:
        ledger = Ledger(tenant, user, now)
        ledger.load([system])
        if not ledger.has_history(system):
            # This job is the user's first contact with the system: user_creation first.
            for t in system.triggers:
                if t.type == TriggerType.USER_CREATION and t.open_to(user.attributes):
                    ledger.award(system, t, t.points, f"user_creation:{t.pk}")
        if trigger.open_to(user.attributes):
            ledger.award(
                system,
                trigger,
                trigger.points * (elapsed - mark.mark),
                f"time:{trigger.pk}:{elapsed}",
            )
        try:
            with transaction.atomic():
                result = ledger.flush()
        except PointsBlockedError:
            result = []  # a deduction the balance cannot cover is skipped, not retried
        mark.mark = elapsed
    step = dt.timedelta(hours=interval) if unit.startswith("hour") else dt.timedelta(days=interval)
    mark.due_at = user.created + step * (mark.mark + 1)
    mark.save()
    return result
