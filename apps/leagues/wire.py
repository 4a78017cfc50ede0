"""The league's parts as other apps' bodies show them (webhook payloads) and the extension
API's bodies embed: the league named, a tier, a week, a reward. camelCase, as every body; a
tier and a reward are documented by their `Shape` (apps/core/api/shapes.py)."""

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core.api.shapes import Shape, renders
from apps.leagues import domain
from apps.leagues.selectors import LeagueDef


def league_ref_render(league: LeagueDef) -> dict[str, Any]:
    return {"id": league.public_id, "key": league.key, "name": league.name}


class LeagueTierRef(Shape):
    # A tier of a league by its index.
    index = serializers.IntegerField(help_text="0 is the lowest tier.")
    name = serializers.CharField()


@renders(LeagueTierRef)
def tier_render(league: LeagueDef, tier: int) -> dict[str, Any]:
    return {"index": tier, "name": league.tier_name(tier)}


def week_render(week: domain.Week) -> dict[str, Any]:
    return {"start": week.start, "end": week.end}


class LeagueReward(Shape):
    # One reward of League.rewards (also what a finished week earned, LeagueEntry.rewards).
    fromPlace = serializers.IntegerField(help_text="First place rewarded.")
    toPlace = serializers.IntegerField(help_text="Last place rewarded (inclusive).")
    tier = serializers.CharField(allow_null=True, help_text="Only in this tier; null: every tier.")
    points = serializers.IntegerField(help_text="Points paid into pointsSystemId (0: none).")
    pointsSystemId = serializers.UUIDField(allow_null=True)
    achievementId = serializers.UUIDField(
        allow_null=True, help_text="The api achievement completed; null: none."
    )


@renders(LeagueReward)
def reward_render(reward: Mapping[str, Any]) -> dict[str, Any]:
    """A reward as stored (apps/leagues/configuration.py), on the wire."""
    return {
        "fromPlace": reward["from_place"],
        "toPlace": reward["to_place"],
        "tier": reward.get("tier"),
        "points": reward.get("points") or 0,
        "pointsSystemId": reward.get("points_system_id"),
        "achievementId": reward.get("achievement_id"),
    }
