"""Input shapes of the friends routes and the response shapes of the neighbours and friends
extension routes (/ext/v1/..., /admin/ext/v1/...), each `Shape` with the function that renders
it below it (apps/core/api/shapes.py). The rankings follow Trophy's leaderboard bodies
(apps/leaderboards/wire.py), which they extend."""

import datetime as dt
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.core.api.params import MAX_NEIGHBOURS
from apps.core.api.shapes import Shape, renders
from apps.leaderboards.selectors import BoardDef, Neighbourhood
from apps.leaderboards.wire import (
    LeaderboardRanking,
    UserLeaderboardResponse,
    user_leaderboard_response_render,
)
from apps.leagues.domain import Week
from apps.leagues.models import LeagueEntry
from apps.leagues.selectors import LeagueDef
from apps.leagues.wire import LeagueTierRef, tier_render
from apps.social.domain import MAX_FRIENDS
from apps.social.selectors import Circle, FriendsConfig
from apps.users.models import EndUser

# --- input ------------------------------------------------------------------------------------


class FriendIdsSerializer(StrictSerializer):
    userIds = serializers.ListField(
        child=StringField(max_length=255),
        min_length=1,
        max_length=MAX_FRIENDS,
        help_text=f"User ids (the ids your application gives its users): 1 to {MAX_FRIENDS:,}.",
    )


class FriendListSerializer(StrictSerializer):
    userIds = serializers.ListField(
        child=StringField(max_length=255),
        max_length=MAX_FRIENDS,
        allow_empty=True,
        help_text=f"The whole list: 0 to {MAX_FRIENDS:,} user ids ([] empties it).",
    )


class FriendSettingsUpdateSerializer(StrictSerializer):
    mutual = serializers.BooleanField(
        required=False,
        help_text="true: adding a friend puts each user on the other's list, and removing "
        "takes both off. false (the default): lists are one-way.",
    )


# --- responses --------------------------------------------------------------------------------


class LeaderboardNeighboursResponse(UserLeaderboardResponse):
    # A BoardDef and the run shown, with a Neighbourhood.
    k = serializers.IntegerField(
        help_text=f"Places shown above and below the user (1 to {MAX_NEIGHBOURS})."
    )
    rankings = LeaderboardRanking(
        many=True,
        help_text="From k places above the user to k below (fewer at the top and the bottom), "
        "best first, with their ranks on the leaderboard; [] when the user is not on it.",
    )


@renders(LeaderboardNeighboursResponse)
def leaderboard_neighbours_response_render(
    board: BoardDef, run_start: dt.date, k: int, hood: Neighbourhood
) -> dict[str, Any]:
    body = user_leaderboard_response_render(board, run_start, hood.rank, hood.value)
    body["k"] = k
    body["rankings"] = hood.rankings
    return body


class LeaderboardFriendsResponse(UserLeaderboardResponse):
    # A BoardDef and the run shown, with a Circle: rank and value are the user's among their
    # friends.
    rankings = LeaderboardRanking(
        many=True,
        help_text="The user and their friends who are on the leaderboard (in the user's "
        "breakdown group), best first, ranked among themselves: 1 is the best of them. "
        "[] when none of them is on it.",
    )


@renders(LeaderboardFriendsResponse)
def leaderboard_friends_response_render(
    board: BoardDef, run_start: dt.date, circle: Circle
) -> dict[str, Any]:
    body = user_leaderboard_response_render(board, run_start, circle.rank, circle.value)
    body["rankings"] = circle.rankings
    return body


class FriendsResponse(Shape):
    # A user with their friends list.
    userId = serializers.CharField()
    friends = serializers.ListField(
        child=serializers.CharField(),
        help_text=f"The user ids on the user's list, in order of id (at most {MAX_FRIENDS:,}).",
    )


@renders(FriendsResponse)
def friends_response_render(user: EndUser, friends: list[str]) -> dict[str, Any]:
    return {"userId": user.external_id, "friends": friends}


class FriendsChangedResponse(FriendsResponse):
    # A user with their friends list after a change, and what the change did.
    changed = serializers.ListField(
        child=serializers.CharField(),
        help_text="The user ids this request added to the list (or took off it); [] when it "
        "changed nothing.",
    )


@renders(FriendsChangedResponse)
def friends_changed_response_render(
    user: EndUser, friends: list[str], changed: list[str]
) -> dict[str, Any]:
    body = friends_response_render(user, friends)
    body["changed"] = changed
    return body


class FriendsReplacedResponse(FriendsResponse):
    # A user with their friends list after a replacement, and what it did.
    added = serializers.ListField(
        child=serializers.CharField(), help_text="The user ids this request put on the list."
    )
    removed = serializers.ListField(
        child=serializers.CharField(), help_text="The user ids this request took off the list."
    )


@renders(FriendsReplacedResponse)
def friends_replaced_response_render(
    user: EndUser, friends: list[str], added: list[str], removed: list[str]
) -> dict[str, Any]:
    body = friends_response_render(user, friends)
    body["added"] = added
    body["removed"] = removed
    return body


class FriendSettings(Shape):
    # A tenant's FriendsConfig.
    mutual = serializers.BooleanField(
        help_text="true: friendships are mutual; false (the default): one-way."
    )
    maxFriends = serializers.IntegerField(help_text="The most users a friends list holds.")


@renders(FriendSettings)
def friend_settings_render(config: FriendsConfig) -> dict[str, Any]:
    return {"mutual": config.mutual, "maxFriends": MAX_FRIENDS}


class LeagueFriendStanding(Shape):
    # A LeagueEntry (with its user) of the league's current week, ranked among friends.
    rank = serializers.IntegerField(help_text="1-based, among the user and their friends.")
    userId = serializers.CharField()
    userName = serializers.CharField(allow_null=True)
    score = serializers.FloatField(help_text="What the user gained this week.")
    tier = LeagueTierRef(help_text="Their tier this week (each competes in their own cohort).")


@renders(LeagueFriendStanding)
def league_friend_standing_render(
    league: LeagueDef, entry: LeagueEntry, rank: int
) -> dict[str, Any]:
    return {
        "rank": rank,
        "userId": entry.user.external_id,
        "userName": entry.user.name,
        "score": entry.score,
        "tier": tier_render(league, entry.tier),
    }


class LeagueFriendsResponse(Shape):
    # A LeagueDef's current week with the entries of a user and their friends.
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    weekStart = serializers.DateTimeField(help_text="The current week's start (inclusive).")
    weekEnd = serializers.DateTimeField(help_text="The current week's end (exclusive).")
    rank = serializers.IntegerField(
        allow_null=True,
        help_text="The user's rank among their friends; null: not in a cohort this week.",
    )
    standings = LeagueFriendStanding(
        many=True,
        help_text="The user and their friends who have joined this week, whatever their "
        "cohorts and tiers, best first by this week's score (ties as a cohort orders them).",
    )


@renders(LeagueFriendsResponse)
def league_friends_response_render(
    league: LeagueDef, user: EndUser, week: Week, entries: list[LeagueEntry]
) -> dict[str, Any]:
    standings = [league_friend_standing_render(league, e, i) for i, e in enumerate(entries, 1)]
    own = next((s["rank"] for s in standings if s["userId"] == user.external_id), None)
    return {
        "id": league.public_id,
        "key": league.key,
        "name": league.name,
        "weekStart": week.start,
        "weekEnd": week.end,
        "rank": own,
        "standings": standings,
    }
