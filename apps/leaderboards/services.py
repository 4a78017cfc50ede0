"""Writes of leaderboards: the pipeline step (entries and ranks). Configuration is written by
configuration.py."""

import datetime as dt
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Count, F, Sum, Value
from django.db.models.functions import Concat, Substr

from apps.accounts.models import Tenant
from apps.core.db import CompiledSelect, Load
from apps.leaderboards import domain, ranks, wire
from apps.leaderboards.choices import RankBy, Status
from apps.leaderboards.models import LeaderboardEntry
from apps.leaderboards.selectors import (
    BoardDef,
    board_definitions,
    group_placed,
)
from apps.leaderboards.sql import Standing, displace_lowest, entries_move, lock_run
from apps.metrics.models import MetricDailyChange
from apps.points.models import PointsDailyChange
from apps.streaks.followers import length_follower, restart_follower
from apps.users.domain import attributes_match, zone
from apps.users.models import EndUser


@dataclass(frozen=True)
class BoardStanding:
    """Where an event left the user on one board: facts, rendered once (standings_render)."""

    board: BoardDef
    run_start: dt.date
    group: str
    rank: int | None  # None: not on the board
    previous_rank: int | None
    threshold: Decimal | int
    value: Decimal | None = None  # the user's value on the board after it (None: not on it)


def standings_render(standings: Iterable[BoardStanding]) -> dict[str, dict[str, Any]]:
    """The `leaderboards` map of the event response (MetricEventLeaderboardResponse by key)."""
    render = wire.metric_event_leaderboard_response_render
    return {s.board.key: render(s) for s in standings}


def event_contribution(
    board: BoardDef,
    metric_pk: int | None,
    value: Decimal,
    points_added: dict[int, int],
    streak_length: int | None,
) -> tuple[Decimal, bool] | None:
    """(amount, absolute) this event contributes to the board, or None if it does not."""
    if board.rank_by == RankBy.METRIC and metric_pk is not None and board.metric_pk == metric_pk:
        return value, False
    if board.rank_by == RankBy.POINTS and board.points_pk in points_added:
        return Decimal(points_added[board.points_pk or 0]), False
    if board.rank_by == RankBy.STREAK and streak_length is not None:
        return Decimal(streak_length), True
    return None


def event_places(
    tenant: Tenant, user: EndUser, now: dt.datetime, *, window: bool = True
) -> list[tuple[BoardDef, dt.date, str]]:
    """The active boards open to this user right now, with the run and group an event would
    count in: only activity inside a board's run and daily time window (in the user's local
    time) counts. Without `window`, the boards whatever their daily window (a streak set by
    staff is not activity of the day)."""
    local = now.astimezone(zone(user.tz))
    places = []
    for board in board_definitions(tenant).values():
        if board.status != Status.ACTIVE or not attributes_match(
            board.user_filters, user.attributes
        ):
            continue
        run_start = board.run_for(local.date())
        group = group_placed(board, user)
        if run_start is None or group is None:
            continue
        if window and not domain.in_window(local.time(), board.start_time, board.end_time):
            continue
        places.append((board, run_start, group))
    return places


# The user's entry in one run and group, for the pipeline's load.
_ENTRY = CompiledSelect(
    LeaderboardEntry,
    "{m[leaderboard]} = %s AND {m[run_start]} = %s AND {m[group]} = %s AND {m[user]} = %s",
)

Found = tuple[int, Decimal, dt.datetime] | None  # the user's entry: pk, value, reached_at
# The user's entry in the run and group the event counts in, by (board pk, run start, group).
Entries = dict[tuple[int, dt.date, str], Found]


def leaderboards_event_load(
    tenant: Tenant, user: EndUser, metric_pk: int, streaks: bool, now: dt.datetime
) -> Load[Entries]:
    """What the leaderboard step reads (the user's entry on each board the event may move),
    for the pipeline to read with the other steps' rows. Read before the points and streak
    steps run, so every points board and (with `streaks` configured) every streak board is
    read."""
    places = [
        (board, run_start, group)
        for board, run_start, group in event_places(tenant, user, now)
        if board.rank_by == RankBy.POINTS
        or (board.rank_by == RankBy.METRIC and board.metric_pk == metric_pk)
        or (board.rank_by == RankBy.STREAK and streaks)
    ]
    reads = tuple(
        (_ENTRY, (board.pk, run_start, group, user.pk)) for board, run_start, group in places
    )
    keys = [(board.pk, run_start, group) for board, run_start, group in places]
    return Load(reads, functools.partial(_entries_loaded, keys))


