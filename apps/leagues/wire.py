"""The league's parts as other apps' bodies show them (webhook payloads): the league named,
a tier, a week, a reward. camelCase, as every body."""

from typing import Any

from apps.leagues import domain
from apps.leagues.selectors import LeagueDef


def league_ref_render(league: LeagueDef) -> dict[str, Any]:
    return {"id": league.public_id, "key": league.key, "name": league.name}


def tier_render(league: LeagueDef, tier: int) -> dict[str, Any]:
    return {"index": tier, "name": league.tier_name(tier)}


def week_render(week: domain.Week) -> dict[str, Any]:
    return {"start": week.start, "end": week.end}


def reward_render(reward: dict[str, Any]) -> dict[str, Any]:
    """A reward as stored (apps/leagues/configuration.py), on the wire."""
    return {
        "fromPlace": reward["from_place"],
        "toPlace": reward["to_place"],
        "tier": reward.get("tier"),
        "points": reward.get("points") or 0,
        "pointsSystemId": reward.get("points_system_id"),
        "achievementId": reward.get("achievement_id"),
    }
