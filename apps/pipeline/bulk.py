"""Batches in bulk (PostgreSQL): a chunk of a batch's events applied together, with the results
the same events give one by one (apps/pipeline/batches.py hands the chunks over).

One transaction a chunk:

1. the chunk's users are locked in primary-key order, and the new ones created, each in one
   statement;
2. every user's state is read once, each table in one statement for all of them: metric totals
   and the current period's rollups, streak states and pauses, completions, points totals and
   trigger marks, board entries (and how full each board is);
3. every event runs in `seq` order in memory through the computations of a single event
   (`streak_event_compute`, `achievements_due`, `points_event_awards` and `Ledger.settle`, the
   boards' `event_contribution`), each from the state the one before left;
4. each table is written with multi-row statements: events, totals and rollups, streak states
   and periods, completions, awards (the dedupe keys keep them exactly once), points totals,
   daily changes and marks, board entries and their ranks in Redis, the users' activity.

What it does not compute in memory goes through the grouped path, event by event, in the same
transaction and after the others (`slow`): the events of a user that carry user fields, and
those of a user who would enter a board too full to take every newcomer of the chunk (where a
newcomer may displace the lowest entry). A tenant
whose configuration reacts to what an event did (webhook endpoints, achievement notifications)
or needs a read per event (event-filtered triggers and achievements, per-user boosts, triggers
that block on a negative balance) has every chunk go the grouped way (`NotInBulk`), and so does
a chunk that finds a row changed under it (an award or completion already there, an entry
displaced): the transaction is rolled back and the chunk applied the grouped way.
"""

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.db import connection

from apps.accounts.models import Tenant
from apps.achievements.choices import Trigger
from apps.achievements.models import AchievementCompletion
from apps.achievements.selectors import achievement_definitions
from apps.achievements.services import Completed, completions_load_many
from apps.core.db import CompiledSelect, insert_many, update_many
from apps.core.errors import ApplicationError
from apps.core.replicas import users_written
from apps.fairplay.selectors import anomaly_rules
from apps.leaderboards import ranks
from apps.leaderboards.choices import RankBy
from apps.leaderboards.models import LeaderboardEntry
from apps.leaderboards.selectors import BoardDef
from apps.leaderboards.services import (
    RunOf,
    entries_of,
    event_contribution,
    event_places,
    near_full,
    newcomer_gains,
    run_counts,
    run_gains,
)
from apps.leagues.selectors import leagues_active
from apps.metrics.models import MetricDailyChange, MetricEvent, MetricTotal
from apps.metrics.selectors import daily_changes_of, totals_of
from apps.metrics.services import RecordedEvent
from apps.notifications.choices import NotificationType
from apps.notifications.domain import send_zone
from apps.notifications.selectors import notification_config
from apps.pipeline import steps
from apps.pipeline.config import EventConfig, event_config
from apps.pipeline.models import QueuedEvent
from apps.pipeline.outcomes import AchievementsOutcome, PointsOutcome, StreakOutcome
from apps.pipeline.services import EventInput, event_input_from_payload
from apps.points.choices import TriggerType
from apps.points.models import PointsAward, PointsDailyChange, PointsTotal, PointsTriggerMark
from apps.points.selectors import points_config
from apps.points.services import PointsLoaded, points_load_many
from apps.quests.selectors import quests_config
from apps.streaks import domain as streaks_domain
from apps.streaks.models import StreakLoss, StreakPeriod, StreakState
from apps.streaks.selectors import current_period_of, streak_config, streaks_configured
from apps.streaks.services import StreakLoaded, streak_event_compute, streaks_load_many
from apps.users.domain import UserFields, local_date
from apps.users.models import EndUser
from apps.users.services import attribute_values_check, user_activity_noted, user_new
from apps.webhooks.selectors import endpoints_active

# Events a chunk takes: one transaction holds its users' locks for about a second at most.
BULK_MAX_EVENTS = 2000

