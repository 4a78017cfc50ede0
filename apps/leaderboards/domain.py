"""Pure leaderboard rules: the settings of a board, runs, daily time windows, lifecycle. No
ORM."""

import datetime as dt
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from apps.core import declarations as declare
from apps.core.arguments import Unset
from apps.leaderboards.choices import RankBy, RunUnit, Status

DAY, MONTH, YEAR = "day", "month", "year"
MAX_RUN_INTERVAL = 1000  # units of a run: up to 1,000 days, months or years
MAX_BREAKDOWN_ATTRIBUTES = 10


def max_participants() -> int:
    # The operator's LEADERBOARD_MAX_PARTICIPANTS (default 1,000, Trophy's limit), read when
    # checked (tests change it).
    return int(settings.LEADERBOARD_MAX_PARTICIPANTS)


@dataclass(frozen=True, kw_only=True)
class LeaderboardSettings:
    """A board's settings (apps/core/declarations.py), as leaderboard_create and
    leaderboard_update take them. A live board keeps its key, ranking and participation
    filters (FROZEN_ONCE_LIVE)."""

    name: str | Unset = declare.text("Name", max_length=255, required=True)
    key: str | Unset = declare.key(
        help="How the API names the leaderboard. Can change only while it is inactive.",
        required=True,
    )
    # A wish, as the dashboard's actions: "active" schedules a board that starts later.
    status: str | Unset = declare.choice(
        "Status",
        Status,
        help="Choosing Active with a future start date schedules it. Finished: only once the "
        "end date has passed. Inactive again: back to editing; rankings are kept.",
    )
    description: str | Unset | None = declare.text(
        "Description", max_length=2000, nullable=True, blank=True, multiline=True
    )
    rank_by: str | Unset = declare.choice(
        "Rank by",
        RankBy,
        required=True,
        help="Can change only while the leaderboard is inactive.",
    )
    metric_id: str | Unset | None = declare.reference("Metric", nullable=True)
    points_system_id: str | Unset | None = declare.reference("Points system", nullable=True)
    max_participants: int | Unset = declare.integer(
        "Maximum participants",
        min_value=1,
        max_value=max_participants,
        help="From 1 to {maximum:,}, per breakdown group. When full, a newcomer must beat the "
        "lowest value to enter.",
    )
    start: dt.date | Unset = declare.date(
        "Start date", help="Empty: today. A future date schedules the leaderboard."
    )
    end: dt.date | Unset | None = declare.date(
        "End date", nullable=True, help="Inclusive. Empty: no end."
    )
    start_time: dt.time | Unset | None = declare.time(
        "Counts from",
        nullable=True,
        help="Time of day, in each user's own time zone. Empty: from midnight.",
    )
    end_time: dt.time | Unset | None = declare.time(
        "Counts until", nullable=True, help="Empty: until midnight."
    )
    breakdown_attributes: list[str] | Unset | None = declare.references(
        "Breakdown attributes",
        nullable=True,
        max_length=MAX_BREAKDOWN_ATTRIBUTES,
        help="One ranking per combination of values; end-users without a value for each do "
        "not take part. Empty: one ranking for everyone.",
    )  # user attribute ids
    run_unit: str | Unset | None = declare.choice("Unit", RunUnit, nullable=True)
    run_interval: int | Unset | None = declare.integer(
        "Restarts every",
        min_value=1,
        max_value=MAX_RUN_INTERVAL,
        nullable=True,
        help="Each run ranks from zero. Streak leaderboards are always perpetual.",
    )
    # {"attributeId", "attributeValue"} references
    user_attributes: list[dict[str, str]] | Unset | None = declare.structure(
        "Participation filters",
        nullable=True,
        help="Only end-users with all these attribute values take part. Empty: everyone. Can "
        "change only while the leaderboard is inactive.",
    )


# What a live board keeps.
FROZEN_ONCE_LIVE = ("key", "rank_by", "user_attributes")