def _entries_loaded(
    keys: list[tuple[int, dt.date, str]], rows: list[list[LeaderboardEntry]]
) -> Entries:
    return {
        key: ((found[0].pk, found[0].value, found[0].reached_at) if found else None)
        for key, found in zip(keys, rows, strict=True)
    }


RunOf = tuple[int, dt.date, str]  # (board pk, run start, group)


def entries_of(user_pks: list[int], runs: set[RunOf]) -> dict[tuple[RunOf, int], Found]:
    """These users' entries in these runs, by (run, user pk): one statement (users without
    one are absent)."""
    if not runs or not user_pks:
        return {}
    rows = LeaderboardEntry.objects.filter(
        user_id__in=user_pks,
        leaderboard_id__in={board_pk for board_pk, _, _ in runs},
        run_start__in={run_start for _, run_start, _ in runs},
    ).values_list("leaderboard_id", "run_start", "group", "user_id", "pk", "value", "reached_at")
    found: dict[tuple[RunOf, int], Found] = {}
    for board_pk, run_start, group, user_pk, pk, value, reached_at in rows:
        if (board_pk, run_start, group) in runs:
            found[(board_pk, run_start, group), user_pk] = (pk, value, reached_at)
    return found


def run_counts(runs: set[RunOf]) -> dict[RunOf, int]:
    """How many entries each of these runs has: one statement."""
    if not runs:
        return {}
    rows = (
        LeaderboardEntry.objects.filter(
            leaderboard_id__in={board_pk for board_pk, _, _ in runs},
            run_start__in={run_start for _, run_start, _ in runs},
        )
        .order_by()
        .values("leaderboard_id", "run_start", "group")
        .annotate(count=Count("pk"))
        .values_list("leaderboard_id", "run_start", "group", "count")
    )
    counts = dict.fromkeys(runs, 0)
    for board_pk, run_start, group, count in rows:
        if (board_pk, run_start, group) in runs:
            counts[board_pk, run_start, group] = count
    return counts


def leaderboards_apply_event(
    tenant: Tenant,
    user: EndUser,
    *,
    now: dt.datetime,
    metric_pk: int | None = None,
    value: Decimal = Decimal(0),
    points_added: dict[int, int] | None = None,
    streak_length: int | None = None,
    loaded: Entries | None = None,
    created: bool = False,
) -> list[BoardStanding]:
    """The leaderboards step of the pipeline (the caller holds the user's lock): an event's
    metric and value, the points it paid by system and its streak length when the streak
    moved; or only points paid outside an event. Returns where it left the user on each board
    it affected. `loaded`: the user's entries when the
    caller read them (leaderboards_event_load); `created`: the user was created by this event,
    so what they gained in any run is what this event brings."""
    work = []
    for board, run_start, group in event_places(tenant, user, now):
        contribution = event_contribution(
            board, metric_pk, value, points_added or {}, streak_length
        )
        if contribution is None:
            continue
        amount, absolute = contribution
        key = (board.pk, run_start, group)
        if loaded is not None and key in loaded:
            found = loaded[key]
        else:
            found = _entry(board.pk, run_start, group, user)
        work.append((board, run_start, group, found, amount, absolute))
    result: list[BoardStanding] = []
    for board, run_start, group, found, amount, absolute in work:
        # Board by board, as the step has always taken its locks: moving every board's entry
        # at once, then displacing another user's entry as a newcomer on a later board,
        # deadlocked against that user doing the same the other way round (measured: 15
        # deadlocks in a `make bench` run).
        if found is not None:
            new_value = amount if absolute else found[1] + amount
            # A newcomer on a full board may have displaced (deleted) the entry since it was
            # read: another user's transaction, under that user's lock. Then the user is not
            # on the board any more, and this event counts as theirs to re-enter with.
            if new_value != found[1] and not entries_move([(found[0], new_value, now)]):
                found = None
        result.append(_apply(board, user, run_start, group, found, amount, absolute, now, created))
    return result


