"""The same-work ceiling (issue 25, item 1): the rows that gamify's full-pipeline event writes in
the `events-full` case of `make bench`, written by hand in raw SQL in one transaction, with a
response body of the same size. bench/README.md lists the rows table by table and says how they
were held to gamify's.

The configuration is the bench's (bench/side_by_side.py, `FullPipelineEventsCase`), as
constants: a daily streak on the metric (threshold 1); points system XP with triggers 1 (1
point a unit), 2 (50 points every 500 units) and 3 (20 points at every 3rd day of a streak),
points system Coins with triggers 4 (1 point every 10 units) and 5 (5 points at the user's first
contact); levels at 100, 1,000 and 10,000 points in each; metric achievements at 10, 100 and
1,000; boards 1 (the metric's total) and 2 (XP), perpetual, 1,000 participants at most. The
tables (schema.sql, `same_*`) are copies of gamify's: the same columns, unique constraints,
indexes and deferred foreign keys (to stub configuration tables).

What it skips, being a ceiling: authentication, the configuration snapshot, validation, the
streak's pauses (none exist), and the rank store: ranks are counted by PostgreSQL in the write
statement instead of a Redis call per board.
"""

import datetime as dt
import hashlib
import json
import uuid
from decimal import Decimal
from typing import Any

from django.db import OperationalError, connection, transaction
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from ceiling.same_sql import (
    CREATE_USER,
    DISPLACE_AND_ENTER,
    ENTER,
    LOCK_USER,
    MOVE_ENTRY,
    RECORD_AND_LOAD,
    STANDING,
    STANDING_ALONE,
    WRITE_ACTIVITY,
    WRITE_COMPLETION,
    WRITE_POINTS,
    WRITE_STREAK,
)

TENANT = 1
METRIC = 1
XP, COINS = 1, 2
MAX_PARTICIPANTS = 1000
# A newcomer enters without the run's lock only while the board has more free places than
# transactions can be in flight at once (the server's workers x threads, 8 in the bench): the
# unlocked insert counts the entries in its own snapshot, so k newcomers at once each see the
# same count, and with the last free place as the limit three of them overfilled a board to
# 1,001 once the open loop's events filled the boards. Near a full board: the locked path.
UNLOCKED_SPARE = 64
RUN_START = dt.date(2026, 1, 1)  # the boards' perpetual run
STAMP = "2026-01-01T00:00:00.000000Z"  # created/updated of the configuration
# (pk, system, points, threshold): pays `points` for every multiple of `threshold` reached.
METRIC_TRIGGERS = [(1, XP, 1, 1), (2, XP, 50, 500), (4, COINS, 1, 10)]
STREAK_TRIGGER = (3, XP, 20, 3)
CREATION_TRIGGER = (5, COINS, 5)
LEVELS = {XP: [(1, 100), (2, 1000), (3, 10000)], COINS: [(4, 100), (5, 1000), (6, 10000)]}
ACHIEVEMENTS = [(1, 10), (2, 100), (3, 1000)]
BOARDS = [(1, "pipeline-board", "metric"), (2, "xp-board", "points")]
SYSTEM_KEYS = {XP: ("xp", "XP"), COINS: ("coins", "Coins")}
DEADLOCK_ATTEMPTS = 3


def _trigger_snapshot(pk: int) -> dict[str, Any]:
    """The trigger as gamify snapshots it into each award and renders it in the body."""
    body: dict[str, Any] = {
        "id": str(uuid.UUID(int=pk)),
        "type": "metric",
        "points": 1,
        "status": "active",
        "userAttributes": [],
        "created": STAMP,
        "updated": STAMP,
    }
    metric = next((t for t in METRIC_TRIGGERS if t[0] == pk), None)
    if metric is not None:
        body |= {"points": metric[2], "metricId": str(uuid.UUID(int=METRIC))}
        body |= {"metricName": "Pipeline", "metricThreshold": metric[3], "eventAttributes": []}
    elif pk == STREAK_TRIGGER[0]:
        body |= {"type": "streak", "points": STREAK_TRIGGER[2], "streakLength": STREAK_TRIGGER[3]}
    else:
        body |= {"type": "user_creation", "points": CREATION_TRIGGER[2]}
    return body