_AMOUNT = Decimal("0.000001")  # numeric(24, 6): what the database keeps of a value


def _stored(value: Decimal) -> Decimal:
    """`value` as a numeric(24, 6) column keeps it (PostgreSQL rounds half away from zero)."""
    return value.quantize(_AMOUNT, rounding=ROUND_HALF_UP)


class NotInBulk(Exception):
    """The chunk is applied the grouped way instead (raised inside its transaction, which the
    caller rolls back)."""


def bulk_ready(tenant: Tenant) -> bool:
    """Whether this tenant's chunks can be applied in bulk: on PostgreSQL, when nothing in its
    configuration reacts to an event's outcome or needs a read per event."""
    if connection.vendor != "postgresql" or endpoints_active(tenant):
        return False
    if leagues_active(tenant):  # joins and scores per event (apps/leagues/services.py)
        return False
    if quests_config(tenant).any_active:  # progress and rewards per event (the quests step)
        return False
    if anomaly_rules(tenant):  # counted and flagged per event (apps/fairplay/services.py)
        return False
    if notification_config(tenant).enabled(NotificationType.ACHIEVEMENT_COMPLETED):
        return False
    for system in points_config(tenant).values():
        if system.has_user_boosts:
            return False
        for t in system.triggers:
            if t.block_if_out_of_points or (t.type == TriggerType.METRIC and t.event_filters):
                return False
    return not any(
        d.completable and d.trigger == Trigger.METRIC and d.event_filters
        for d in achievement_definitions(tenant).values()
    )


@dataclass
class _Event:
    row: QueuedEvent
    data: EventInput
    config: EventConfig


@dataclass
class _User:
    """One user's state through the chunk, as each event leaves it."""

    user: EndUser
    created: bool
    events: list[_Event]
    totals: dict[int, Decimal] = field(default_factory=dict)  # metric pk -> total
    keys: set[tuple[int, str]] = field(default_factory=set)  # (metric pk, idempotency key)
    streak: StreakLoaded | None = None
    period: tuple[dt.date, dt.date] | None = None  # the streak's current period
    changes: dict[int, Decimal] = field(default_factory=dict)  # metric pk -> change in it
    completed: set[int] = field(default_factory=set)
    points: PointsLoaded = field(default_factory=lambda: PointsLoaded([], []))
    # The user's entry (pk, None: entered by the chunk; value; reached_at) in each run.
    entries: dict[RunOf, tuple[int | None, Decimal, dt.datetime]] = field(default_factory=dict)
    moved: set[RunOf] = field(default_factory=set)  # entries changed by the chunk
    metric_sums: dict[int, Decimal] = field(default_factory=dict)  # added by the chunk
    points_sums: dict[int, int] = field(default_factory=dict)  # system pk -> added by the chunk
    stored_gains: dict[RunOf, Decimal] = field(default_factory=dict)


@dataclass
class _Writes:
    """Rows a chunk writes, by table, in the order a single event writes them."""

    events: list[MetricEvent] = field(default_factory=list)
    metric_totals: dict[tuple[int, int], Decimal] = field(default_factory=dict)
    daily: dict[tuple[int, int, dt.date], tuple[Decimal, int]] = field(default_factory=dict)
    settled: dict[tuple[int, str, dt.date], StreakPeriod] = field(default_factory=dict)
    extended: dict[tuple[int, str, dt.date], StreakPeriod] = field(default_factory=dict)
    states: dict[int, StreakState] = field(default_factory=dict)
    losses: list[StreakLoss] = field(default_factory=list)
    completions: list[AchievementCompletion] = field(default_factory=list)
    awards: list[PointsAward] = field(default_factory=list)
    points_totals: dict[tuple[int, int], PointsTotal] = field(default_factory=dict)
    points_daily: dict[tuple[int, int, dt.date], int] = field(default_factory=dict)
    marks: dict[tuple[int, int], PointsTriggerMark] = field(default_factory=dict)
    active: dict[int, EndUser] = field(default_factory=dict)