def leaderboards_take_back(
    tenant: Tenant,
    user: EndUser,
    *,
    now: dt.datetime,
    events: Iterable[tuple[int, Decimal, dt.datetime]] = (),
    points_added: dict[int, int] | None = None,
) -> list[BoardStanding]:
    """Undoing events (apps/pipeline/undo.py; the caller holds the user's lock): take what
    they brought off the user's entry in each active metric or points board's current run, in
    both rank stores. `events`: the undone events as (metric pk, value, occurred_at); each
    counts where it counted, in the run and daily window of its moment in the user's time
    zone. `points_added`: the points changes the undo made now, by system (they count in the
    current run, as any change made now). A user without an entry in the run stays off it;
    finished runs are left as they are."""
    local = zone(user.tz)
    result: list[BoardStanding] = []
    for board, run_start, group in event_places(tenant, user, now, window=False):
        amount = Decimal(0)
        if board.rank_by == RankBy.METRIC:
            end = board.run_end(run_start)
            for metric_pk, value, occurred_at in events:
                moment = occurred_at.astimezone(local)
                if (
                    metric_pk == board.metric_pk
                    and run_start <= moment.date()
                    and (end is None or moment.date() <= end)
                    and domain.in_window(moment.time(), board.start_time, board.end_time)
                ):
                    amount -= value
        elif board.rank_by == RankBy.POINTS and board.points_pk in (points_added or {}):
            amount = Decimal((points_added or {})[board.points_pk or 0])
        if not amount:
            continue
        found = _entry(board.pk, run_start, group, user)
        if found is None:
            continue
        if not entries_move([(found[0], found[1] + amount, now)]):
            continue  # displaced since it was read: off the board, nothing to take back
        result.append(_apply(board, user, run_start, group, found, amount, False, now))
    return result


def _entry(board_pk: int, run_start: dt.date, group: str, user: EndUser) -> Found:
    row = _ENTRY.first([board_pk, run_start, group, user.pk])
    return (row.pk, row.value, row.reached_at) if row is not None else None


def _apply(
    board: BoardDef,
    user: EndUser,
    run_start: dt.date,
    group: str,
    found: Found,
    amount: Decimal,
    absolute: bool,
    now: dt.datetime,
    created: bool = False,
) -> BoardStanding:
    run = ranks.RunKey(board.pk, run_start, group)
    mine: Decimal | None = None  # the user's value on the board after this event
    previous_rank: int | None = None
    rank: int | None = None
    place: Standing | None = None
    kept: tuple[ranks.Place | None, ranks.Place | None] = (None, None)  # old and new place
    if found is not None:  # on the board, and moved there (leaderboards_apply_event)
        _, value, reached_at = found
        old = (value, reached_at)
        new_value = amount if absolute else value + amount
        new = (new_value, now) if new_value != value else old
        mine = new_value
        kept = (old, new)
        # The others are untouched by this write: their standing against both places.
        place = ranks.standing(run, user.pk, old, new, move=new != old)
        previous_rank, rank = place.ahead_before + 1, place.ahead_after + 1
        if new != old and not place.moved:
            ranks.change(run, [(user.pk, new)])
    if place is None:
        if newcomer_gains(board, absolute, created):
            # A newcomer (or someone displaced earlier) enters with all they gained in the
            # run, not only this event: the daily rollups already include it.
            amount = _run_gain(board, user, run_start, amount)
        place = _enter(board, run, user, amount, now)
        if place.ahead_after >= 0:
            mine, rank = amount, place.ahead_after + 1
            kept = (None, (amount, now))
    if domain.group_is_excluded(group):
        return _as_seen(board, user, run_start, group, kept, mine)
    count = place.others + (mine is not None)
    lowest = [v for v in (place.lowest_other, mine) if v is not None]
    full = count >= board.max_participants and lowest
    # The value a newcomer must exceed: the lowest when the board is full, else 0.
    threshold = min(lowest) if full else 0
    return BoardStanding(board, run_start, group, rank, previous_rank, threshold, mine)


def _as_seen(
    board: BoardDef,
    user: EndUser,
    run_start: dt.date,
    group: str,
    kept: tuple[ranks.Place | None, ranks.Place | None],
    mine: Decimal | None,
) -> BoardStanding:
    """An excluded user's standing as they see it: their entry (kept apart, in `group`) ranked
    among the others of the group they would rank in, who do not see it (apps/fairplay). One
    more rank read, for excluded users only."""
    shown = domain.group_included(group)
    old, new = kept
    seen = ranks.standing(ranks.RunKey(board.pk, run_start, shown), user.pk, old, new, locked=False)
    previous_rank = seen.ahead_before + 1 if old is not None else None
    rank = seen.ahead_after + 1 if new is not None else None
    lowest = [v for v in (seen.lowest_other, mine) if v is not None]
    full = seen.others + (mine is not None) >= board.max_participants and lowest
    return BoardStanding(
        board, run_start, shown, rank, previous_rank, min(lowest) if full else 0, mine
    )


