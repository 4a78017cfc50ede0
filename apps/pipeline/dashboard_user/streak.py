"""The streak card of the end-user page: the streak as the API shows it now, and a calendar of
its latest periods (extended, frozen, paused, missed)."""

import datetime as dt
from dataclasses import dataclass

from apps.accounts.models import Tenant
from apps.streaks.choices import Frequency
from apps.streaks.domain import Pause, unit_of
from apps.streaks.selectors import (
    CALENDAR_PENDING,
    CalendarPeriod,
    StreakView,
    pauses_of,
    streak_calendar,
    streak_state_get,
    streak_view,
    streaks_configured,
)
from apps.users.domain import local_date
from apps.users.models import EndUser

# Daily streaks show whole weeks, Sunday to Saturday (the weeks of ARCHITECTURE.md §6) ...
CALENDAR_WEEKS = 8
# ... weekly and monthly ones this many periods.
CALENDAR_PERIODS = 8
WEEKDAYS = ("S", "M", "T", "W", "T", "F", "S")


@dataclass(frozen=True)
class Cell:
    label: str
    title: str  # what happened, shown on hover
    status: str  # a CALENDAR_ status of apps.streaks.selectors, or "upcoming"
    current: bool = False
    paused_ahead: bool = False  # an upcoming period inside a pause


@dataclass(frozen=True)
class Week:
    month: str  # the month's name on the first week and on the week holding a 1st, else ""
    cells: list[Cell]


@dataclass(frozen=True)
class StreakCard:
    view: StreakView
    configured: bool
    enabled: bool  # False when the user turned streaks off (preferences)
    today: dt.date
    weeks: list[Week]  # daily streaks: one row per week
    periods: list[Cell]  # weekly and monthly streaks: one cell per period
    pauses: list[tuple[dt.date, dt.date]]  # active and upcoming

    @property
    def frequency(self) -> str:
        return self.view.config.frequency

    @property
    def unit(self) -> str:
        return unit_of(self.frequency)

    @property
    def freezes(self) -> int:
        return self.view.settlement.state.freezes


def _label(period: dt.date, frequency: str) -> str:
    if frequency == Frequency.MONTHLY:
        return f"{period:%b %Y}"
    return f"{period:%b} {period.day}"


def _cell(period: CalendarPeriod, frequency: str, current: dt.date) -> Cell:
    span = f"{period.start:%a %d %b %Y}"
    if period.end != period.start:
        span = f"{period.start:%d %b} to {period.end:%d %b %Y}"
    status = period.status
    if period.start == current and status == CALENDAR_PENDING:
        title = f"{span}: in progress, streak {period.length}"
    else:
        title = f"{span}: {status}, streak {period.length}"
    label = (
        str(period.start.day) if frequency == Frequency.DAILY else _label(period.start, frequency)
    )
    return Cell(label=label, title=title, status=status, current=period.start == current)


def _upcoming(day: dt.date, pauses: list[Pause]) -> Cell:
    paused = any(pause.covers(day, Frequency.DAILY) for pause in pauses)
    return Cell(
        label=str(day.day),
        title=f"{day:%a %d %b %Y}: upcoming" + (", paused" if paused else ""),
        status="upcoming",
        paused_ahead=paused,
    )


def _weeks(user: EndUser, view: StreakView, pauses: list[Pause]) -> list[Week]:
    """Whole weeks ending with the current one; its days after today are upcoming."""
    current = view.current
    this_sunday = current - dt.timedelta(days=(current.weekday() + 1) % 7)
    first = this_sunday - dt.timedelta(weeks=CALENDAR_WEEKS - 1)
    days = streak_calendar(user, view, (current - first).days + 1, pauses)
    cells = [_cell(day, Frequency.DAILY, current) for day in days]
    cells += [
        _upcoming(current + dt.timedelta(days=offset), pauses)
        for offset in range(1, (this_sunday + dt.timedelta(days=6) - current).days + 1)
    ]
    weeks = []
    for index, start in enumerate(range(0, len(cells), 7)):
        sunday = first + dt.timedelta(weeks=index)
        saturday = sunday + dt.timedelta(days=6)
        named = index == 0 or saturday.month != sunday.month or sunday.day == 1
        month = f"{saturday:%b}" if named else ""
        weeks.append(Week(month=month, cells=cells[start : start + 7]))
    return weeks


def streak_card(tenant: Tenant, user: EndUser, now: dt.datetime) -> StreakCard:
    """Settled in memory, as the API reads it: a missed period shows at once."""
    state = streak_state_get(user)
    # Every active pause, read once for the view, the calendar and the list below (a user has
    # a handful: staff and the admin API create them one by one).
    pauses = pauses_of(user)
    view = streak_view(tenant, user, state, now, pauses=pauses)
    configured = streaks_configured(view.config)
    today = local_date(now, user.tz)
    weeks: list[Week] = []
    periods: list[Cell] = []
    if configured and view.config.frequency == Frequency.DAILY:
        weeks = _weeks(user, view, pauses)
    elif configured:
        calendar = streak_calendar(user, view, CALENDAR_PERIODS, pauses)
        periods = [_cell(p, view.config.frequency, view.current) for p in calendar]
    return StreakCard(
        view=view,
        configured=configured,
        enabled=state.enabled if state is not None else True,
        today=today,
        weeks=weeks,
        periods=periods,
        pauses=[(p.start, p.end) for p in pauses if p.end >= today],
    )