@dataclass
class ChunkResult:
    done: list[int]  # queued rows applied (or replayed)
    failed: list[tuple[QueuedEvent, ApplicationError]]


SlowApply = Callable[[Tenant, list[QueuedEvent]], ChunkResult]

_USERS_LOCKED = CompiledSelect(
    EndUser, "{m[tenant]} = %s AND {m[external_id]} = ANY(%s) ORDER BY {m[id]}"
)
_KEYS_USED = CompiledSelect(MetricEvent, "{m[user]} = ANY(%s) AND {m[idempotency_key]} = ANY(%s)")


def chunk_apply(tenant: Tenant, rows: list[QueuedEvent], slow: SlowApply) -> ChunkResult:
    """Apply a chunk's locked pending rows (one tenant's, in seq order, accepted together)
    inside the caller's transaction. `slow` applies one user's rows the grouped way. Raises
    NotInBulk when the chunk must go the grouped way as a whole."""
    if not bulk_ready(tenant) or len({row.accepted_at for row in rows}) != 1:
        raise NotInBulk
    now = rows[0].accepted_at
    by_user: dict[str, list[QueuedEvent]] = {}
    for row in rows:
        by_user.setdefault(row.payload["userId"], []).append(row)
    users_written(tenant.pk, by_user)  # reads of them: the primary's (apps/core/replicas.py)
    locked = {u.external_id: u for u in _USERS_LOCKED.many([tenant.pk, list(by_user)], lock=True)}
    result = ChunkResult([], [])
    slow_ids = [uid for uid, user_rows in by_user.items() if _with_fields(user_rows)]
    with_fields = set(slow_ids)
    states: dict[str, _User] = {}
    for uid, user_rows in by_user.items():
        if uid in with_fields:
            continue
        events = _valid(tenant, user_rows, result)
        if not events:
            continue
        existing = locked.get(uid)
        if existing is None:
            user = user_new(tenant, uid, UserFields(), now=now, active=True)
            states[uid] = _User(user, True, events)
        else:
            states[uid] = _User(existing, False, events)
    for uid in _crowded(tenant, states, now):
        slow_ids.append(uid)
        del states[uid]
    if states:
        # First, so that whatever sends the chunk the grouped way (NotInBulk) comes before
        # any write that its rollback would not undo (the grouped way's ranks in Redis).
        _users_create([s for s in states.values() if s.created])
        _load(tenant, list(states.values()), now)
        writes = _Writes()
        for state in states.values():
            for event in state.events:
                _apply(tenant, state, event, now, writes)
                result.done.append(event.row.pk)
        _write(tenant, states, writes, now)
    for uid in slow_ids:
        slow_result = slow(tenant, by_user[uid])
        result.done += slow_result.done
        result.failed += slow_result.failed
    return result


def _with_fields(rows: list[QueuedEvent]) -> bool:
    return any(row.payload["userFields"] for row in rows)


def _valid(tenant: Tenant, rows: list[QueuedEvent], result: ChunkResult) -> list[_Event]:
    """The rows whose metric and attributes are (still) defined; the others fail with the
    reason, as in the grouped path (checked before anything of theirs is applied)."""
    events = []
    for row in rows:
        data = event_input_from_payload(row.payload)
        try:
            config = event_config(tenant, data.metric_key)
            attribute_values_check(tenant, data.attributes, "event")
        except ApplicationError as exc:
            result.failed.append((row, exc))
            continue
        events.append(_Event(row, data, config))
    return events