def _run_gain(board: BoardDef, user: EndUser, run_start: dt.date, fallback: Decimal) -> Decimal:
    rows = _run_rows(board, run_start)
    if rows is None:
        return fallback
    total = rows.filter(user=user).aggregate(total=Sum("change"))["total"]
    return Decimal(total) if total is not None else fallback


def _run_rows(board: BoardDef, run_start: dt.date) -> Any:
    """The daily rollups that a metric or points board's run counts (None: a streak board)."""
    end = board.run_end(run_start)
    window = {"date__gte": run_start, **({"date__lte": end} if end else {})}
    if board.rank_by == RankBy.METRIC and board.metric_pk is not None:
        return MetricDailyChange.objects.filter(metric_id=board.metric_pk, **window)
    if board.rank_by == RankBy.POINTS and board.points_pk is not None:
        return PointsDailyChange.objects.filter(system_id=board.points_pk, **window)
    return None


def run_gains(board: BoardDef, run_start: dt.date, user_pks: list[int]) -> dict[int, Decimal]:
    """What each of these users gained in the run by their stored daily rollups, in one
    statement (users without any are absent): what a newcomer enters with, as _run_gain."""
    rows = _run_rows(board, run_start)
    if rows is None or not user_pks:
        return {}
    sums = (
        rows.filter(user_id__in=user_pks)
        .order_by()
        .values("user_id")
        .annotate(total=Sum("change"))
        .values_list("user_id", "total")
    )
    return {user_pk: Decimal(total) for user_pk, total in sums}


def newcomer_gains(board: BoardDef, absolute: bool, created: bool) -> bool:
    """Whether a newcomer enters with all they gained in the run (its daily rollups), not
    only this event's amount."""
    return not (absolute or created) and board.start_time is None and board.end_time is None


# A newcomer takes the run's lock once the board has this many places left or fewer: newcomers
# entering without it could overfill the board only if more than this many entered the same run
# at once (each counts the others without the uncommitted entries of the rest). Far from full,
# newcomers do not wait for each other.
ENTER_LOCKED_WITHIN = 64


def near_full(board: BoardDef, others: int) -> bool:
    """Whether a newcomer joining `others` entries must enter under the run's lock."""
    return others >= board.max_participants - ENTER_LOCKED_WITHIN


# Newcomer on a full board: how often the lowest entry may move up under them before they give
# up entering (each attempt is a statement; moving up takes an event of that participant).
DISPLACE_ATTEMPTS = 3


def _enter(
    board: BoardDef, run: ranks.RunKey, user: EndUser, value: Decimal, now: dt.datetime
) -> Standing:
    """A newcomer enters while there is room; on a full board only by beating the lowest
    entry, which they displace (spec: Leaderboard rule 2). Their standing after it; one who
    did not enter has ahead_after -1."""
    place = ranks.standing(run, user.pk, None, (value, now))
    if near_full(board, place.others):
        # One newcomer at a time, the standing read again under the lock: newcomers
        # entering at once each count the others without the rest (an uncommitted entry),
        # and would overfill the board.
        lock_run(run.board_pk, run.run_start, run.group)
        place = ranks.standing(run, user.pk, None, (value, now))
    changes: list[tuple[int, ranks.Place | None]] = []
    for _ in range(DISPLACE_ATTEMPTS):
        if place.others < board.max_participants:
            break
        if place.lowest_other is None or value <= place.lowest_other:
            return Standing(0, -1, place.others, place.lowest_other)
        displaced = displace_lowest(run.board_pk, run.run_start, run.group, user.pk, value)
        if displaced is not None:
            changes.append((displaced, None))
            break
        # The lowest participant moved up meanwhile (their own event): look again.
        place = ranks.standing(run, user.pk, None, (value, now))
    else:
        return Standing(0, -1, place.others, place.lowest_other)
    LeaderboardEntry.objects.create(
        leaderboard_id=run.board_pk,
        run_start=run.run_start,
        group=run.group,
        user=user,
        value=value,
        reached_at=now,
    )
    changes.append((user.pk, (value, now)))
    ranks.change(run, changes)
    if len(changes) > 1:
        # The displaced entry was the lowest: the threshold is now the next one up.
        place = ranks.standing(run, user.pk, (value, now), (value, now))
    return place


