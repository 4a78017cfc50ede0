"""Trophy's webhook payloads (reference §3.9): the same nested models as the API responses,
rendered by the apps that own them."""

import datetime as dt
from typing import Any

from apps.accounts.models import Tenant
from apps.achievements.selectors import achievement_definitions, user_completions
from apps.achievements.wire import user_achievement_render
from apps.core.facts import AchievementCompleted, NotificationDue, PointsChanged, RankChanged
from apps.leaderboards.selectors import (
    board_definitions,
    group_of,
    rankings_page,
    run_entries,
)
from apps.leaderboards.wire import board_render
from apps.points.domain import level_for
from apps.points.models import PointsAward
from apps.points.selectors import points_config
from apps.points.wire import award_render, level_render, system_base_render
from apps.streaks.selectors import pauses_of, streak_history, streak_state_get, streak_view
from apps.streaks.wire import streak_base_render, streak_response_render
from apps.users.domain import zone
from apps.users.models import EndUser
from apps.users.wire import user_render


def user(tenant: Tenant, end_user: EndUser) -> dict[str, Any]:
    return user_render(end_user, tenant)


def achievement_completed(
    tenant: Tenant, end_user: EndUser, fact: AchievementCompleted
) -> dict[str, Any] | None:
    definition = achievement_definitions(tenant).get(fact.achievement_pk)
    if definition is None:
        return None
    return {
        "user": user(tenant, end_user),
        "achievement": user_achievement_render(definition, fact.completed_at),
    }


def streak(tenant: Tenant, end_user: EndUser, now: dt.datetime) -> dict[str, Any]:
    view = streak_view(tenant, end_user, streak_state_get(end_user), now)
    return {"user": user(tenant, end_user), "streak": streak_base_render(view)}


def points_changed(tenant: Tenant, end_user: EndUser, fact: PointsChanged) -> dict[str, Any] | None:
    system = points_config(tenant).get(fact.system_key)
    if system is None:
        return None
    awards = PointsAward.objects.filter(
        user=end_user, system_id=system.pk, public_id__in=list(fact.award_ids)
    ).order_by("pk")
    return {
        "user": user(tenant, end_user),
        "points": {
            **system_base_render(system),
            "total": fact.total,
            "added": fact.added,
            "awards": [award_render(a) for a in awards],
        },
    }


def rank_changed(
    tenant: Tenant, end_user: EndUser, fact: RankChanged, now: dt.datetime
) -> dict[str, Any] | None:
    """WebhookUserLeaderboardResponse: the board, the user's rank and value now, and the rank
    before the event."""
    board = board_definitions(tenant).get(fact.leaderboard_key)
    if board is None:
        return None
    run_start = board.run_for(now.astimezone(zone(end_user.tz)).date())
    group = group_of(board, end_user.attributes)
    if run_start is None or group is None:
        return None
    entry = run_entries(board.pk, run_start, group).filter(user=end_user).first()
    return {
        "user": user(tenant, end_user),
        "leaderboard": {
            **board_render(board, run_start),
            "rank": fact.rank,
            "value": entry.value if entry is not None else None,
            "previousRank": fact.previous_rank,
        },
    }


def level_changed(tenant: Tenant, end_user: EndUser, fact: PointsChanged) -> dict[str, Any] | None:
    """points.level_changed, when the change moved the user across a level threshold (the
    levels before and after are derived from the totals, as reads derive them)."""
    system = points_config(tenant).get(fact.system_key)
    if system is None or not system.levels:
        return None
    before = level_for(fact.total - fact.added, system.level_points)
    after = level_for(fact.total, system.level_points)
    if (before and before.pk) == (after and after.pk):
        return None
    rows = {level.pk: level for level in system.levels}
    return {
        "user": user(tenant, end_user),
        "points": {**system_base_render(system), "total": fact.total},
        "previousLevel": level_render(rows[before.pk]) if before else None,
        "newLevel": level_render(rows[after.pk]) if after else None,
    }


RANKINGS = 10  # leaderboard.* payloads carry the top 10, as Trophy's leaderboard.finished


def leaderboard_with_rankings(
    tenant: Tenant, key: str, status: str, now: dt.datetime
) -> dict[str, Any] | None:
    """LeaderboardResponseWithRankings for the run that holds `now` (UTC date); boards with
    breakdown groups carry no single ranking, so their rankings are empty."""
    board = board_definitions(tenant).get(key)
    if board is None:
        return None
    day = min(now.date(), board.end) if board.end else now.date()
    run = board.run_for(day) or board.start
    rankings = rankings_page(board, run, "", 0, RANKINGS) if not board.breakdown_keys else []
    return {"leaderboard": {**board_render(board, run), "status": status, "rankings": rankings}}


def notification_due(
    tenant: Tenant, end_user: EndUser, fact: NotificationDue
) -> tuple[str, dict[str, Any]] | None:
    """The emails.*_due event for a due notification: (type, payload)."""
    body: dict[str, Any] = {"timestamp": fact.due_at, "user": user(tenant, end_user)}
    payload = fact.payload
    if fact.type == "achievement_completed":
        definition = achievement_definitions(tenant).get(int(str(payload["achievementId"])))
        if definition is None:
            return None
        completed = user_completions(end_user).get(definition.pk)
        body["achievement"] = user_achievement_render(definition, completed)
        return "emails.achievement_due", body
    if fact.type == "recap":
        body["recap"] = {"periodStart": payload["periodStart"], "periodEnd": payload["periodEnd"]}
        return "emails.recap_due", body
    if fact.type == "reactivation":
        body["reactivation"] = {
            "messageNumber": payload["messageNumber"],
            "daysSinceLastActive": payload["daysSinceLastActive"],
        }
        return "emails.reactivation_due", body
    if fact.type == "streak_reminder":
        now = fact.due_at
        view = streak_view(tenant, end_user, streak_state_get(end_user), now)
        history = streak_history(end_user, view, 7)
        upcoming = pauses_of(end_user, now.astimezone(zone(end_user.tz)).date())
        body["streak"] = streak_response_render(view, history, upcoming)
        return "emails.streak_reminder_due", body
    return None


def sample_achievement_completed(now: dt.datetime) -> dict[str, Any]:
    """What the "send a test event" action sends."""
    stamp = now.isoformat().replace("+00:00", "Z")
    return {
        "user": {
            "id": "test-user",
            "email": "test@example.com",
            "name": "Test User",
            "tz": "UTC",
            "deviceTokens": [],
            "subscribeToEmails": True,
            "attributes": {},
            "control": False,
            "created": stamp,
            "updated": stamp,
        },
        "achievement": {
            "id": "00000000-0000-0000-0000-000000000000",
            "name": "Test achievement",
            "trigger": "api",
            "key": "test",
            "description": "A test event sent from gamify",
            "badgeUrl": None,
            "userAttributes": [],
            "achievedAt": stamp,
        },
    }