def _crowded(tenant: Tenant, states: dict[str, _User], now: dt.datetime) -> list[str]:
    """Users who would enter a run that cannot take every newcomer of the chunk: they go the
    grouped way (a newcomer there may displace the lowest entry). Reads the users' entries,
    which their state keeps."""
    places: dict[str, list[RunOf]] = {}
    boards: dict[int, BoardDef] = {}
    for uid, state in states.items():
        keys = []
        for board, run_start, group in event_places(tenant, state.user, now):
            boards[board.pk] = board
            keys.append((board.pk, run_start, group))
        places[uid] = keys
    runs = {key for keys in places.values() for key in keys}
    if not runs:
        return []
    existing = [s.user.pk for s in states.values() if not s.created]
    entries = entries_of(existing, runs)
    for state in states.values():
        if not state.created:
            for key in places[state.user.external_id]:
                found = entries.get((key, state.user.pk))
                if found is not None:
                    state.entries[key] = found
    counts = run_counts(runs)
    newcomers: dict[RunOf, list[str]] = {}
    for uid, keys in places.items():
        for key in keys:
            if key not in states[uid].entries:
                newcomers.setdefault(key, []).append(uid)
    crowded: set[str] = set()
    for key, uids in newcomers.items():
        # As a single newcomer would take the run's lock (leaderboards.services._enter).
        if near_full(boards[key[0]], counts[key] + len(uids)):
            crowded.update(uids)
    return [uid for uid in states if uid in crowded]


def _users_create(states: list[_User]) -> None:
    """The chunk's new users, in one statement. One created meanwhile by a request of its own
    sends the chunk the grouped way."""
    users = [s.user for s in states]
    created = insert_many(
        users, conflict=("tenant", "external_id"), returning=("id", "external_id")
    )
    if len(created) != len(users):
        raise NotInBulk
    pks = {external_id: pk for pk, external_id in created}
    for user in users:
        user.pk = pks[user.external_id]
        user._state.adding = False
        user._state.db = connection.alias


def _load(tenant: Tenant, states: list[_User], now: dt.datetime) -> None:
    """The stored state of the chunk's existing users, each table in one statement."""
    config = streak_config(tenant)
    if streaks_configured(config):
        for state in states:
            start = current_period_of(state.user, config.frequency, now)
            state.period = (start, streaks_domain.period_end(start, config.frequency))
            state.streak = StreakLoaded(state=None, pauses=())
    states = [s for s in states if not s.created]  # the new ones have nothing stored
    if not states:
        return
    pks = [s.user.pk for s in states]
    by_pk = {s.user.pk: s for s in states}
    for (user_pk, metric_pk), total in totals_of(pks).items():
        by_pk[user_pk].totals[metric_pk] = total
    keys = {e.data.idempotency_key for s in states for e in s.events if e.data.idempotency_key}
    if keys:
        for event in _KEYS_USED.many([pks, list(keys)]):
            by_pk[event.user_id].keys.add((event.metric_id, event.idempotency_key))
    if streaks_configured(config):
        for user_pk, loaded in streaks_load_many(pks).items():
            by_pk[user_pk].streak = loaded
        _period_changes(states)
    for user_pk, done in completions_load_many(pks).items():
        by_pk[user_pk].completed = done
    for user_pk, points in points_load_many(pks).items():
        by_pk[user_pk].points = points
    _stored_gains(tenant, states, now)


def _period_changes(states: list[_User]) -> None:
    """Each user's stored change of every metric in their current streak period."""
    since = min(start for start, _ in (s.period for s in states if s.period))
    by_pk = {s.user.pk: s for s in states}
    for user_pk, metric_pk, day, change in daily_changes_of(list(by_pk), since):
        state = by_pk[user_pk]
        assert state.period is not None  # noqa: S101 - set above
        if state.period[0] <= day <= state.period[1]:
            state.changes[metric_pk] = state.changes.get(metric_pk, Decimal(0)) + change


