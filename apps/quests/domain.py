"""Pure quest rules: the settings of a quest and of a pool, a quest's period in the user's
calendar, what an event adds to each goal, and which quests of a pool a user gets in a period.
No ORM, no clock: `now`, dates and zones are arguments.

Periods are the streaks' (apps/streaks/domain.py): a local day, a week from Sunday to Saturday
or a month, named by its first day, in the user's time zone (apps/users/domain.py). A `once`
quest has one period, from its start date to its end date, both included, also in the user's
own calendar.

A pool's choice (`pool_choice`) is a function of the tenant, the pool, the user and the
period, and of the pool's candidates as they stood when the user's period began: every
process computes the same set without storing it, and nothing added later reshuffles it.
"""

import datetime as dt
import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from apps.core import declarations as declare
from apps.core.arguments import Unset
from apps.core.errors import ValidationError
from apps.quests.choices import Cadence, GoalKind, PoolCadence, PoolStatus, Status
from apps.streaks import domain as periods
from apps.users.domain import zone

MAX_GOALS = 5
MAX_TARGET = 1_000_000_000
MAX_POOL_MEMBERS = 100
MAX_WEIGHT = 1000
MAX_POOL_SIZE = 20
MAX_REWARD_POINTS = 1_000_000_000


@dataclass(frozen=True, kw_only=True)
class QuestSettings:
    """A quest's settings (apps/core/declarations.py), as quest_create and quest_update take
    them."""

    name: str | Unset = declare.text("Name", max_length=255, required=True)
    key: str | Unset = declare.key(help="How the API names the quest.", required=True)
    description: str | Unset | None = declare.text(
        "Description", max_length=2000, nullable=True, blank=True, multiline=True
    )
    badge_url: str | Unset | None = declare.url("Badge URL", nullable=True)
    status: str | Unset = declare.choice(
        "Status",
        Status,
        help="Active: events count, from the moment it is activated. Inactive: nothing counts; "
        "the history is kept. Archived: as inactive, and hidden from the application API.",
    )
    cadence: str | Unset = declare.choice(
        "Cadence",
        Cadence,
        required=True,
        help="Daily, weekly (Sunday to Saturday) or monthly in each user's own time zone, "
        "renewed every period; or once, from the start date to the end date.",
    )
    starts_on: dt.date | Unset | None = declare.date(
        "Starts on", nullable=True, help="Once quests: the first day, in each user's calendar."
    )
    ends_on: dt.date | Unset | None = declare.date(
        "Ends on", nullable=True, help="Once quests: the last day, in each user's calendar."
    )
    # [{"kind", "target", "metric_id", "points_system_id", "achievement_id"}]
    goals: list[dict[str, Any]] | Unset = declare.structure(
        "Goals",
        required=True,
        help="1 to 5 goals, all to be met within one period: a metric's sum, distinct active "
        "days, the streak extended, points of a system gained, an achievement completed.",
    )
    reward_points: int | Unset = declare.integer(
        "Reward points", min_value=0, max_value=MAX_REWARD_POINTS
    )
    reward_points_system_id: str | Unset | None = declare.reference(
        "Reward points system", nullable=True
    )
    reward_achievement_id: str | Unset | None = declare.reference(
        "Reward achievement", nullable=True, help="An api achievement the completion completes."
    )
    # {"attributeId", "attributeValue"} references
    user_attributes: list[dict[str, str]] | Unset | None = declare.structure(
        "User filters",
        nullable=True,
        help="Only end-users with all these attribute values get the quest. Empty: everyone.",
    )


@dataclass(frozen=True, kw_only=True)
class QuestPoolSettings:
    """A pool's settings: each user gets `size` of its quests per period."""

    name: str | Unset = declare.text("Name", max_length=255, required=True)
    key: str | Unset = declare.key(help="How the API names the pool.", required=True)
    status: str | Unset = declare.choice("Status", PoolStatus)
    cadence: str | Unset = declare.choice(
        "Cadence", PoolCadence, required=True, help="Every quest of the pool has this cadence."
    )
    size: int | Unset = declare.integer(
        "Quests per user", min_value=1, max_value=MAX_POOL_SIZE, required=True
    )
    # [{"quest_id", "weight"}]
    quests: list[dict[str, Any]] | Unset = declare.structure(
        "Quests",
        required=True,
        help="The quests to choose from, each with a weight (1 to 1000; default 1): a quest of "
        "weight 2 is chosen about twice as often as one of weight 1.",
    )


# --- periods ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Period:
    """A quest's period in one user's calendar: its first and last local dates, and the
    moments it starts and ends (exclusive)."""

    first: dt.date
    last: dt.date
    start: dt.datetime
    end: dt.datetime