def _add_months(day: dt.date, months: int) -> dt.date:
    """`months` months after `day`, clamped to the month's last day (31 Jan + 1 = 28/29 Feb)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    next_first = dt.date(year + (month == 12), month % 12 + 1, 1)
    return dt.date(year, month, min(day.day, (next_first - dt.timedelta(days=1)).day))


def run_offset(start: dt.date, unit: str, interval: int, index: int) -> dt.date:
    """The start of run number `index` (0 = the first run, starting at `start`). Months and
    years are counted from `start`, so a run started on 31 January restarts on the last day
    of shorter months without drifting."""
    if unit == DAY:
        return start + dt.timedelta(days=index * interval)
    months = index * interval * (12 if unit == YEAR else 1)
    return _add_months(start, months)


def run_for(day: dt.date, start: dt.date, unit: str | None, interval: int | None) -> dt.date | None:
    """The start of the run holding `day`; the board's start for perpetual boards; None
    before the board starts."""
    if day < start:
        return None
    if unit is None:
        return start
    interval = interval or 1
    if unit == DAY:
        return run_offset(start, DAY, interval, (day - start).days // interval)
    months = (day.year - start.year) * 12 + day.month - start.month
    step = interval * (12 if unit == YEAR else 1)
    index = max(0, months // step)
    while run_offset(start, unit, interval, index) > day:
        index -= 1
    while run_offset(start, unit, interval, index + 1) <= day:
        index += 1
    return run_offset(start, unit, interval, index)


def run_end(
    run_start: dt.date,
    board_start: dt.date,
    unit: str | None,
    interval: int | None,
    board_end: dt.date | None,
) -> dt.date | None:
    """Last day of the run (inclusive), capped by the board's end; None if it never ends."""
    if unit is None:
        return board_end
    interval = interval or 1
    if unit == DAY:
        end = run_start + dt.timedelta(days=interval - 1)
    else:
        index = 0
        while run_offset(board_start, unit, interval, index) < run_start:
            index += 1
        end = run_offset(board_start, unit, interval, index + 1) - dt.timedelta(days=1)
    return min(end, board_end) if board_end is not None else end


def in_window(moment: dt.time, start: dt.time | None, end: dt.time | None) -> bool:
    """Daily time restriction in the participant's local time: only a start = from then on;
    only an end = until then; both = between them (a window past midnight wraps around)."""
    if start is None and end is None:
        return True
    if start is not None and end is not None:
        if start <= end:
            return start <= moment < end
        return moment >= start or moment < end
    if start is not None:
        return moment >= start
    assert end is not None  # noqa: S101 - both None handled above
    return moment < end


def status_after_activation(start: dt.date, today: dt.date) -> str:
    """Making a board live: active, or scheduled when its start is in the future."""
    return "scheduled" if start > today else "active"


# Runs and boards finish in every time zone before they are finalized (spec: up to about
# 12 hours after the end in UTC).
FINALIZE_AFTER = dt.timedelta(hours=12)


def finished(end: dt.date | None, now_utc: dt.datetime) -> bool:
    if end is None:
        return False
    last_moment = dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
    return now_utc >= last_moment + FINALIZE_AFTER


# --- the rank order ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RankKey:
    """One key of the rank order: an entry's field, and whether higher comes first."""

    field: str  # the attname of a LeaderboardEntry field
    descending: bool = False


# The rank order of a run's entries, best first: the higher value, then whoever reached it
# first, then the lower user id, so ranks are 1..n without ties. Stated here only: the SQL
# ORDER BYs and "ahead of" conditions (leaderboards/sql.py), the ORM's order
# (rank_order_by: selectors.ordered, the dashboard's list), the Redis members (ranks.member)
# and Python's sort key (rank_sort_key) are derived from it, and
# tests/leaderboards/test_rank_order.py checks that they rank alike.
RANK_ORDER: tuple[RankKey, ...] = (
    RankKey("value", descending=True),
    RankKey("reached_at"),
    RankKey("user_id"),
)


def rank_order_by() -> list[str]:
    """The rank order as QuerySet.order_by arguments: ["-value", "reached_at", "user_id"]."""
    return [f"-{key.field}" if key.descending else key.field for key in RANK_ORDER]


@functools.total_ordering
class _Reversed:
    """A key value that sorts the other way round (a descending key of a mixed sort)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and self.value == other.value

    def __lt__(self, other: "_Reversed") -> bool:
        return bool(other.value < self.value)

    def __hash__(self) -> int:
        return hash(self.value)


def rank_sort_key(place: Mapping[str, Any]) -> tuple[Any, ...]:
    """Python's copy of the rank order: `sorted(places, key=rank_sort_key)` is best first, for
    places given as {field: value} of every field of RANK_ORDER."""
    return tuple(_Reversed(place[k.field]) if k.descending else place[k.field] for k in RANK_ORDER)


# Fair play (apps/fairplay): an excluded user's entries are kept, moving with their events, in
# a group of their own beside the one they would rank in: this prefix before it. No reader asks
# for such a group (a breakdown group starts with an attribute key, which never holds "~"), so
# every ranking, count, page and Redis set leaves them out, and reinstating the user moves the
# entries back in place, with the values their events gave them meanwhile.
EXCLUDED_PREFIX = "~excluded|"


def group_excluded(group: str) -> str:
    """Where an excluded user's entry of `group` is kept."""
    return EXCLUDED_PREFIX + group


def group_is_excluded(group: str) -> bool:
    return group.startswith(EXCLUDED_PREFIX)


def group_included(group: str) -> str:
    """The group an entry ranks in once its user is reinstated (itself when not excluded)."""
    return group[len(EXCLUDED_PREFIX) :] if group_is_excluded(group) else group