# --- streak boards following streaks set outside an event (apps/streaks/followers.py) -------


def _streak_boards(tenant: Tenant) -> list[BoardDef]:
    """The boards that show current streak lengths: the active streak boards (as the
    `leaderboards-streaks` job; a finished board keeps its final standings)."""
    return [
        board
        for board in board_definitions(tenant).values()
        if board.rank_by == RankBy.STREAK and board.status == Status.ACTIVE
    ]


@length_follower
def streak_boards_follow_user(tenant: Tenant, user: EndUser, length: int, now: dt.datetime) -> None:
    """Staff set the user's streak (restore, reset; the caller holds the user's lock): each
    active streak board shows the new length in the same transaction, Redis's rank set moved
    with it. A user the board does not hold enters with a restored streak as an extended one
    would (onto a full board only by beating the lowest entry). One query per board moved, none
    on a tenant without streak boards."""
    boards = {board.pk: board for board in _streak_boards(tenant)}
    if not boards:
        return
    value = Decimal(length)
    held: set[int] = set()
    for pk, board_pk, run_start, group, old in LeaderboardEntry.objects.filter(
        leaderboard_id__in=list(boards), user=user
    ).values_list("pk", "leaderboard_id", "run_start", "group", "value"):
        held.add(board_pk)
        if old != value and entries_move([(pk, value, now)]):
            ranks.change(ranks.RunKey(board_pk, run_start, group), [(user.pk, (value, now))])
    if length <= 0:
        return
    for board, run_start, group in event_places(tenant, user, now, window=False):
        if board.pk in boards and board.pk not in held:
            _apply(board, user, run_start, group, None, value, True, now)


@restart_follower
def streak_boards_restart(tenant: Tenant, now: dt.datetime) -> None:
    """Every streak of the tenant restarted (a change of frequency): each active streak board's
    entries drop to 0 in the change's transaction, one statement per board whatever its size
    (rows locked in the boards' order, as events lock them). Redis's rank sets of those boards
    are dropped once it commits, so that the next read rebuilds them from these rows (a set
    rebuilt before the commit would hold the old lengths)."""
    boards = [board.pk for board in _streak_boards(tenant)]  # the order events lock them in
    for board_pk in boards:
        LeaderboardEntry.objects.filter(leaderboard_id=board_pk).exclude(value=0).update(
            value=Decimal(0), reached_at=now
        )
    for board_pk in boards:
        transaction.on_commit(functools.partial(ranks.forget_board, board_pk))


# --- fair play: an excluded user's entries kept apart (apps/fairplay) --------------------------


def entries_set_apart(user: EndUser, *, excluded: bool) -> int:
    """Move every entry of the user (every board, run and breakdown group of their tenant) out
    of the rankings into its excluded group (domain.EXCLUDED_PREFIX), or back in place with
    the value it has now; Redis's rank sets lose or regain the user's member. The caller holds
    the user's lock, so no event of theirs moves an entry meanwhile. One UPDATE, then one Redis
    call per ranking moved; how many entries moved."""
    entries = LeaderboardEntry.objects.filter(user=user)
    stored: Concat | Substr
    if excluded:
        moving = entries.exclude(group__startswith=domain.EXCLUDED_PREFIX)
        stored = Concat(Value(domain.EXCLUDED_PREFIX), F("group"))
    else:
        moving = entries.filter(group__startswith=domain.EXCLUDED_PREFIX)
        stored = Substr(F("group"), len(domain.EXCLUDED_PREFIX) + 1)
    rows = list(
        moving.values_list("pk", "leaderboard_id", "run_start", "group", "value", "reached_at")
    )
    if not rows:
        return 0
    LeaderboardEntry.objects.filter(pk__in=[row[0] for row in rows]).update(group=stored)
    for _, board_pk, run_start, group, value, reached_at in rows:
        ranking = ranks.RunKey(board_pk, run_start, domain.group_included(group))
        ranks.change(ranking, [(user.pk, None if excluded else (value, reached_at))])
    return len(rows)
