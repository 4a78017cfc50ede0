"""Pure streak rules: periods in a user's calendar, conditions, freezes, pauses, expiry.

No ORM here; everything takes dates in the user's local calendar and returns new values.

Vocabulary
- A *period* is a local calendar day, week (Sunday to Saturday) or month, named by its first
  day.
- A streak's stored state says how long it is and through which period it is *settled*: every
  period up to and including `settled_through` has been accounted for, by activity that met
  the conditions (an extension) or by something that protected it (a day off, a pause, a
  freeze).
- Settling walks the periods after `settled_through` and before the current one: a day off or a
  paused period keeps the length for free, any other missed period consumes one freeze, and a
  missed period with no freeze left loses the streak.
"""

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal

from apps.core import declarations as declare
from apps.core.arguments import Unset
from apps.core.wording import agreeing, counted
from apps.streaks.choices import EvaluationMode, Frequency, Weekday
from apps.streaks.errors import StreakPauseInvalidError, StreakSettingsInvalidError

DAILY = "daily"
WEEKLY = "weekly"
MONTHLY = "monthly"
FREQUENCIES = (DAILY, WEEKLY, MONTHLY)
UNITS: dict[str, str] = {DAILY: "day", WEEKLY: "week", MONTHLY: "month"}


def unit_of(frequency: str) -> str:
    """The period of a streak frequency, as in "a streak of 4 days"."""
    return UNITS.get(frequency, "period")


# A guard against unbounded walks: no streak question needs to look further than this many
# periods (about ten years of days).
MAX_WALK = 4000


def weekday_sunday0(day: dt.date) -> int:
    """0 = Sunday ... 6 = Saturday, the numbering of `daysOff` (reference §3.2)."""
    return (day.weekday() + 1) % 7


def period_start(day: dt.date, frequency: str) -> dt.date:
    if frequency == DAILY:
        return day
    if frequency == WEEKLY:
        return day - dt.timedelta(days=weekday_sunday0(day))
    return day.replace(day=1)


def next_period(start: dt.date, frequency: str) -> dt.date:
    if frequency == DAILY:
        return start + dt.timedelta(days=1)
    if frequency == WEEKLY:
        return start + dt.timedelta(days=7)
    return (start.replace(day=28) + dt.timedelta(days=4)).replace(day=1)


def previous_period(start: dt.date, frequency: str) -> dt.date:
    return period_start(start - dt.timedelta(days=1), frequency)


def period_end(start: dt.date, frequency: str) -> dt.date:
    return next_period(start, frequency) - dt.timedelta(days=1)


def periods_after(start: dt.date, frequency: str) -> Iterator[dt.date]:
    """The periods following `start`, at most MAX_WALK of them."""
    current = start
    for _ in range(MAX_WALK):
        current = next_period(current, frequency)
        yield current


def shift_periods(start: dt.date, frequency: str, count: int) -> dt.date:
    """The period `count` periods before (negative) or after `start`."""
    current = start
    step = next_period if count > 0 else previous_period
    for _ in range(abs(count)):
        current = step(current, frequency)
    return current


@dataclass(frozen=True)
class Rules:
    """What one user must do each period (tenant settings with that user's personalization)."""

    frequency: str
    mode: str  # "AND" or "OR"
    thresholds: Mapping[int, Decimal]  # metric pk -> minimum change within a period
    days_off: frozenset[int] = frozenset()  # 0 = Sunday; daily streaks only
    enabled: bool = True
    freezes_enabled: bool = False

    def is_day_off(self, period: dt.date) -> bool:
        return self.frequency == DAILY and weekday_sunday0(period) in self.days_off


def conditions_met(rules: Rules, changes: Mapping[int, Decimal]) -> bool:
    """Whether the changes of the condition metrics within one period meet the rules."""
    if not rules.enabled or not rules.thresholds:
        return False
    results = [
        changes.get(metric, Decimal(0)) >= threshold
        for metric, threshold in rules.thresholds.items()
    ]
    return all(results) if rules.mode == "AND" else any(results)


@dataclass(frozen=True)
class Pause:
    id: str
    start: dt.date
    end: dt.date

    def covers(self, period: dt.date, frequency: str) -> bool:
        """A pause protects every period it overlaps by at least one day."""
        return self.start <= period_end(period, frequency) and self.end >= period


def is_paused(period: dt.date, frequency: str, pauses: Iterable[Pause]) -> bool:
    return any(pause.covers(period, frequency) for pause in pauses)


@dataclass(frozen=True)
class State:
    length: int = 0
    started: dt.date | None = None
    settled_through: dt.date | None = None  # a period start
    freezes: int = 0


