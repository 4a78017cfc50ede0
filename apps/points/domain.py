"""Pure points rules: the settings of systems, levels and boosts, trigger crossings, boosts and
rounding, caps, levels, time intervals, summary buckets. No ORM; the services hold the locks
and write the ledger."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal

from apps.core import declarations as declare
from apps.core.arguments import Unset
from apps.points.choices import Rounding, TimeUnit, TriggerStatus, TriggerType
from apps.points.errors import PointsConfigInvalidError

DOWN, UP, NEAREST = "down", "up", "nearest"
# With stacked boosts of different roundings the product is rounded once, by the most
# conservative mode present: down before nearest before up (points are often currency).
_ROUNDING_ORDER = (DOWN, NEAREST, UP)
_DECIMAL_ROUNDING = {DOWN: ROUND_FLOOR, UP: ROUND_CEILING, NEAREST: ROUND_HALF_UP}
MAX_POINTS = 10**15  # a system's maximum, a level's threshold


# --- declarations: systems, levels, boosts ---


@dataclass(frozen=True, kw_only=True)
class PointsSystemSettings:
    """A system's settings (apps/core/declarations.py), as points_system_create and
    points_system_update take them. Its key is set for good."""

    key: str | Unset = declare.key(
        help="How the API names the system; set for good.", required=True, fixed=True
    )
    name: str | Unset = declare.text("Name", max_length=255, required=True)
    description: str | Unset = declare.text(
        "Description", max_length=2000, blank=True, multiline=True
    )
    # The API's badge object ({"url"} or null).
    badge_url: str | Unset | None = declare.url("Badge URL", nullable=True, wire="badge")
    max_points: int | Unset | None = declare.integer(
        "Maximum points",
        min_value=1,
        max_value=MAX_POINTS,
        nullable=True,
        help="Empty: no maximum.",
    )


@dataclass(frozen=True, kw_only=True)
class PointsLevelSettings:
    """A level's settings, as points_level_create and points_level_update take them. Its key
    is set for good."""

    key: str | Unset = declare.key(
        help="How the API names the level; set for good.", required=True, fixed=True
    )
    name: str | Unset = declare.text("Name", max_length=255, required=True)
    points: int | Unset = declare.integer(
        "Points",
        min_value=0,
        max_value=MAX_POINTS,
        required=True,
        help="Users with at least this many points reach the level.",
    )
    description: str | Unset = declare.text("Description", max_length=2000, blank=True)
    badge_url: str | Unset | None = declare.url("Badge URL", nullable=True, wire="badge")


@dataclass(frozen=True, kw_only=True)
class PointsBoostSettings:
    """A boost's settings, as points_boost_create and points_boost_update take them: for one
    end-user (`user_id`, set for good) or for everyone matching the attribute filters
    (boost_problem)."""

    name: str | Unset = declare.text("Name", max_length=255, required=True)
    start: dt.date | Unset = declare.date("Start", required=True)
    end: dt.date | Unset | None = declare.date(
        "End", nullable=True, help="Inclusive. Empty: no end."
    )
    # Greater than 0, less than 100 and not 1 (multiplier_problem).
    multiplier: Decimal | Unset = declare.decimal(
        "Multiplier", required=True, help="E.g. 2 doubles, 0.5 halves."
    )
    rounding: str | Unset = declare.choice("Rounding", Rounding)
    user_id: str | Unset | None = declare.text(
        "User id",
        max_length=255,
        nullable=True,
        fixed=True,
        help="A boost for this end-user only; set for good. Empty: everyone who matches the "
        "attribute filters.",
    )
    # {"attributeId", "attributeValue"} references
    user_attributes: list[dict[str, str]] | Unset | None = declare.structure(
        "User attributes", nullable=True, help="Empty: everyone."
    )


def set_for_good_problem(name: str) -> PointsConfigInvalidError:
    """An update that would change what an object was created with (a key, a boost's
    end-user); giving the stored value again is not a change."""
    return PointsConfigInvalidError("{" + name + "} is set for good", fields=name, code="frozen")


def multiples_reached(total: Decimal, threshold: int) -> int:
    """How many whole `threshold`s the total holds (never negative)."""
    if threshold <= 0 or total <= 0:
        return 0
    return int(total // threshold)


def metric_trigger_new_multiples(mark: int, total: Decimal, threshold: int) -> tuple[int, int]:
    """Metric triggers pay once per multiple of the threshold ever reached: `mark` is the
    highest multiple already paid. Returns (multiples to pay now, new mark). A total that goes
    down and up again pays nothing until it passes the mark."""
    reached = multiples_reached(total, threshold)
    if reached <= mark:
        return 0, mark
    return reached - mark, reached


def streak_multiples_reached(length: int, threshold: int) -> int:
    """Streak triggers fire each time the streak reaches a multiple of `streakLength`
    (7, 14, 21 ... for "every 7-day streak")."""
    return length // threshold if threshold > 0 else 0


@dataclass(frozen=True)
class Boost:
    id: str
    multiplier: Decimal
    rounding: str


def boosted(points: int, boosts: Sequence[Boost]) -> int:
    """Apply every boost: multipliers multiply together, the result is rounded once (see
    _ROUNDING_ORDER). Deductions (negative points) are never boosted."""
    if points <= 0 or not boosts:
        return points
    product = Decimal(points)
    for boost in boosts:
        product *= boost.multiplier
    mode = min((b.rounding for b in boosts), key=_ROUNDING_ORDER.index)
    return int(product.to_integral_value(rounding=_DECIMAL_ROUNDING[mode]))


def capped(points: int, total: int, max_points: int | None) -> int:
    """An award never takes the total above the system's maximum (deductions are not
    capped)."""
    if max_points is None or points <= 0:
        return points
    return max(0, min(points, max_points - total))


@dataclass(frozen=True)
class Level:
    pk: int
    points: int


def level_for(total: int, levels: Sequence[Level]) -> Level | None:
    """The highest level whose threshold the total has reached (thresholds are inclusive)."""
    reached = [level for level in levels if level.points <= total]
    return max(reached, key=lambda level: (level.points, level.pk)) if reached else None


def intervals_elapsed(since: dt.datetime, now: dt.datetime, unit: str, interval: int) -> int:
    """Whole intervals of `interval` hours or days since `since`."""
    step = dt.timedelta(hours=interval) if unit.startswith("hour") else dt.timedelta(days=interval)
    if now <= since:
        return 0
    return (now - since) // step


@dataclass(frozen=True)
class Bucket:
    low: int
    high: int
    users: int


def summary_buckets(totals: Sequence[int], buckets: int = 10) -> list[Bucket]:
    """Eleven ranges, as the SDK documents PointsSummaryResponse: 0 to 0 (also holding
    negative totals), then ten equal ranges from 1 to the highest total rounded up to a power
    of ten (at least 10): a highest total of 35 gives 1-10, 11-20 ... 91-100."""
    highest = max(totals, default=0)
    top = 10
    while top < highest:
        top *= 10
    width = top // buckets
    result = [Bucket(0, 0, sum(1 for t in totals if t <= 0))]
    for index in range(buckets):
        low, high = index * width + 1, (index + 1) * width
        result.append(Bucket(low, high, sum(1 for t in totals if low <= t <= high)))
    return result


# --- configuration rules, for the admin API and the dashboard alike ---------------------------

MAX_TRIGGER_POINTS = 10**12  # paid (or deducted) by one trigger
MAX_THRESHOLD = 10**12  # a metric trigger's threshold
MAX_REPEAT = 100_000  # a streak trigger's length, a time trigger's interval


def multiplier_problem(multiplier: Decimal) -> str | None:
    if not Decimal(0) < multiplier < Decimal(100) or multiplier == 1:
        return "must be greater than 0, less than 100 and not 1"
    return None


def trigger_points_problem(points: int) -> str | None:
    return "must not be 0" if points == 0 else None


def boost_problem(
    start: dt.date, end: dt.date | None, user_id: str | None, user_attributes: object
) -> PointsConfigInvalidError | None:
    """A boost is for one user or for users matching filters, and ends after it starts."""
    if user_id and user_attributes:
        return PointsConfigInvalidError(
            "{user_id} and {user_attributes} are mutually exclusive",
            fields=("user_id", "user_attributes"),
            code="conflict",
        )
    if end is not None and end < start:
        return PointsConfigInvalidError(
            "{end} must not be before {start}", fields=("end", "start"), code="out_of_range"
        )
    return None


# --- declarations: triggers ---


@dataclass(frozen=True, kw_only=True)
class PointsTriggerSettings:
    """A trigger's settings (apps/core/declarations.py), as points_trigger_create and
    points_trigger_update take them. Besides those every trigger has, each type has its own
    (TRIGGER_FIELDS); None, the API's null, is the same as not given: a type's settings are
    cleared only when the type changes."""

    type: str | Unset = declare.choice(
        "Type",
        TriggerType,
        required=True,
        help="The type of an active trigger cannot change: deactivate it first.",
    )
    points: int | Unset = declare.integer(
        "Points",
        min_value=-MAX_TRIGGER_POINTS,
        max_value=MAX_TRIGGER_POINTS,
        required=True,
        help="Negative: a deduction.",
    )
    # As in the admin API, a new trigger pays nothing until it is switched on.
    status: str | Unset = declare.choice("Status", TriggerStatus)
    # {"attributeId", "attributeValue"} references
    user_attributes: list[dict[str, str]] | Unset | None = declare.structure(
        "User attributes", nullable=True, help="Empty: everyone."
    )
    block_if_out_of_points: bool | Unset = declare.flag(
        "Block if out of points",
        help="Deductions only: refuse the event rather than go below 0.",
    )
    metric_id: str | Unset | None = declare.reference("Metric", nullable=True)
    metric_threshold: int | Unset | None = declare.integer(
        "Threshold",
        min_value=1,
        max_value=MAX_THRESHOLD,
        nullable=True,
        help="Paid at every multiple of the total.",
    )
    event_attributes: list[dict[str, str]] | Unset | None = declare.structure(
        "Event attributes", nullable=True, help="Empty: everyone."
    )
    achievement_id: str | Unset | None = declare.reference("Achievement", nullable=True)
    streak_length: int | Unset | None = declare.integer(
        "Streak length",
        min_value=1,
        max_value=MAX_REPEAT,
        nullable=True,
        help="Paid at every multiple.",
    )
    time_unit: str | Unset | None = declare.choice(
        "Unit",
        TimeUnit,
        nullable=True,
        help="Counted from the user's first activity in the system.",
    )
    time_interval: int | Unset | None = declare.integer(
        "Every", min_value=1, max_value=MAX_REPEAT, nullable=True
    )


# The settings that belong to each type of trigger; a type needs all of its own but the filter
# on the events counted.
TRIGGER_FIELDS: dict[str, tuple[str, ...]] = {
    TriggerType.METRIC: ("metric_id", "metric_threshold", "event_attributes"),
    TriggerType.ACHIEVEMENT: ("achievement_id",),
    TriggerType.STREAK: ("streak_length",),
    TriggerType.TIME: ("time_unit", "time_interval"),
    TriggerType.USER_CREATION: (),
}
TRIGGER_REQUIRED: dict[str, tuple[str, ...]] = {
    kind: tuple(name for name in names if name != "event_attributes")
    for kind, names in TRIGGER_FIELDS.items()
}