def local_midnight(day: dt.date, tz: dt.tzinfo) -> dt.datetime:
    """The moment `day` starts in `tz` (as UTC); a DST gap at midnight starts it at the first
    moment that exists."""
    # A wall time in a gap takes the offset before the change (fold 0): in UTC, that is the
    # first moment of the day that exists.
    return dt.datetime.combine(day, dt.time()).replace(tzinfo=tz).astimezone(dt.UTC)


def period_of(
    cadence: str,
    today: dt.date,
    tz_name: str | None,
    starts_on: dt.date | None = None,
    ends_on: dt.date | None = None,
) -> Period | None:
    """The period holding the user's local date `today`; None for a once quest outside its
    dates."""
    tz = zone(tz_name)
    if cadence == Cadence.ONCE:
        if starts_on is None or ends_on is None or not starts_on <= today <= ends_on:
            return None
        first, last = starts_on, ends_on
    else:
        first = periods.period_start(today, cadence)
        last = periods.period_end(first, cadence)
    return Period(
        first,
        last,
        local_midnight(first, tz),
        local_midnight(last + dt.timedelta(days=1), tz),
    )


def period_index(first: dt.date, cadence: str) -> int:
    """A period's number, counting from an arbitrary origin: consecutive periods differ by 1."""
    if cadence == PoolCadence.MONTHLY:
        return first.year * 12 + first.month - 1
    days = first.toordinal()
    return days if cadence == PoolCadence.DAILY else days // 7


# --- goals ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Goal:
    kind: str
    target: Decimal
    metric_pk: int | None = None
    system_pk: int | None = None
    achievement_pk: int | None = None


@dataclass(frozen=True)
class Happened:
    """What one event did that quests count, as the earlier steps computed it."""

    day: dt.date  # the user's local date
    metric_pk: int
    value: Decimal
    streak_extended: bool
    points_added: Mapping[int, int]  # by system pk
    achievement_pks: frozenset[int]


def goal_advance(goal: Goal, state: Mapping[str, Any], happened: Happened) -> dict[str, Any]:
    """A goal's progress after the event: {"value"} and, for active days, {"last"} (the last
    local date counted: an event's dates never go back for one user, who is locked)."""
    value = Decimal(str(state.get("value", 0)))
    new = dict(state)
    if goal.kind == GoalKind.METRIC and happened.metric_pk == goal.metric_pk:
        value += happened.value
    elif goal.kind == GoalKind.ACTIVE_DAYS:
        today = happened.day.isoformat()
        if state.get("last") != today:
            value += 1
            new["last"] = today
    elif goal.kind == GoalKind.STREAK and happened.streak_extended:
        value += 1
    elif goal.kind == GoalKind.POINTS and goal.system_pk is not None:
        gained = happened.points_added.get(goal.system_pk, 0)
        if gained > 0:
            value += gained
    elif goal.kind == GoalKind.ACHIEVEMENT and goal.achievement_pk in happened.achievement_pks:
        value = Decimal(1)
    new["value"] = number_stored(value)
    return new


def number_stored(value: Decimal | int) -> int | str:
    """A number as JSON keeps it exactly: an int when whole, else a decimal string."""
    value = Decimal(value)
    if value == value.to_integral_value():
        return int(value)
    return format(value.normalize(), "f")


def goal_met(goal: Goal, state: Mapping[str, Any]) -> bool:
    return Decimal(str(state.get("value", 0))) >= goal.target


def goals_advance(
    goals: Sequence[Goal], progress: Sequence[Mapping[str, Any]], happened: Happened
) -> list[dict[str, Any]]:
    states = list(progress) + [{}] * (len(goals) - len(progress))
    return [goal_advance(g, s, happened) for g, s in zip(goals, states, strict=False)]


def all_met(goals: Sequence[Goal], progress: Sequence[Mapping[str, Any]]) -> bool:
    states = list(progress) + [{}] * (len(goals) - len(progress))
    return all(goal_met(g, s) for g, s in zip(goals, states, strict=False))


def goals_problem(goals: Sequence[Mapping[str, Any]]) -> ValidationError | None:
    """What is wrong with a list of goals as stored, or None."""
    if not 1 <= len(goals) <= MAX_GOALS:
        return ValidationError(
            f"{{goals}}: a quest has 1 to {MAX_GOALS} goals", fields="goals", code="invalid"
        )
    needs = {
        GoalKind.METRIC: "metric_id",
        GoalKind.POINTS: "points_system_id",
        GoalKind.ACHIEVEMENT: "achievement_id",
    }
    for goal in goals:
        kind = goal.get("kind")
        if kind not in GoalKind.values:
            return ValidationError(f"{{goals}}: unknown goal kind {kind!r}", fields="goals")
        needed = needs.get(GoalKind(kind))
        if needed is not None and not goal.get(needed):
            return ValidationError(
                f"{{goals}}: a {kind} goal needs {needed}", fields="goals", code="required"
            )
        target = goal.get("target")
        if kind != GoalKind.ACHIEVEMENT and (target is None or not 0 < target <= MAX_TARGET):
            return ValidationError(
                f"{{goals}}: a {kind} goal's target must be above 0 and at most {MAX_TARGET}",
                fields="goals",
            )
    return None