def _stored_gains(tenant: Tenant, states: list[_User], now: dt.datetime) -> None:
    """What the users who may enter a board as newcomers gained in its run before the chunk
    (one statement a run)."""
    wanted: dict[RunOf, list[_User]] = {}
    boards: dict[int, BoardDef] = {}
    for state in states:
        for board, run_start, group in event_places(tenant, state.user, now):
            key = (board.pk, run_start, group)
            if key not in state.entries and newcomer_gains(board, False, False):
                boards[board.pk] = board
                wanted.setdefault(key, []).append(state)
    for key, users in wanted.items():
        board_pk, run_start, _ = key
        gains = run_gains(boards[board_pk], run_start, [s.user.pk for s in users])
        for state in users:
            if state.user.pk in gains:
                state.stored_gains[key] = gains[state.user.pk]


def _apply(
    tenant: Tenant,
    state: _User,
    event: _Event,
    now: dt.datetime,
    writes: _Writes,
) -> None:
    """One event, in memory: apps/pipeline/services.event_apply's steps on the user's state."""
    user, data, metric_pk = state.user, event.data, event.config.metric.pk
    created = state.created and event is state.events[0]
    key = data.idempotency_key
    if key is not None:
        if not created and (metric_pk, key) in state.keys:
            return  # a replay applies nothing
        state.keys.add((metric_pk, key))
    day = local_date(now, user.tz)
    value = _stored(data.value)
    previous = state.totals.get(metric_pk, Decimal(0))
    total = state.totals[metric_pk] = previous + value
    row = MetricEvent(
        tenant_id=tenant.pk,
        user_id=user.pk,
        metric_id=metric_pk,
        value=data.value,
        attributes=data.attributes,
        idempotency_key=key,
        occurred_at=now,
        local_date=day,
        total_after=total,
    )
    writes.events.append(row)
    totals_key = (user.pk, metric_pk)
    writes.metric_totals[totals_key] = writes.metric_totals.get(totals_key, Decimal(0)) + value
    daily_key = (user.pk, metric_pk, day)
    change, count = writes.daily.get(daily_key, (Decimal(0), 0))
    writes.daily[daily_key] = (change + value, count + 1)
    state.metric_sums[metric_pk] = state.metric_sums.get(metric_pk, Decimal(0)) + value
    # The event's context as a single event's steps see it, from the user's state.
    ctx = steps.EventContext(
        tenant=tenant,
        user=user,
        user_created=created,
        metric=event.config.metric,
        value=data.value,
        attributes=data.attributes,
        recorded=RecordedEvent(row, previous, total, day),
        now=now,
        loaded=steps.EventLoaded(
            streak=_streak_loaded(state, metric_pk, value, day),
            completed=state.completed,
            points=state.points,
            entries={},  # the boards are moved from the user's state below
            quests={},  # a tenant with an active quest goes the grouped way (bulk_ready)
        ),
    )
    streak = _streak(ctx, state, writes)
    completed = []
    for definition in steps.achievements_due_of(ctx, streak):
        completion = AchievementCompletion(
            tenant_id=tenant.pk, achievement_id=definition.pk, user_id=user.pk, completed_at=now
        )
        writes.completions.append(completion)
        completed.append(Completed(definition, str(completion.public_id), now))
        state.completed.add(definition.pk)
    achievements = steps.achievements_outcome(user, completed)
    added = _points(ctx, state, streak, achievements, writes)
    _boards(tenant, state, metric_pk, data.value, added, streak, created, now)
    at_day = now.astimezone(send_zone(user.tz)).date()
    if user_activity_noted(user, now, at_day):
        writes.active[user.pk] = user


def _streak_loaded(
    state: _User, metric_pk: int, value: Decimal, day: dt.date
) -> StreakLoaded | None:
    """The user's streak rows as the streak step would read them after the event's record
    (None: streaks are not configured)."""
    if state.streak is None or state.period is None:
        return None
    if state.period[0] <= day <= state.period[1]:
        state.changes[metric_pk] = state.changes.get(metric_pk, Decimal(0)) + value
    return StreakLoaded(state.streak.state, state.streak.pauses, dict(state.changes))


