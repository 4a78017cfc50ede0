"""How the dashboard words a leaderboard: values in the units of what it ranks, runs and
breakdown groups as labels, what it ranks and when it repeats in one line."""

import datetime as dt
from decimal import Decimal

from apps.core.shown_time import date_shown
from apps.leaderboards.choices import RankBy
from apps.leaderboards.models import Leaderboard
from apps.leaderboards.selectors import BoardDef
from apps.metrics.choices import UnitType
from apps.streaks.choices import Frequency

STREAK_UNITS: dict[str, tuple[str, str]] = {
    Frequency.DAILY: ("day", "days"),
    Frequency.WEEKLY: ("week", "weeks"),
    Frequency.MONTHLY: ("month", "months"),
}
# Between the first and last day of a span of dates.
DASH = "\N{EN DASH}"
RUN_UNITS = {"day": ("day", "days"), "month": ("month", "months"), "year": ("year", "years")}


def amount_text(value: Decimal) -> str:
    """Grouped thousands, no trailing zeros: amounts are stored with 6 decimal places, and
    1,250 reads better than 1250.000000."""
    if value == value.to_integral_value():
        return f"{int(value):,}"
    return format(value.normalize(), ",f")


def value_text(board: Leaderboard, value: Decimal, streak_frequency: str) -> str:
    """A ranked value as staff read it: "1,250 words", "12.50 USD", "300 XP", "5 days".
    Needs the board's metric and points system loaded."""
    if board.rank_by == RankBy.METRIC and board.metric is not None:
        metric = board.metric
        if metric.unit_type == UnitType.CURRENCY and value != value.to_integral_value():
            return f"{value:,.2f} {metric.units}"
        return f"{amount_text(value)} {metric.units}".rstrip()
    if board.rank_by == RankBy.POINTS and board.points_system is not None:
        return f"{amount_text(value)} {board.points_system.name}"
    if board.rank_by == RankBy.STREAK:
        one, many = STREAK_UNITS.get(streak_frequency, ("period", "periods"))
        return f"{amount_text(value)} {one if value == 1 else many}"
    return amount_text(value)


def day(value: dt.date) -> str:
    return date_shown(value)


def ranked_on(board: Leaderboard) -> str:
    if board.rank_by == RankBy.METRIC:
        return f"Total of {board.metric.name}" if board.metric else "Total of a metric"
    if board.rank_by == RankBy.POINTS:
        system = board.points_system
        return f"Total of {system.name} points" if system else "Total of points"
    return "Current streak length"


def runs_text(board: Leaderboard) -> str:
    if not board.run_unit:
        return "Perpetual"
    one, many = RUN_UNITS.get(board.run_unit, (board.run_unit, board.run_unit))
    interval = board.run_interval or 1
    return f"Restarts every {one}" if interval == 1 else f"Restarts every {interval} {many}"


def dates_text(board: Leaderboard) -> str:
    if board.end is None:
        return f"From {day(board.start)}"
    return f"{day(board.start)} {DASH} {day(board.end)}"


def window_text(board: Leaderboard) -> str:
    start, end = board.start_time, board.end_time
    if start is None and end is None:
        return ""
    if start is not None and end is not None:
        return f"between {start:%H:%M} and {end:%H:%M}"
    if start is not None:
        return f"from {start:%H:%M}"
    assert end is not None  # noqa: S101 - both None handled above
    return f"until {end:%H:%M}"


def run_label(definition: BoardDef, run: dt.date, current: dt.date) -> str:
    end = definition.run_end(run)
    text = f"{day(run)} {DASH} {day(end)}" if end is not None else f"From {day(run)}"
    return f"{text} (current)" if run == current else text


def group_label(group: str) -> str:
    """A breakdown group ("plan=pro|region=eu") as "plan: pro, region: eu"."""
    if not group:
        return "Everyone"
    return ", ".join(part.replace("=", ": ", 1) for part in group.split("|"))