SNAPSHOTS = {pk: _trigger_snapshot(pk) for pk in (1, 2, 3, 4, 5)}


def _number(value: Decimal) -> float | int:
    return int(value) if value == value.to_integral_value() else float(value)


def _streak(state: list[Any] | None, today: dt.date) -> tuple[int, dt.date, bool]:
    """(length, started, moved) after a qualifying event (values are positive: every event
    meets the threshold of 1)."""
    if state is None:
        return 1, today, True
    length, started, settled = state[0], dt.date.fromisoformat(state[1]), state[2]
    settled_on = dt.date.fromisoformat(settled) if settled else None
    if settled_on == today:
        return length, started, False
    if settled_on == today - dt.timedelta(days=1):
        return length + 1, started, True
    return 1, today, True


def _awards(
    total: Decimal, marks: dict[str, int], had: dict[str, int], streak: tuple[int, dt.date, bool]
) -> tuple[list[dict[str, Any]], list[dict[str, int]]]:
    """The awards this event pays, in gamify's order (system, then trigger), and the metric
    triggers' new marks."""
    plan: list[tuple[int, int, int, str]] = []  # (system, trigger, points, dedupe key)
    new_marks = []
    length, started, moved = streak
    for pk, system, points, threshold in METRIC_TRIGGERS:
        reached, mark = int(total // threshold), marks.get(str(pk), 0)
        if reached > mark:
            plan.append((system, pk, points * (reached - mark), f"metric:{pk}:{reached}"))
            new_marks.append({"trigger_id": pk, "mark": reached})
    pk, system, points, every = STREAK_TRIGGER
    if moved and length % every == 0:
        plan.append((system, pk, points, f"streak:{pk}:{started}:{length}"))
    pk, system, points = CREATION_TRIGGER
    if str(system) not in had:
        plan.append((system, pk, points, f"user_creation:{pk}"))
    plan.sort(key=lambda award: (award[0], award[1]))
    running = {system: had.get(str(system), 0) for system in (XP, COINS)}
    awards = []
    for system, pk, points, key in plan:
        running[system] += points
        awards.append(
            {
                "public_id": str(uuid.uuid4()),
                "system_id": system,
                "trigger_id": pk,
                "snapshot": SNAPSHOTS[pk],
                "awarded": points,
                "total_after": running[system],
                "dedupe_key": key,
            }
        )
    return awards, new_marks


def _level(total: int, system: int) -> int | None:
    reached = [pk for pk, points in LEVELS[system] if total >= points]
    return reached[-1] if reached else None


@csrf_exempt
def event(request: HttpRequest, key: str) -> JsonResponse:
    body = json.loads(request.body)
    external, value = str(body["user"]["id"]), Decimal(str(body["value"]))
    for attempt in range(DEADLOCK_ATTEMPTS):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                return JsonResponse(_event(cursor, key, external, value), status=201)
        except OperationalError as exc:  # a deadlock: a newcomer displacing a moving entry
            if "deadlock" not in str(exc) or attempt == DEADLOCK_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _event(cursor: Any, key: str, external: str, value: Decimal) -> dict[str, Any]:
    """Lock (or create) the user; record the event and load every step's rows; decide in
    Python; write the rest and read the standings in one statement."""
    now = dt.datetime.now(dt.UTC)
    today = now.date()
    p: dict[str, Any] = {"now": now, "today": today, "run": RUN_START, "value": value}
    p["user"], active_on, created = _user(cursor, external, p)
    p["event"] = event_id = uuid.uuid4()
    cursor.execute(RECORD_AND_LOAD, p)
    total, state, completed, had, marks, entries = cursor.fetchone()

    parts: list[str] = []
    streak = _streak(state, today)
    if streak[2]:
        expires = today + dt.timedelta(days=2)
        p |= {"length": streak[0], "started": streak[1]}
        p["due"] = dt.datetime.combine(expires, dt.time(), tzinfo=dt.UTC)
        parts.append(WRITE_STREAK)
    done = [pk for pk, need in ACHIEVEMENTS if pk not in completed and total >= need]
    for n, pk in enumerate(done):
        p |= {f"c{n}_public": uuid.uuid4(), f"c{n}_pk": pk}
        parts.append(WRITE_COMPLETION.format(n=n))
    awards, new_marks = _awards(total, marks, had, streak)
    added = {s: sum(a["awarded"] for a in awards if a["system_id"] == s) for s in (XP, COINS)}
    points = {s: had.get(str(s), 0) + added[s] for s in (XP, COINS)}
    if awards:
        levels = [{"system_id": s, "level_id": _level(points[s], s)} for s in (XP, COINS)]
        p |= {"awards": json.dumps(awards), "levels": json.dumps(levels)}
        p["marks"] = json.dumps(new_marks)
        parts.append(WRITE_POINTS)
    if not created and active_on != today:
        parts.append(WRITE_ACTIVITY)
    values = {1: total, 2: Decimal(points[XP]) if added[XP] else None}
    standings = _boards(parts, p, values, entries)
    reads = [STANDING.format(n=board) for board, _, _ in standings]
    cursor.execute(f"WITH {', '.join(parts)} SELECT {', '.join(reads)}", p)
    ranks = _ranks(cursor, standings, cursor.fetchone(), p)
    return _render(key, event_id, total, now, streak, done, awards, points, ranks)


def _user(cursor: Any, external: str, p: dict[str, Any]) -> tuple[int, dt.date, bool]:
    """The user's pk, last active day and whether this event created them, under their lock."""
    cursor.execute(LOCK_USER, [external])
    row = cursor.fetchone()
    if row is not None:
        return row[0], row[1], False
    cursor.execute(CREATE_USER, {**p, "external": external, "public": uuid.uuid4()})
    row = cursor.fetchone()
    if row is not None:
        return row[0], p["today"], True
    # Created meanwhile by another event of this user: lock it.
    cursor.execute(LOCK_USER, [external])
    row = cursor.fetchone()
    return row[0], row[1], False


def _boards(
    parts: list[str], p: dict[str, Any], values: dict[int, Decimal | None], entries: Any
) -> list[tuple[int, bool, Decimal]]:
    """Each board's entry move or entry (a board whose value did not change is left alone):
    (board, on it before, value), and the statement's parts and parameters."""
    standings = []
    for board, _, _ in BOARDS:
        mine = values[board]
        if mine is None:
            continue
        found = entries.get(str(board))
        p[f"b{board}_value"] = mine
        if found is not None:
            p[f"b{board}_entry"], old, old_at = found[0], Decimal(str(found[1])), found[2]
            parts.append(MOVE_ENTRY.format(n=board))
        else:
            old, old_at = mine, p["now"]
            parts.append(ENTER.format(n=board, max_spare=MAX_PARTICIPANTS - UNLOCKED_SPARE))
        p[f"b{board}_old"], p[f"b{board}_old_at"] = old, old_at
        standings.append((board, found is not None, mine))
    return standings


def _ranks(
    cursor: Any, standings: list[tuple[int, bool, Decimal]], places: Any, p: dict[str, Any]
) -> dict[int, tuple[int | None, int | None, Decimal]]:
    """(previous rank, rank, threshold) by board, from the standings the statement read."""
    ranks: dict[int, tuple[int | None, int | None, Decimal]] = {}
    for (board, on_board, mine), place in zip(standings, places, strict=True):
        before, after, others, lowest, written = place
        if written:
            lowest = mine if lowest is None else min(Decimal(str(lowest)), mine)
            previous = before + 1 if on_board else None
            ranks[board] = (previous, after + 1, _threshold(others + 1, lowest))
        else:  # moved away (displaced meanwhile) or a newcomer near a full board
            ranks[board] = _enter_locked(cursor, board, mine, p)
    return ranks


def _threshold(count: int, lowest: Any) -> Decimal:
    """The value a newcomer must exceed: the lowest when the board is full, else 0."""
    return Decimal(str(lowest)) if count >= MAX_PARTICIPANTS and lowest is not None else Decimal(0)


def _enter_locked(
    cursor: Any, board: int, mine: Decimal, p: dict[str, Any]
) -> tuple[int | None, int | None, Decimal]:
    """A newcomer on a board without room to spare: one at a time (gamify's `lock_run`), by
    displacing the lowest entry when the board is full."""
    digest = hashlib.blake2b(f"same:{board}:{RUN_START}".encode(), digest_size=8).digest()
    cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest, "big", signed=True)])
    q = {**p, "board": board, "value": mine}
    cursor.execute(STANDING_ALONE, q)
    _, others, lowest = cursor.fetchone()
    q["room"] = others < MAX_PARTICIPANTS
    if not q["room"] and lowest is not None and mine <= lowest:
        return None, None, Decimal(str(lowest))
    cursor.execute(DISPLACE_AND_ENTER, q)
    if cursor.fetchone() is None:
        return None, None, Decimal(str(lowest))
    cursor.execute(STANDING_ALONE, q)
    ahead, others, lowest = cursor.fetchone()
    return None, ahead + 1, _threshold(others + 1, mine if lowest is None else min(lowest, mine))


