"""Participants per leaderboard run."""

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count

from apps.accounts.models import Tenant
from apps.analytics.selectors.ranges import DateRange
from apps.leaderboards.choices import Status as BoardStatus
from apps.leaderboards.models import LeaderboardEntry
from apps.leaderboards.selectors import BoardDef, board_definitions


@dataclass(frozen=True)
class Run:
    start: dt.date
    end: dt.date | None
    participants: int


@dataclass(frozen=True)
class BoardParticipation:
    board: BoardDef
    current: Run | None  # the run holding today (active boards), else the last one with entries
    runs: list[Run]  # runs with participants overlapping the range, oldest first


def leaderboard_participation(
    tenant: Tenant, period: DateRange, today: dt.date
) -> list[BoardParticipation]:
    """Participants (distinct users with an entry) per leaderboard run. One aggregate query
    over the entries, grouped by board and run."""
    boards = board_definitions(tenant)
    rows = (
        LeaderboardEntry.objects.filter(leaderboard__tenant=tenant)
        .values("leaderboard_id", "run_start")
        .annotate(n=Count("user_id", distinct=True))
        .values_list("leaderboard_id", "run_start", "n")
    )
    runs: dict[int, dict[dt.date, int]] = defaultdict(dict)
    for board_pk, run_start, n in rows:
        runs[board_pk][run_start] = n
    result = []
    for board in boards.values():
        counts = runs.get(board.pk, {})
        current_start = board.run_for(today) if board.status == BoardStatus.ACTIVE else None
        if current_start is None and counts:
            current_start = max(counts)
        current = (
            Run(current_start, board.run_end(current_start), counts.get(current_start, 0))
            if current_start is not None
            else None
        )
        in_range = []
        for start in sorted(counts):
            end = board.run_end(start)
            if start <= period.end and (end is None or end >= period.start):
                in_range.append(Run(start, end, counts[start]))
        result.append(BoardParticipation(board, current, in_range))
    return result