@dataclass(frozen=True)
class Settlement:
    state: State
    frozen: tuple[dt.date, ...] = ()  # periods that consumed a freeze now
    paused: tuple[dt.date, ...] = ()  # periods kept by a pause
    lost: int = 0  # the length lost now (0 when the streak survived or was already 0)


def settle(state: State, rules: Rules, pauses: Iterable[Pause], current: dt.date) -> Settlement:
    """Account for every period after `settled_through` and before `current` (the user's
    current period). The result is settled through the period before `current`."""
    if state.length == 0 or state.settled_through is None:
        return Settlement(state)
    pauses = tuple(pauses)
    frozen: list[dt.date] = []
    paused: list[dt.date] = []
    freezes = state.freezes if rules.freezes_enabled else 0
    last = state.settled_through
    for period in periods_after(state.settled_through, rules.frequency):
        if period >= current:
            break
        if is_paused(period, rules.frequency, pauses):
            paused.append(period)
        elif rules.is_day_off(period):
            pass
        elif freezes > 0:
            freezes -= 1
            frozen.append(period)
        else:
            lost_state = State(
                length=0, started=None, settled_through=period, freezes=state.freezes - len(frozen)
            )
            return Settlement(lost_state, tuple(frozen), tuple(paused), lost=state.length)
        last = period
    settled = replace(state, settled_through=last, freezes=state.freezes - len(frozen))
    return Settlement(settled, tuple(frozen), tuple(paused))


def extend(state: State, current: dt.date, frequency: str) -> tuple[State, bool]:
    """Count `current` for a settled state whose conditions are met in it. Returns the new
    state and whether the length grew (False when the period was already counted)."""
    if state.length > 0 and state.settled_through is not None and state.settled_through >= current:
        return state, False
    contiguous = (
        state.length > 0
        and state.settled_through is not None
        and next_period(state.settled_through, frequency) == current
    )
    if contiguous:
        return replace(state, length=state.length + 1, settled_through=current), True
    return replace(state, length=1, started=current, settled_through=current), True


def expires(state: State, rules: Rules, pauses: Iterable[Pause]) -> dt.date | None:
    """The last day on which activity keeps the streak: the end of the first period after
    `settled_through` that neither a pause, a day off nor one of the remaining freezes
    protects. None without a streak."""
    if state.length == 0 or state.settled_through is None:
        return None
    pauses = tuple(pauses)
    freezes = state.freezes if rules.freezes_enabled else 0
    for period in periods_after(state.settled_through, rules.frequency):
        if is_paused(period, rules.frequency, pauses) or rules.is_day_off(period):
            continue
        if freezes > 0:
            freezes -= 1
            continue
        return period_end(period, rules.frequency)
    return None


def restore_window_start(today: dt.date, frequency: str) -> dt.date:
    """First period considered by a restore (reference §4.3)."""
    if frequency == DAILY:
        return today - dt.timedelta(days=90)
    if frequency == WEEKLY:
        return period_start(dt.date(today.year, 1, 1), WEEKLY)
    return dt.date(today.year - 1, 1, 1)


def remap_settled(
    settled_through: dt.date, frequency: str, old_zone: dt.tzinfo, new_zone: dt.tzinfo
) -> dt.date:
    """Re-express a settled period in a user's new time zone: the new-zone period holding the
    last instant of the old one. A time-zone change so never skips a period the user did not
    get to live (moving east) and never lets a period be counted twice (moving west)."""
    last_instant = dt.datetime.combine(
        next_period(settled_through, frequency), dt.time(), tzinfo=old_zone
    ) - dt.timedelta(microseconds=1)
    return period_start(last_instant.astimezone(new_zone).date(), frequency)


def freezes_auto_earn(
    freezes: int,
    maximum: int,
    amount: int,
    interval_days: int,
    last_earned: dt.date,
    today: dt.date,
) -> tuple[int, dt.date, int]:
    """Freezes earned every `interval_days` since `last_earned`, never above `maximum`.
    Returns (new count, new last-earned date, earned now)."""
    if interval_days <= 0 or amount <= 0 or today < last_earned:
        return freezes, last_earned, 0
    intervals = (today - last_earned).days // interval_days
    if intervals == 0:
        return freezes, last_earned, 0
    new_last = last_earned + dt.timedelta(days=intervals * interval_days)
    earned = max(0, min(maximum, freezes + intervals * amount) - freezes)
    return freezes + earned, new_last, earned


def missed_at(settled_through: dt.date, frequency: str, zone: dt.tzinfo) -> dt.datetime:
    """The instant a whole period after `settled_through` has passed without activity: local
    midnight at the start of the second period after it."""
    return period_over_at(next_period(settled_through, frequency), frequency, zone)


