"""Pure league rules: the settings of a league, its weeks, and what a week's standing gives
(placement, zone, next tier). No ORM, no clock: `now` and zones are arguments."""

import datetime as dt
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from apps.core import declarations as declare
from apps.core.arguments import Unset
from apps.core.errors import ValidationError
from apps.leagues.choices import Absent, Idle, ScoreBy, Status, Weekday, Zone, ZoneUnit
from apps.users.domain import zone

MIN_COHORT, MAX_COHORT, DEFAULT_COHORT = 5, 100, 30
MAX_TIERS = 20
MAX_ZONE = 100  # places (at most a cohort's size) or percent
MAX_REWARDS = 100
TIER_NAME_LENGTH = 100
# Duolingo's ten, lowest first.
DEFAULT_TIER_NAMES = (
    "Bronze",
    "Silver",
    "Gold",
    "Sapphire",
    "Ruby",
    "Emerald",
    "Amethyst",
    "Pearl",
    "Obsidian",
    "Diamond",
)
DEFAULT_PROMOTE, DEFAULT_DEMOTE = 7, 5
WEEKDAYS = [w.value for w in Weekday]  # Monday first, as date.weekday()


def default_tiers() -> list[dict[str, Any]]:
    """Ten tiers; the top one promotes nobody, the lowest demotes nobody."""
    last = len(DEFAULT_TIER_NAMES) - 1
    return [
        {
            "name": name,
            "promote": 0 if i == last else DEFAULT_PROMOTE,
            "demote": 0 if i == 0 else DEFAULT_DEMOTE,
        }
        for i, name in enumerate(DEFAULT_TIER_NAMES)
    ]


@dataclass(frozen=True, kw_only=True)
class LeagueSettings:
    """A league's settings (apps/core/declarations.py), as league_create and league_update
    take them. An active league keeps what its weeks are made of (FROZEN_ONCE_ACTIVE)."""

    name: str | Unset = declare.text("Name", max_length=255, required=True)
    key: str | Unset = declare.key(
        help="How the API names the league. Can change only while it is inactive.",
        required=True,
    )
    description: str | Unset | None = declare.text(
        "Description", max_length=2000, nullable=True, blank=True, multiline=True
    )
    status: str | Unset = declare.choice(
        "Status",
        Status,
        help="Active: events count and weeks are finished. Inactive: nothing counts; the "
        "history is kept. Archived: as inactive, and hidden from the application API.",
    )
    score_by: str | Unset = declare.choice(
        "Score by",
        ScoreBy,
        required=True,
        help="What a user gains during the week: a metric's values or a points system's points.",
    )
    metric_id: str | Unset | None = declare.reference("Metric", nullable=True)
    points_system_id: str | Unset | None = declare.reference("Points system", nullable=True)
    week_ends_on: str | Unset = declare.choice(
        "Week ends on", Weekday, help="In the tenant's reporting time zone."
    )
    week_ends_at: str | Unset = declare.text(
        "Week ends at",
        max_length=5,
        help="HH:MM, 00:00 to 24:00, on that day, in the tenant's reporting time zone; the "
        "same moment for every user, whatever their own zone.",
    )
    cohort_size: int | Unset = declare.integer(
        "Cohort size", min_value=MIN_COHORT, max_value=MAX_COHORT, help="Users per cohort."
    )
    # [{"name", "promote", "demote"}], lowest first
    tiers: list[dict[str, Any]] | Unset = declare.structure(
        "Tiers",
        help="Lowest first, 1 to 20. The top tier promotes nobody and the lowest demotes "
        "nobody. Empty: ten tiers, Bronze to Diamond.",
    )
    zone_unit: str | Unset = declare.choice(
        "Promote and demote by",
        ZoneUnit,
        help="Counts of places, or percentages of the cohort's members (rounded down).",
    )
    idle: str | Unset = declare.choice(
        "Users who scored nothing", Idle, help="Demote them, or take them out of the league."
    )
    absent: str | Unset = declare.choice(
        "Users who skip a week",
        Absent,
        help="When they come back: their tier as they left it, or one lower.",
    )
    # [{"from_place", "to_place", "tier", "points", "points_system_id", "achievement_id"}]
    rewards: list[dict[str, Any]] | Unset = declare.structure(
        "Rewards",
        help="Per final placement (optionally in one tier only): points into a points system, "
        "and/or the completion of an api achievement.",
    )
    # {"attributeId", "attributeValue"} references
    user_attributes: list[dict[str, str]] | Unset | None = declare.structure(
        "Participation filters",
        nullable=True,
        help="Only end-users with all these attribute values take part. Empty: everyone.",
    )


FROZEN_ONCE_ACTIVE = (
    "key",
    "score_by",
    "metric_id",
    "points_system_id",
    "week_ends_on",
    "week_ends_at",
)

_CLOCK = re.compile(r"^(\d{2}):(\d{2})$")


def minutes_parse(text: str) -> int:
    """ "HH:MM" (00:00 to 24:00) as minutes after midnight."""
    match = _CLOCK.match(text)
    if match is None:
        raise ValidationError("{week_ends_at} must be HH:MM", fields="week_ends_at")
    hours, minutes = int(match[1]), int(match[2])
    if minutes > 59 or hours * 60 + minutes > 1440:
        raise ValidationError("{week_ends_at} must be from 00:00 to 24:00", fields="week_ends_at")
    return hours * 60 + minutes


