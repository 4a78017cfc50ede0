"""The leagues card of the end-user page: in each league of the tenant (archived ones aside),
the user's tier, their rank, score and live zone in this week's cohort, and their last weeks
with the results the week's end gave them. A few queries per league, whatever the history."""

import datetime as dt
from dataclasses import dataclass

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils import timezone

from apps.accounts.staff import selected_tenant
from apps.leagues.choices import Status
from apps.leagues.models import LeagueEntry
from apps.leagues.selectors import LeagueDef, entries_history, leagues_config, user_week
from apps.pipeline.dashboard_user.metrics import amount
from apps.users.domain import attributes_match
from apps.users.end_user_page import EndUserCard
from apps.users.models import EndUser

RECENT_WEEKS = 5


@dataclass(frozen=True)
class WeekRow:
    week_start: dt.datetime
    tier: str
    score: str
    placement: int | None  # None: the week is not finished yet
    zone: str | None
    then: str  # the tier the result gave, or "left the league"


@dataclass(frozen=True)
class LeagueRow:
    pk: int
    key: str
    name: str
    active: bool
    tier: str  # this week's, or the one the user joins in with their next qualifying event
    joined: bool
    rank: int | None
    members: int | None
    score: str | None
    zone: str | None
    cohort_id: str | None
    week_end: dt.datetime
    note: str
    history: list[WeekRow]


def _week_row(league: LeagueDef, entry: LeagueEntry) -> WeekRow:
    then = ""
    if entry.left:
        then = "left the league"
    elif entry.next_tier is not None:
        then = league.tier_name(entry.next_tier)
    return WeekRow(
        week_start=entry.week_start,
        tier=league.tier_name(entry.tier),
        score=amount(entry.score),
        placement=entry.placement,
        zone=entry.zone,
        then=then,
    )


def _league_row(league: LeagueDef, user: EndUser, now: dt.datetime) -> LeagueRow:
    """The user's week as the API shows it (selectors.user_week: the tier they are in or will
    join in, their place and zone), and their last weeks."""
    current = user_week(league, user, now)
    own = current.own
    history = entries_history(league, user, limit=RECENT_WEEKS, before=current.week.start)
    note = ""
    if current.cohort is None:
        if league.user_filters is None or not attributes_match(
            league.user_filters, user.attributes
        ):
            note = "not taking part: the participation filters leave this user out"
        elif league.status != Status.ACTIVE:
            note = "the league is inactive: nobody joins"
        else:
            note = "not in this week's league yet: the next qualifying event joins them"
    return LeagueRow(
        pk=league.pk,
        key=league.key,
        name=league.name,
        active=league.status == Status.ACTIVE,
        tier=league.tier_name(current.tier),
        joined=current.cohort is not None,
        rank=own.rank if own else None,
        members=len(current.standings) if current.cohort is not None else None,
        score=amount(own.entry.score) if own else None,
        zone=own.zone if own else None,
        cohort_id=str(current.cohort.public_id) if current.cohort is not None else None,
        week_end=current.week.end,
        note=note,
        history=[_week_row(league, one) for one in history],
    )


def league_cards(request: HttpRequest, user: EndUser) -> list[EndUserCard]:
    """The "Leagues" card (none when the tenant has no league): cached definitions, then three
    queries per league (four for a user not in this week yet, whose last week is read)."""
    tenant = selected_tenant(request)
    if tenant is None or tenant.pk != user.tenant_id:  # the page's scoped queryset rules it out
        return []
    leagues = leagues_config(tenant)
    if not leagues:
        return []
    now = timezone.now()
    rows = [_league_row(league, user, now) for league in leagues]
    context = {"end_user": user, "leagues": rows, "recent": RECENT_WEEKS}
    body = render_to_string("admin/users/enduser/cards/leagues.html", context, request)
    return [EndUserCard(slug="leagues", title="Leagues", body=body, wide=True)]