def _achievement(pk: int, need: int, now: dt.datetime) -> dict[str, Any]:
    return {
        "id": str(uuid.UUID(int=100 + pk)),
        "name": f"{need} pipeline",
        "trigger": "metric",
        "description": None,
        "badgeUrl": None,
        "userAttributes": [],
        "metricId": str(uuid.UUID(int=METRIC)),
        "metricName": "Pipeline",
        "metricValue": need,
        "eventAttributes": [],
        "achievedAt": _stamp(now),
    }


def _system(system: int, awards: list[dict[str, Any]], total: int, now: dt.datetime) -> Any:
    key, name = SYSTEM_KEYS[system]
    mine = [a for a in awards if a["system_id"] == system]
    return {
        "id": str(uuid.UUID(int=200 + system)),
        "key": key,
        "name": name,
        "description": None,
        "badgeUrl": None,
        "maxPoints": None,
        "total": total,
        "added": sum(a["awarded"] for a in mine),
        "awards": [
            {
                "id": a["public_id"],
                "awarded": a["awarded"],
                "date": _stamp(now),
                "total": a["total_after"],
                "trigger": a["snapshot"],
                "boosts": [],
            }
            for a in mine
        ],
    }


def _board(board: int, key: str, rank_by: str, place: tuple[Any, Any, Decimal]) -> Any:
    body = {
        "id": str(uuid.UUID(int=300 + board)),
        "name": key.replace("-", " ").title(),
        "key": key,
        "rankBy": rank_by,
        "breakdownAttribute": None,
        "breakdownAttributes": [],
        "description": None,
        "start": RUN_START.isoformat(),
        "end": None,
        "startTime": None,
        "endTime": None,
        "maxParticipants": MAX_PARTICIPANTS,
        "runUnit": None,
        "runInterval": None,
        "userAttributes": [],
    }
    if rank_by == "metric":
        body |= {"metricKey": "pipeline", "metricName": "Pipeline"}
    else:
        body |= {"pointsSystemKey": "xp", "pointsSystemName": "XP"}
    previous, rank, threshold = place
    body |= {"rank": rank, "previousRank": previous, "threshold": _number(threshold)}
    body["breakdownAttributeValues"] = []
    return body