def minutes_render(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def tiers_problem(tiers: Sequence[dict[str, Any]]) -> ValidationError | None:
    """What is wrong with a list of tiers, if anything."""
    if not 1 <= len(tiers) <= MAX_TIERS:
        return ValidationError(f"{{tiers}} must hold 1 to {MAX_TIERS} tiers", fields="tiers")
    if any(not 0 <= t["promote"] <= MAX_ZONE or not 0 <= t["demote"] <= MAX_ZONE for t in tiers):
        return ValidationError(
            f"{{tiers}}: promote and demote must be from 0 to {MAX_ZONE}", fields="tiers"
        )
    names = [t["name"] for t in tiers]
    if len(set(names)) != len(names):
        return ValidationError("{tiers}: tier names must differ", fields="tiers")
    if tiers[-1]["promote"] or tiers[0]["demote"]:
        return ValidationError(
            "{tiers}: the top tier promotes nobody and the lowest demotes nobody", fields="tiers"
        )
    return None


# --- weeks ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Week:
    start: dt.datetime  # aware, UTC
    end: dt.datetime  # exclusive


def _boundary(day: dt.date, minutes: int, tz: dt.tzinfo) -> dt.datetime:
    """`minutes` after the local midnight that starts `day`, as a UTC moment. A local time that
    a DST change skips is read with the offset before the change (an hour later in the new
    time); a repeated one is its first occurrence."""
    local = dt.datetime(day.year, day.month, day.day, tzinfo=tz) + dt.timedelta(minutes=minutes)
    return local.astimezone(dt.UTC)


def week_of(moment: dt.datetime, *, ends_on: str, ends_at: int, tz_name: str | None) -> Week:
    """The league week that holds `moment`: from one boundary (inclusive) to the next
    (exclusive). A boundary is the weekday `ends_on` at `ends_at` minutes after its local
    midnight in the zone `tz_name` (the tenant's reporting zone), one instant for every
    user: a week is 167, 168 or 169 hours long across a DST change."""
    tz = zone(tz_name)
    local = moment.astimezone(tz)
    base = local.date() - dt.timedelta(days=(local.weekday() - WEEKDAYS.index(ends_on)) % 7)
    days = [base + dt.timedelta(days=7 * k) for k in (-2, -1, 0, 1)]
    bounds = [_boundary(day, ends_at, tz) for day in days]
    for before, after in itertools.pairwise(bounds):
        if before <= moment < after:
            return Week(before, after)
    raise AssertionError("a week holds every moment")  # pragma: no cover


# --- a week's standing ------------------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    """One member of a cohort as the rules see them."""

    user_pk: int
    score: Decimal
    reached_at: dt.datetime


@dataclass(frozen=True)
class Result:
    user_pk: int
    placement: int
    zone: str
    next_tier: int
    left: bool


def ranked(standings: Sequence[Standing]) -> list[Standing]:
    """Best first: the higher score, then whoever reached it first, then the lower user pk
    (the same order as a leaderboard's, apps/leaderboards/domain.py RANK_ORDER)."""
    return sorted(standings, key=lambda s: (-s.score, s.reached_at, s.user_pk))


def zone_sizes(tier: dict[str, Any], members: int, unit: str) -> tuple[int, int]:
    """(promoted, demoted) places of a cohort of `members`: promotion first when they would
    overlap."""
    promote, demote = int(tier["promote"]), int(tier["demote"])
    if unit == ZoneUnit.PERCENT:
        promote, demote = math.floor(members * promote / 100), math.floor(members * demote / 100)
    promote = min(promote, members)
    return promote, min(demote, members - promote)


def results(
    standings: Sequence[Standing],
    *,
    tier: int,
    tiers: Sequence[dict[str, Any]],
    unit: str,
    idle: str,
) -> list[Result]:
    """Each member's placement, zone and tier for next week, best first. A member who scored
    nothing (0 or less) never promotes: they demote (`idle` demote) or leave the league and
    start again in the lowest tier (`idle` leave)."""
    order = ranked(standings)
    top = len(tiers) - 1
    promoted, demoted = zone_sizes(tiers[min(tier, top)], len(order), unit)
    out = []
    for index, s in enumerate(order):
        place = index + 1
        if s.score <= 0:
            zone_ = Zone.DEMOTION if tier > 0 else Zone.SAFE
            left = idle == Idle.LEAVE
            nxt = 0 if left else max(tier - 1, 0)
        else:
            left = False
            if place <= promoted:
                zone_, nxt = Zone.PROMOTION, min(tier + 1, top)
            elif place > len(order) - demoted:
                zone_, nxt = Zone.DEMOTION, max(tier - 1, 0)
            else:
                zone_, nxt = Zone.SAFE, min(tier, top)
        out.append(Result(s.user_pk, place, zone_, nxt, left))
    return out


def tier_on_return(earned: int, *, weeks_missed: int, absent: str, tiers: int) -> int:
    """The tier a member joins in: the one their last week earned, one lower if they skipped
    a week and the league demotes absent members (once, however long they were away)."""
    tier = min(earned, tiers - 1)
    if weeks_missed > 0 and absent == Absent.DEMOTE:
        tier = max(tier - 1, 0)
    return tier


def rewards_for(
    rewards: Sequence[dict[str, Any]], *, placement: int, tier_name: str
) -> list[dict[str, Any]]:
    """The rewards a final placement earns in a tier, in the league's order."""
    return [
        r
        for r in rewards
        if r["from_place"] <= placement <= r["to_place"] and r.get("tier") in (None, tier_name)
    ]