def _streak(ctx: steps.EventContext, state: _User, writes: _Writes) -> StreakOutcome:
    loaded = ctx.loaded.streak
    result, changed = streak_event_compute(ctx.tenant, ctx.user, ctx.metric.pk, ctx.now, loaded)
    if changed is not None:
        state.streak = StreakLoaded(changed.state, loaded.pauses if loaded else ())
        writes.states[state.user.pk] = changed.state
        for period in changed.settled:
            writes.settled.setdefault(
                (state.user.pk, period.frequency, period.period_start), period
            )
        if changed.extended is not None:
            p = changed.extended
            writes.extended[state.user.pk, p.frequency, p.period_start] = p
        if changed.lost is not None:  # a user's streak is lost once: the chunk's first event
            writes.losses.append(changed.lost)
    return steps.streak_outcome(result)


def _points(
    ctx: steps.EventContext,
    state: _User,
    streak: StreakOutcome,
    achievements: AchievementsOutcome,
    writes: _Writes,
) -> dict[int, int]:
    """The points step in memory; the points it added, by system pk."""
    awarded = steps.points_awards_of(ctx, streak, achievements)
    if awarded is None:
        return {}
    ledger, marks = awarded
    outcome = PointsOutcome(changes=tuple(ledger.settle()))
    user_pk = state.user.pk
    for row in ledger.totals():
        if all(row is not known for known in state.points.totals):
            state.points.totals.append(row)  # a first award: the system has history now
        writes.points_totals[user_pk, row.system_id] = row
    for change in outcome.changes:
        writes.awards += change.awards
        key = (user_pk, change.system.pk, ledger.day)
        writes.points_daily[key] = writes.points_daily.get(key, 0) + change.added
        sums = state.points_sums
        sums[change.system.pk] = sums.get(change.system.pk, 0) + change.added
    for mark in marks:
        if all(mark is not known for known in state.points.marks):
            state.points.marks.append(mark)
        writes.marks[user_pk, mark.trigger_id] = mark
    return outcome.added_by_pk


_ENTRY_VALUE = LeaderboardEntry._meta.get_field("value")
_ENTRY_QUANTUM = Decimal(1).scaleb(-_ENTRY_VALUE.decimal_places)


def _boards(
    tenant: Tenant,
    state: _User,
    metric_pk: int,
    value: Decimal,
    added: dict[int, int],
    streak: StreakOutcome,
    created: bool,
    now: dt.datetime,
) -> None:
    """The leaderboards step in memory: the user's entries as leaderboards_apply_event leaves
    them (no standings: nothing in a bulk tenant's configuration reads them)."""
    streak_length = streak.length if (streak.extended or streak.lost) else None
    for board, run_start, group in event_places(tenant, state.user, now):
        contribution = event_contribution(board, metric_pk, value, added, streak_length)
        if contribution is None:
            continue
        amount, absolute = contribution
        key = (board.pk, run_start, group)
        found = state.entries.get(key)
        if found is not None:
            pk, old, _ = found
            new_value = amount if absolute else old + amount
            if new_value != old:
                state.entries[key] = (pk, _entry_stored(new_value), now)
                state.moved.add(key)
            continue
        if newcomer_gains(board, absolute, created):
            amount = _run_gain(state, board, key, amount)
        state.entries[key] = (None, _entry_stored(amount), now)
        state.moved.add(key)


def _entry_stored(value: Decimal) -> Decimal:
    return value.quantize(_ENTRY_QUANTUM, rounding=ROUND_HALF_UP)


def _run_gain(state: _User, board: BoardDef, key: RunOf, fallback: Decimal) -> Decimal:
    """What a newcomer enters with: their rollups in the run, the chunk's included (as
    leaderboards._run_gain reads them after the event's own writes)."""
    if board.rank_by == RankBy.METRIC and board.metric_pk is not None:
        chunk: Decimal | int | None = state.metric_sums.get(board.metric_pk)
    elif board.rank_by == RankBy.POINTS and board.points_pk is not None:
        chunk = state.points_sums.get(board.points_pk)
    else:
        return fallback
    stored = state.stored_gains.get(key)
    if stored is None and chunk is None:
        return fallback
    return (stored or Decimal(0)) + Decimal(chunk or 0)