def _stamp(now: dt.datetime) -> str:
    return now.isoformat().replace("+00:00", "Z")


def _render(
    key: str,
    event_id: uuid.UUID,
    total: Decimal,
    now: dt.datetime,
    streak: tuple[int, dt.date, bool],
    done: list[int],
    awards: list[dict[str, Any]],
    points: dict[int, int],
    ranks: dict[int, tuple[Any, Any, Decimal]],
) -> dict[str, Any]:
    """The body gamify answers for this event, key for key (apps/pipeline/wire.py)."""
    today = now.date()
    needs = dict(ACHIEVEMENTS)
    paid = {a["system_id"] for a in awards}
    return {
        "eventId": str(event_id),
        "metricId": str(uuid.UUID(int=METRIC)),
        "total": _number(total),
        "achievements": [_achievement(pk, needs[pk], now) for pk in done],
        "currentStreak": {
            "length": streak[0],
            "frequency": "daily",
            "started": streak[1].isoformat(),
            "periodStart": today.isoformat(),
            "periodEnd": today.isoformat(),
            "expires": (today + dt.timedelta(days=1)).isoformat(),
            "extended": True,
        },
        "points": {
            SYSTEM_KEYS[s][0]: _system(s, awards, points[s], now) for s in (XP, COINS) if s in paid
        },
        "leaderboards": {
            board_key: _board(board, board_key, rank_by, ranks[board])
            for board, board_key, rank_by in BOARDS
            if board in ranks
        },
    }
