"""The event path's writes of quests: what the quests step reads before it computes (read with
the other steps' rows, apps/core/db.load_together), what an event adds to the user's current
quests, and the one statement that writes it.

Every user's events run under the user's row lock (apps/users/services.py), so the progress
read here is the last one written: the event that meets a quest's last goal is the only one
that finds it unmet and complete at once, and the unique constraint (quest, user, period)
leaves one row per period whatever happens."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import cast

from apps.accounts.models import Tenant
from apps.core.db import CompiledSelect, Load
from apps.points.selectors import points_config
from apps.quests import domain
from apps.quests.choices import Cadence
from apps.quests.models import QuestProgress
from apps.quests.selectors import Assigned, QuestDef, quests_config, user_quests_at
from apps.users.domain import local_date
from apps.users.models import EndUser

# The user's rows of periods not yet over.
_CURRENT = CompiledSelect(QuestProgress, "{m[user]} = %s AND {m[period_end]} > %s")

QuestsLoaded = dict[tuple[int, dt.date], QuestProgress]  # by (quest pk, period's first date)


def quests_event_load(tenant: Tenant, user: EndUser, now: dt.datetime) -> Load[QuestsLoaded]:
    """What the quests step reads: the user's progress in current periods; nothing for a
    tenant without an active quest."""
    if not quests_config(tenant).any_active:
        return Load((), _nothing)
    return Load(((_CURRENT, (user.pk, now)),), _loaded)


def _nothing(_rows: list[list[object]]) -> QuestsLoaded:
    return {}


def _loaded(rows: list[list[object]]) -> QuestsLoaded:
    (found,) = rows
    progress = cast(list[QuestProgress], found)
    return {(r.quest_id, r.period_first): r for r in progress}


@dataclass(frozen=True)
class Progressed:
    """A quest the event moved: its row as written, and whether this event completed it."""

    quest: QuestDef
    assigned: Assigned
    row: QuestProgress
    completed: bool


@dataclass(frozen=True)
class Renewal:
    """The user's first progress in a new daily, weekly or monthly period: the quests of that
    cadence they have in it."""

    cadence: str
    period: domain.Period
    quests: tuple[Assigned, ...]


@dataclass(frozen=True)
class QuestsComputed:
    moved: list[Progressed]
    renewed: list[Renewal]


def quests_event_compute(
    tenant: Tenant,
    user: EndUser,
    *,
    loaded: QuestsLoaded,
    happened: domain.Happened,
    now: dt.datetime,
) -> QuestsComputed:
    """What the event adds to each quest the user has now (computed, not written). A quest
    completed in this period takes nothing more; a goal the event does not move leaves the
    row alone. A cadence whose current period had no row of the user's before, and gets one
    now, is renewed."""
    config = quests_config(tenant)
    if not config.any_active:
        return QuestsComputed([], [])
    assigned_now = user_quests_at(
        tenant,
        config,
        user_id=user.external_id,
        tz_name=user.tz,
        attributes=user.attributes or {},
        now=now,
    )
    moved = _moved(tenant, user, assigned_now, loaded, happened, now)
    return QuestsComputed(moved, _renewals(assigned_now, loaded, moved))


def _renewals(
    assigned: Sequence[Assigned], loaded: QuestsLoaded, moved: Sequence[Progressed]
) -> list[Renewal]:
    started = {m.quest.cadence for m in moved if (m.quest.pk, m.row.period_first) not in loaded}
    renewed = []
    for cadence in sorted(started - {Cadence.ONCE}):
        mine = tuple(a for a in assigned if a.quest.cadence == cadence)
        if any((a.quest.pk, a.period.first) in loaded for a in mine):
            continue
        renewed.append(Renewal(cadence, mine[0].period, mine))
    return renewed


def _moved(
    tenant: Tenant,
    user: EndUser,
    assigned_now: Sequence[Assigned],
    loaded: QuestsLoaded,
    happened: domain.Happened,
    now: dt.datetime,
) -> list[Progressed]:
    # A reward into a points system archived since pays nothing (steps.quest_rewards_pay).
    active_systems = {s.pk for s in points_config(tenant).values()}
    moved = []
    for assigned in assigned_now:
        quest, period = assigned.quest, assigned.period
        row = loaded.get((quest.pk, period.first))
        if row is not None and row.completed_at is not None:
            continue
        before = row.goals if row is not None else []
        after = domain.goals_advance(quest.goals, before, happened)
        if after == list(before) or (row is None and not _counted(quest, after)):
            continue
        done = domain.all_met(quest.goals, after)
        if row is None:
            row = QuestProgress(
                tenant_id=tenant.pk,
                quest_id=quest.pk,
                user_id=user.pk,
                period_first=period.first,
                period_last=period.last,
                period_end=period.end,
                started_at=now,
            )
        else:
            row = _copy(row)
        row.goals = after
        row.updated_at = now
        if done:
            row.completed_at = now
            paying = quest.reward_system_pk in active_systems
            row.reward_points = quest.reward_points if paying else 0
        moved.append(Progressed(quest, assigned, row, done))
    return moved


def _counted(quest: QuestDef, after: Sequence[dict[str, object]]) -> bool:
    """Whether a first event moved any goal (an active day always counts)."""
    return any(state.get("value") not in (0, "0", None) for state in after)


def _copy(row: QuestProgress) -> QuestProgress:
    copy = QuestProgress(**{f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields})
    copy._state.adding = False
    return copy


def quests_write(moved: Sequence[Progressed]) -> None:
    """Write the moved rows in one statement: an upsert on the once-a-period constraint (a
    row read under the user's lock is updated, a new one inserted)."""
    if not moved:
        return
    rows = [m.row for m in moved]
    for row in rows:
        row.pk = None  # one statement for new and known rows: the constraint finds the known
    QuestProgress.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["quest", "user", "period_first"],
        update_fields=["goals", "updated_at", "completed_at", "reward_points"],
    )


def happened_of(
    user: EndUser,
    *,
    now: dt.datetime,
    metric_pk: int,
    value: Decimal,
    streak_extended: bool,
    points_added: dict[int, int],
    achievement_pks: Sequence[int],
) -> domain.Happened:
    return domain.Happened(
        day=local_date(now, user.tz),
        metric_pk=metric_pk,
        value=value,
        streak_extended=streak_extended,
        points_added=points_added,
        achievement_pks=frozenset(achievement_pks),
    )