_STATE_FIELDS = tuple(
    f.name
    for f in StreakState._meta.concrete_fields
    if not f.primary_key and f.name not in ("tenant", "user")
)


def _write(tenant: Tenant, states: dict[str, _User], writes: _Writes, now: dt.datetime) -> None:
    """Every row the chunk changed, table by table in multi-row statements."""
    insert_many(writes.events)
    insert_many(
        [
            MetricTotal(tenant_id=tenant.pk, user_id=u, metric_id=m, total=added, updated=now)
            for (u, m), added in writes.metric_totals.items()
        ],
        conflict=("user", "metric"),
        update=("updated",),
        add=("total",),
    )
    insert_many(
        [
            MetricDailyChange(
                tenant_id=tenant.pk, user_id=u, metric_id=m, date=day, change=change, events=count
            )
            for (u, m, day), (change, count) in writes.daily.items()
        ],
        conflict=("user", "metric", "date"),
        add=("change", "events"),
    )
    insert_many(list(writes.settled.values()), conflict=("user", "frequency", "period_start"))
    insert_many(
        list(writes.extended.values()),
        conflict=("user", "frequency", "period_start"),
        update=("length", "extended"),
    )
    insert_many(list(writes.states.values()), conflict=("user",), update=_STATE_FIELDS)
    insert_many(writes.losses, conflict=("user", "frequency", "missed_period"))
    _all_new(writes.completions, ("achievement", "user"))
    _all_new(writes.awards, ("system", "user", "dedupe_key"))
    insert_many(
        list(writes.points_totals.values()), conflict=("user", "system"), update=("total", "level")
    )
    insert_many(
        [
            PointsDailyChange(tenant_id=tenant.pk, user_id=u, system_id=s, date=day, change=change)
            for (u, s, day), change in writes.points_daily.items()
        ],
        conflict=("user", "system", "date"),
        add=("change",),
    )
    insert_many(list(writes.marks.values()), conflict=("user", "trigger"), update=("mark",))
    _entries_write(states)
    activity = [(u.pk, u.last_active_at, u.last_active_on) for u in writes.active.values()]
    update_many(EndUser, ("last_active_at", "last_active_on"), activity)


def _all_new(rows: list[Any], unique: tuple[str, ...]) -> None:
    """Insert rows that must not exist yet (exactly once): one that does sends the chunk the
    grouped way, which tells which were paid before."""
    if len(insert_many(rows, conflict=unique, returning=("id",))) != len(rows):
        raise NotInBulk


def _entries_write(states: dict[str, _User]) -> None:
    """The entries the chunk moved or created, then their places in Redis, run by run."""
    moves: list[tuple[int, Decimal, dt.datetime]] = []
    new: list[LeaderboardEntry] = []
    places: dict[RunOf, list[tuple[int, ranks.Place | None]]] = {}
    for state in states.values():
        for key in state.moved:
            pk, value, reached_at = state.entries[key]
            if pk is None:
                board_pk, run_start, group = key
                new.append(
                    LeaderboardEntry(
                        leaderboard_id=board_pk,
                        run_start=run_start,
                        group=group,
                        user=state.user,
                        value=value,
                        reached_at=reached_at,
                    )
                )
            else:
                moves.append((pk, value, reached_at))
            places.setdefault(key, []).append((state.user.pk, (value, reached_at)))
    # An entry displaced since it was read (by a newcomer's own event) is gone: the grouped
    # way re-enters its user.
    if len(update_many(LeaderboardEntry, ("value", "reached_at"), moves)) != len(moves):
        raise NotInBulk
    insert_many(new)
    for (board_pk, run_start, group), changed in places.items():
        ranks.change(ranks.RunKey(board_pk, run_start, group), changed)
