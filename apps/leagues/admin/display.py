"""How the league pages word a league: its summary, its weeks (in the tenant's reporting time
zone, where the league's week boundary is stated) and its scores."""

import datetime as dt
from decimal import Decimal
from typing import Any

from apps.core.shown_time import date_shown
from apps.leagues import domain
from apps.leagues.choices import ScoreBy, ZoneUnit
from apps.leagues.models import League
from apps.users.choices import AttributeType
from apps.users.domain import zone
from apps.users.selectors import attribute_definitions

DASH = "\N{EN DASH}"


def score_text(score: Decimal) -> str:
    """12.5 rather than 12.500000 (amounts keep 6 decimal places)."""
    return format(score.normalize(), "f")


def scored_on(league: League) -> str:
    """Needs "metric" and "points_system" loaded."""
    if league.score_by == ScoreBy.METRIC:
        return f"Metric {league.metric.name}" if league.metric else "Metric (none chosen)"
    if league.points_system:
        return f"Points of {league.points_system.name}"
    return "Points (no system chosen)"


def units(league: League) -> str:
    """What a score counts, for column headings: the metric's units, or points."""
    if league.score_by == ScoreBy.POINTS:
        return "points"
    return league.metric.units if league.metric is not None else ""


def week_end_text(league: League) -> str:
    day = league.get_week_ends_on_display()
    return f"{day} at {domain.minutes_render(league.week_ends_at)}"


def week_of(league: League, moment: dt.datetime) -> domain.Week:
    """The league week that holds `moment` (the tenant's reporting zone states the boundary)."""
    return domain.week_of(
        moment,
        ends_on=league.week_ends_on,
        ends_at=league.week_ends_at,
        tz_name=league.tenant.reporting_tz,
    )


def _moment(moment: dt.datetime, tz: dt.tzinfo, *, end: bool) -> str:
    """The date in the dashboard's one format (apps/core/shown_time.py), then the time as the
    league states its boundary (HH:MM, so that a week can end at 24:00)."""
    local = moment.astimezone(tz)
    if end and local.hour == 0 and local.minute == 0:
        # A week that ends at midnight ends at 24:00 of the day before, as the league says.
        return f"{date_shown((local - dt.timedelta(days=1)).date())}, 24:00"
    return f"{date_shown(local.date())}, {local:%H:%M}"


def week_text(league: League, start: dt.datetime, end: dt.datetime) -> str:
    """ "Nov. 23, 2026, 00:00 - Nov. 29, 2026, 24:00 (UTC)" (an en dash), in the tenant's
    reporting zone."""
    tz_name = league.tenant.reporting_tz
    tz = zone(tz_name)
    first, last = _moment(start, tz, end=False), _moment(end, tz, end=True)
    return f"{first} {DASH} {last} ({tz_name})"


def tier_name(league: League, tier: int) -> str:
    tiers = league.tiers or [{"name": "-"}]
    return str(tiers[min(tier, len(tiers) - 1)]["name"])


def zones_text(league: League, tier: dict[str, Any]) -> str:
    """ "top 7 up, bottom 5 down" (or percent)."""
    unit = "%" if league.zone_unit == ZoneUnit.PERCENT else ""
    parts = []
    if tier["promote"]:
        parts.append(f"top {tier['promote']}{unit} up")
    if tier["demote"]:
        parts.append(f"bottom {tier['demote']}{unit} down")
    return ", ".join(parts) or "nobody moves"


def summary(league: League, *, this_week: str) -> list[tuple[str, str]]:
    """The league in a few lines, above its settings and its cohorts. Needs "metric",
    "points_system" and "tenant" loaded."""
    names = [str(t["name"]) for t in league.tiers]
    tiers = f"{len(names)}, {names[0]} to {names[-1]}" if len(names) > 1 else ", ".join(names)
    lines = [
        ("Status", league.get_status_display()),
        ("Scores", scored_on(league)),
        ("Week ends", f"{week_end_text(league)} ({league.tenant.reporting_tz})"),
        ("Cohorts", f"up to {league.cohort_size} users"),
        ("Tiers", tiers),
        ("This week", this_week),
    ]
    if league.user_attributes:
        keys = {
            pid: key
            for (kind, key), pid in attribute_definitions(league.tenant).ids_by_type_key.items()
            if kind == AttributeType.USER
        }
        filters = [
            f"{keys.get(ref['attributeId'], 'deleted attribute')} = {ref['attributeValue']}"
            for ref in league.user_attributes
        ]
        lines.append(("Takes part", "End-users with " + ", ".join(filters)))
    return lines
