"""The league's cohorts page: one week's tiers (users and cohorts per tier), then a page of its
cohorts, top tier first, each with its members ranked as the API ranks them (score, then who
reached it first) and their zone: live while the week runs, as the week's end would place them
now (selectors.cohort_standings); the week-end job's placement, zone and next tier once it is
finished.

A week of a large league holds tens of thousands of cohorts: the page reads one aggregate over
the week's cohorts, one page of them, and one query for all of that page's entries."""

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from apps.leagues import domain, selectors
from apps.leagues.admin.display import score_text, tier_name, week_of, week_text, zones_text
from apps.leagues.models import League, LeagueCohort

COHORTS_PER_PAGE = 10


@dataclass(frozen=True)
class MemberRow:
    rank: int
    user_id: str
    user_name: str
    user_url: str
    score: str
    zone: str
    next_tier: str  # once finished: the tier the result gives ("left": out of the league)


@dataclass(frozen=True)
class CohortView:
    public_id: str
    tier: str
    number: int
    members: int
    capacity: int
    open: bool
    finished: bool
    rows: list[MemberRow]


@dataclass(frozen=True)
class TierRow:
    index: int
    name: str
    zones: str
    cohorts: int
    open: int
    members: int
    url: str


# Weeks shown: far enough either way for any league, near enough that the weeks around one
# (a week before, a week after) are still dates.
EARLIEST, LATEST = 2000, 9000


def _moment(text: str) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if not EARLIEST <= moment.year <= LATEST:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _cohort_id(text: str) -> str | None:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return None


def week_param(start: dt.datetime) -> str:
    return start.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%MZ")


def cohorts_url(url: str, **params: Any) -> str:
    """The cohorts page at `url` with these parameters (None: left out)."""
    given = {name: value for name, value in params.items() if value is not None}
    return f"{url}?{urlencode(given)}" if given else url


def _members(league: League, placed: list[selectors.Placed]) -> list[MemberRow]:
    """Best first, with the zones of the league's rules (selectors.cohort_standings): the
    week-end job's results once the cohort is finished, with the tier each result gave."""
    rows = []
    for one in placed:
        entry, user = one.entry, one.entry.user
        after = ""
        if entry.left:
            after = "left"
        elif entry.next_tier is not None:
            after = tier_name(league, entry.next_tier)
        rows.append(
            MemberRow(
                rank=one.rank,
                user_id=user.external_id,
                user_name=user.name or "",
                user_url=reverse("admin:users_enduser_change", args=[user.pk]),
                score=score_text(entry.score),
                zone=str(one.zone),
                next_tier=after,
            )
        )
    return rows


def _tier(request: HttpRequest, league: League) -> int | None:
    text = request.GET.get("tier", "")
    if text.isascii() and text.isdigit() and int(text) < len(league.tiers):
        return int(text)
    return None


def _tier_rows(
    league: League, counts: dict[int, selectors.TierCount], url: str, week_arg: str | None
) -> list[TierRow]:
    """Each tier of the week, top first, with its users and cohorts."""
    none = selectors.TierCount(tier=0, cohorts=0, open=0, members=0)
    rows = []
    for index, definition in reversed(list(enumerate(league.tiers))):
        count = counts.get(index, none)
        rows.append(
            TierRow(
                index=index,
                name=str(definition["name"]),
                zones=zones_text(league, definition),
                cohorts=count.cohorts,
                open=count.open,
                members=count.members,
                url=cohorts_url(url, week=week_arg, tier=index),
            )
        )
    return rows


def _cohort_views(league: League, cohorts: list[LeagueCohort]) -> list[CohortView]:
    """A page of cohorts with their members: one query for all of their entries."""
    definition = selectors.league_def(league.tenant, league)
    placed = selectors.cohorts_placed(league.tenant, definition, cohorts)
    return [
        CohortView(
            public_id=str(cohort.public_id),
            tier=tier_name(league, cohort.tier),
            number=cohort.number,
            members=cohort.members,
            capacity=cohort.capacity,
            open=cohort.open,
            finished=cohort.finished_at is not None,
            rows=_members(league, placed[cohort.pk]),
        )
        for cohort in cohorts
    ]


def _week_links(
    league: League, week: domain.Week, current: domain.Week, url: str
) -> dict[str, str | None]:
    """The weeks before and after `week` (none after this week)."""
    previous = week_of(league, week.start - dt.timedelta(microseconds=1))
    following = week_of(league, week.end) if week.end <= current.start else None
    after = None
    if following is not None:
        after = cohorts_url(url, week=None if following == current else week_param(following.start))
    return {
        "previous_week_url": cohorts_url(url, week=week_param(previous.start)),
        "next_week_url": after,
        "current_week_url": url,
    }


def cohorts_context(request: HttpRequest, league: League, url: str) -> dict[str, Any]:
    """What the cohorts page shows of `league` (found within the selected tenant): the week
    asked for (?week=, any moment of it; ?cohort=, a cohort's own week) or this week, its tiers,
    and a page of its cohorts (?tier=, ?page=)."""
    tenant, now = league.tenant, timezone.now()
    current = week_of(league, now)
    wanted = _cohort_id(request.GET.get("cohort", ""))
    focus = selectors.cohort_of_league(tenant, league.pk, wanted) if wanted else None
    moment = _moment(request.GET.get("week", "")) if focus is None else focus.week_start
    week = week_of(league, moment) if moment is not None else current
    tier = _tier(request, league) if focus is None else None
    week_arg = None if week == current else week_param(week.start)
    tiers = _tier_rows(
        league, selectors.week_tier_counts(tenant, league.pk, week.start), url, week_arg
    )
    if focus is not None:
        cohorts: Any = [focus]
    else:
        cohorts = selectors.cohorts_of_week(tenant, league.pk, week.start, tier=tier)
    page = Paginator(cohorts, COHORTS_PER_PAGE).get_page(request.GET.get("page"))

    def paged(number: int) -> str:
        return cohorts_url(url, week=week_arg, tier=tier, page=number)

    return {
        "week_text": week_text(league, week.start, week.end),
        "is_current": week == current,
        "is_finished": week.end <= now,
        "week_end": week.end if week == current else None,
        "tiers": tiers,
        "tier": tier,
        "tier_name": tier_name(league, tier) if tier is not None else None,
        "all_tiers_url": cohorts_url(url, week=week_arg),
        "focus": focus is not None,
        "users": sum(row.members for row in tiers),
        "cohort_count": sum(row.cohorts for row in tiers),
        "cohorts": _cohort_views(league, list(page.object_list)),
        "page": page,
        "previous_page_url": paged(page.previous_page_number()) if page.has_previous() else None,
        "next_page_url": paged(page.next_page_number()) if page.has_next() else None,
        **_week_links(league, week, current, url),
    }