# --- pools ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A quest a pool may choose: its public id (what the seed names: a quest keeps it when
    its key changes) and weight."""

    key: str
    weight: int


def _unit(seed: str) -> float:
    """A number in (0, 1) from a seed, the same on every process (SHA-256, not hash())."""
    digest = hashlib.sha256(seed.encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 1) / (2**64 + 2)


def _ranking(
    candidates: Sequence[Candidate], tenant_key: str, pool_key: str, user_id: str, index: int
) -> list[str]:
    """The candidates in the period's weighted order (Efraimidis-Spirakis: each draws
    u ** (1 / weight), largest first), ties by key."""
    scored = [
        (
            math.log(_unit(f"{tenant_key}\x1f{pool_key}\x1f{user_id}\x1f{index}\x1f{c.key}"))
            / c.weight,
            c.key,
        )
        for c in candidates
        if c.weight > 0
    ]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [key for _, key in scored]


def pool_choice(
    candidates: Sequence[Candidate],
    size: int,
    *,
    tenant_key: str,
    pool_key: str,
    user_id: str,
    index: int,
) -> list[str]:
    """The quests (public ids) a user gets in the period numbered `index`, in the period's
    order.

    Weighted: each candidate's chance grows with its weight. Varied: every period draws again.
    Without repeats where the pool allows it: an even period takes the top `size` of its own
    draw; an odd period takes the top `size` of its draw after leaving out the sets of both
    even periods beside it (computed the same way, without state), so that no two consecutive
    periods share a quest when the pool holds at least three times `size` candidates. With
    fewer, the previous period's set is left out first (two times `size` suffice), then as much
    of the next one's as there is room for; a pool with fewer than twice `size` candidates
    repeats what it must."""
    ranked = _ranking(candidates, tenant_key, pool_key, user_id, index)
    if index % 2 == 0:
        return ranked[:size]
    before = set(_ranking(candidates, tenant_key, pool_key, user_id, index - 1)[:size])
    after = set(_ranking(candidates, tenant_key, pool_key, user_id, index + 1)[:size])

    def tier(key: str) -> int:
        return 2 if key in before else 1 if key in after else 0

    return sorted(ranked, key=lambda key: (tier(key), ranked.index(key)))[:size]


def candidates_at(
    members: Iterable[Mapping[str, Any]], start: dt.datetime, quests: Mapping[str, Any]
) -> list[Candidate]:
    """The pool's candidates for a period that began at `start`: each member quest that was
    in the pool and active before then (`added_at`, the quest's `activated_at`), and still
    passes the `quests` given (the caller's active quests the user may get, by public id).

    The stability rule: a quest added to the pool or activated after the user's period began
    joins the choice from the next period, so it never reshuffles a set a user already has."""
    found = []
    for member in members:
        quest = quests.get(member["quest_id"])
        if quest is None:
            continue
        added = member.get("added_at")
        if added is not None and dt.datetime.fromisoformat(added) > start:
            continue
        if quest.activated_at is None or quest.activated_at > start:
            continue
        found.append(Candidate(member["quest_id"], int(member.get("weight", 1))))
    return found


def pooled_at(members: Iterable[Mapping[str, Any]], start: dt.datetime) -> list[str]:
    """The members (public ids) that were in the pool when a period began at `start`."""
    return [
        m["quest_id"]
        for m in members
        if m.get("added_at") is None or dt.datetime.fromisoformat(m["added_at"]) <= start
    ]


def pool_problem(size: int, members: Sequence[Mapping[str, Any]]) -> ValidationError | None:
    if not 1 <= len(members) <= MAX_POOL_MEMBERS:
        return ValidationError(
            f"{{quests}}: a pool holds 1 to {MAX_POOL_MEMBERS} quests", fields="quests"
        )
    ids = [m["quest_id"] for m in members]
    if len(set(ids)) != len(ids):
        return ValidationError("{quests}: a quest is named twice", fields="quests")
    for member in members:
        if not 1 <= int(member.get("weight", 1)) <= MAX_WEIGHT:
            return ValidationError(
                f"{{quests}}: a weight is 1 to {MAX_WEIGHT}", fields="quests", code="invalid"
            )
    return None
