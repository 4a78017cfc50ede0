"""Reads of neighbours and friends: the tenant's friends settings (cached per configuration
version, ARCHITECTURE.md §5), a user's friends list, and the rankings of a board restricted to
a user and their friends."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.leaderboards import wire as leaderboard_wire
from apps.leaderboards.selectors import BoardDef
from apps.leagues import domain as domain_leagues
from apps.leagues.models import LeagueEntry
from apps.leagues.selectors import LeagueDef
from apps.social import sql
from apps.social.models import FriendSettings, Friendship
from apps.users.models import EndUser


@dataclass(frozen=True)
class FriendsConfig:
    mutual: bool


def friends_config(tenant: Tenant) -> FriendsConfig:
    def load() -> FriendsConfig:
        row = FriendSettings.objects.filter(tenant=tenant).first()
        return FriendsConfig(mutual=row.mutual if row is not None else False)

    return tenant_cached(tenant, "social", load)


def friends_of(user: EndUser) -> list[str]:
    """The user ids on the user's friends list, in order (one query, at most MAX_FRIENDS)."""
    return list(
        Friendship.objects.filter(user=user)
        .order_by("friend__external_id")
        .values_list("friend__external_id", flat=True)
    )


@dataclass(frozen=True)
class Circle:
    """The rankings of a user and their friends in a run and group, ranked within that set
    (1 = the best of them), and the user's own place there (None: not on the board)."""

    rank: int | None
    value: int | None
    rankings: list[dict[str, Any]]


def friends_rankings(board: BoardDef, run: dt.date, group: str | None, user: EndUser) -> Circle:
    """One statement for the whole set (sql.friends_ranking). Friends in another breakdown group
    of the board, or with no entry in the run, are not in it."""
    if group is None:
        return Circle(None, None, [])
    rows = sql.friends_ranking(board.pk, run, group, user.pk)
    render = leaderboard_wire.leaderboard_ranking_render
    rankings = [render(external_id, name, i, v) for i, (external_id, name, v) in enumerate(rows, 1)]
    own = next((r for r in rankings if r["userId"] == user.external_id), None)
    return Circle(own["rank"] if own else None, own["value"] if own else None, rankings)


def league_friends(
    league: LeagueDef, user: EndUser, now: dt.datetime
) -> tuple[domain_leagues.Week, list[LeagueEntry]]:
    """The league's current week and the entries of the user and their friends who have joined
    it (whatever their cohorts and tiers; none excluded from the rankings), best first as a
    cohort ranks them (score, then who reached it first, then the user who joined gamify
    first): one query, on the entries' (league, user, week) unique index."""
    week = league.week(now)
    friends = Friendship.objects.filter(user=user).values("friend_id")
    entries = (
        LeagueEntry.objects.filter(league_id=league.pk, week_start=week.start)
        .filter(Q(user=user) | Q(user_id__in=friends))
        .filter(user__excluded_at__isnull=True)  # fair play: left out, as on every board
        .select_related("user")
        .order_by("-score", "reached_at", "user_id")
    )
    return week, list(entries)