def period_over_at(start: dt.date, frequency: str, zone: dt.tzinfo) -> dt.datetime:
    """The instant the period that starts on `start` is over: local midnight at the start of
    the next one (when a streak that nothing kept in it was lost)."""
    return dt.datetime.combine(next_period(start, frequency), dt.time(), tzinfo=zone)


# --- configuration rules, for the admin API and the dashboard alike ---------------------------

MAX_FREEZES = 100  # freezes at start, the maximum a user holds, and those earned at once
MAX_AUTO_EARN_DAYS = 3650
MAX_THRESHOLD = 10**12  # a condition's change per period
MAX_DAYS_OFF = 6  # a daily streak needs at least one day a week
MAX_PAUSE_DAYS = 365  # a pause lasts at most this many days after its first


@dataclass(frozen=True)
class FreezeSettings:
    """Freezes of a tenant's streaks; auto-earn is both interval (days) and amount, or off."""

    start_count: int
    max_count: int
    auto_earn_interval: int | None = None
    auto_earn_amount: int | None = None


@dataclass(frozen=True, kw_only=True)
class TenantStreakSettings:
    """A tenant's streak settings (apps/core/declarations.py), as streak_settings_update takes
    them, in the order the settings page reads. (Not `StreakSettings`: that is the model that
    stores them.) A tenant has one set, made by its first update with the model's defaults for
    what is not given: no setting is required, none is ever created apart from an update."""

    frequency: str | Unset = declare.choice(
        "Frequency",
        Frequency,
        help="How often users must meet the conditions. Changing it restarts every streak.",
    )
    # (metric key, change per period), one per metric; the API's `metrics`.
    conditions: list[tuple[str, int]] | Unset = declare.structure(
        "Conditions",
        wire="metrics",
        help="The change of each metric a user needs in a period (whole numbers). No "
        "conditions: nobody extends a streak.",
    )
    evaluation_mode: str | Unset = declare.choice("Users must meet", EvaluationMode)
    days_off: list[int] | Unset = declare.choices(
        "Days off",
        Weekday,
        max_length=MAX_DAYS_OFF,
        help="Daily streaks only: a day off neither extends nor breaks a streak. Saving a "
        "weekly or monthly frequency clears them.",
    )
    customization_enabled: bool | Unset = declare.flag(
        "Users may customize",
        help="Users may set their own conditions and days off (preferences API).",
    )
    freezes: FreezeSettings | Unset | None = declare.structure(
        "Freezes",
        nullable=True,  # None turns freezes off
        help="A freeze keeps a streak alive through one missed period.",
    )


def freezes_problem(freezes: FreezeSettings) -> StreakSettingsInvalidError | None:
    """What is wrong with the freeze settings (None: nothing), naming FreezeSettings' fields."""
    if freezes.max_count < freezes.start_count:
        return StreakSettingsInvalidError(
            "{max_count} must be at least {start_count}",
            fields=("max_count", "start_count"),
            code="out_of_range",
        )
    if (freezes.auto_earn_interval is None) != (freezes.auto_earn_amount is None):
        return StreakSettingsInvalidError(
            "set both {auto_earn_interval} and {auto_earn_amount}, or neither",
            fields=("auto_earn_interval", "auto_earn_amount"),
            code="conflict",
        )
    return None


def conditions_problem(metric_keys: Iterable[str]) -> StreakSettingsInvalidError | None:
    keys = list(metric_keys)
    if len(keys) == len(set(keys)):
        return None
    return StreakSettingsInvalidError(
        "metric keys must be unique", fields="conditions", code="unique"
    )


def conditionless_problem(
    conditions: int, customization_enabled: bool, streaking: int
) -> StreakSettingsInvalidError | None:
    """A streak nobody can extend: no condition left, users may not set their own, and users
    hold a streak that would only wait to be lost (issue 27's guard rail). Without streaking
    users there is nothing to lose: no conditions is how a tenant goes without streaks."""
    if conditions or customization_enabled or not streaking:
        return None
    return StreakSettingsInvalidError(
        f"{{conditions}}: {counted(streaking, 'user')} {agreeing(streaking, 'has', 'have')} a "
        "streak that nobody could extend without a condition; keep at least one metric",
        fields="conditions",
        code="unusable",
    )


def pause_problem(start: dt.date, end: dt.date) -> StreakPauseInvalidError | None:
    if end < start:
        return StreakPauseInvalidError(
            "{end} must not be before {start}", fields=("end", "start"), code="out_of_range"
        )
    if (end - start).days > MAX_PAUSE_DAYS:
        return StreakPauseInvalidError(
            f"a pause lasts at most {MAX_PAUSE_DAYS + 1} days",
            fields=("start", "end"),
            code="out_of_range",
        )
    return None
