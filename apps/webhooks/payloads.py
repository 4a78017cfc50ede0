"""Trophy's webhook payloads (reference §3.9): the same nested models as the API responses,
rendered by the apps that own them.

An event's payloads are built from its facts (apps/core/facts.py and each feature app's
`facts.py`), which carry what the steps computed: the definitions, the streak, the awards, the
user's standing. Building them reads nothing, with two exceptions: leaderboard.changed carries
the board's top 10 (`board_with_rankings`), and league.joined and league.rank_changed the
user's place in their cohort (`cohort_ranks`): other users' rows, which no step reads. The payloads
of jobs that observe something no step did (a streak reminder, a board starting or finishing)
read what they show."""

import datetime as dt
from typing import Any

from apps.accounts.models import Tenant
from apps.achievements.facts import AchievementCompleted
from apps.achievements.wire import user_achievement_render
from apps.core.facts import NotificationDue
from apps.leaderboards.facts import RankChanged
from apps.leaderboards.selectors import BoardDef, board_definitions, rankings_page
from apps.leaderboards.wire import board_render
from apps.leagues import domain as league_domain
from apps.leagues.facts import LeagueFinished, LeagueScored
from apps.leagues.selectors import cohort_ranks
from apps.leagues.wire import league_ref_render, reward_render, tier_render, week_render
from apps.points.domain import level_for
from apps.points.facts import PointsChanged
from apps.points.wire import award_render, level_render, system_base_render
from apps.quests.facts import QuestCompleted, QuestProgressed, QuestsRenewed
from apps.quests.selectors import names as quest_names
from apps.quests.wire import goals_render, period_render, quest_ref_render, quest_reward_of
from apps.streaks.facts import StreakExtended
from apps.streaks.selectors import pauses_of, streak_history, streak_state_get, streak_view
from apps.streaks.wire import streak_base_render, streak_response_render
from apps.users.domain import zone
from apps.users.facts import UserExcluded, UserFlagged, UserReinstated
from apps.users.models import EndUser
from apps.users.wire import user_render


def user(tenant: Tenant, end_user: EndUser) -> dict[str, Any]:
    return user_render(end_user, tenant)


def achievement_completed(
    tenant: Tenant, end_user: EndUser, fact: AchievementCompleted
) -> dict[str, Any]:
    return {
        "user": user(tenant, end_user),
        "achievement": user_achievement_render(fact.definition, fact.completed_at),
    }


def streak(tenant: Tenant, end_user: EndUser, fact: StreakExtended) -> dict[str, Any]:
    return {"user": user(tenant, end_user), "streak": streak_base_render(fact.view)}


def points_changed(tenant: Tenant, end_user: EndUser, fact: PointsChanged) -> dict[str, Any]:
    change = fact.change
    return {
        "user": user(tenant, end_user),
        "points": {
            **system_base_render(change.system),
            "total": change.total,
            "added": change.added,
            "awards": [award_render(a) for a in change.awards],
        },
    }


def rank_changed(tenant: Tenant, end_user: EndUser, fact: RankChanged) -> dict[str, Any]:
    """WebhookUserLeaderboardResponse: the board, the user's rank and value now, and the rank
    before the change."""
    standing = fact.standing
    return {
        "user": user(tenant, end_user),
        "leaderboard": {
            **board_render(standing.board, standing.run_start),
            "rank": standing.rank,
            "value": standing.value,
            "previousRank": standing.previous_rank,
        },
    }


def level_changed(tenant: Tenant, end_user: EndUser, fact: PointsChanged) -> dict[str, Any] | None:
    """points.level_changed, when the change moved the user across a level threshold (the
    levels before and after are derived from the totals, as reads derive them)."""
    change = fact.change
    system = change.system
    if not system.levels:
        return None
    before = level_for(change.total - change.added, system.level_points)
    after = level_for(change.total, system.level_points)
    if (before and before.pk) == (after and after.pk):
        return None
    rows = {level.pk: level for level in system.levels}
    return {
        "user": user(tenant, end_user),
        "points": {**system_base_render(system), "total": change.total},
        "previousLevel": level_render(rows[before.pk]) if before else None,
        "newLevel": level_render(rows[after.pk]) if after else None,
    }


RANKINGS = 10  # leaderboard.* payloads carry the top 10, as Trophy's leaderboard.finished


def leaderboard_with_rankings(
    tenant: Tenant, key: str, status: str, now: dt.datetime
) -> dict[str, Any] | None:
    """board_with_rankings for the board `key` of the tenant's configuration (the lifecycle
    jobs), None when it has gone."""
    board = board_definitions(tenant).get(key)
    return board_with_rankings(board, status, now) if board is not None else None


def board_with_rankings(
    board: BoardDef, status: str, now: dt.datetime, *, top: int = RANKINGS, group: str | None = None
) -> dict[str, Any]:
    """LeaderboardResponseWithRankings for the run that holds `now` (UTC date), with its top
    `top`; boards with breakdown groups carry no single ranking, so their rankings are empty
    unless a `group` is named (a board's live stream)."""
    day = min(now.date(), board.end) if board.end else now.date()
    run = board.run_for(day) or board.start
    if group is None:
        group = "" if not board.breakdown_keys else None
    rankings = rankings_page(board, run, group, 0, top) if group is not None else []
    return {"leaderboard": {**board_render(board, run), "status": status, "rankings": rankings}}


def notification_due(
    tenant: Tenant, end_user: EndUser, fact: NotificationDue
) -> tuple[str, dict[str, Any]] | None:
    """The emails.*_due event for a due notification: (type, payload)."""
    body: dict[str, Any] = {"timestamp": fact.due_at, "user": user(tenant, end_user)}
    payload = fact.payload
    if fact.type == "achievement_completed":
        completed = fact.cause
        if not isinstance(completed, AchievementCompleted):
            return None  # every producer names the completion (notifications_record)
        body["achievement"] = user_achievement_render(completed.definition, completed.completed_at)
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


def league_scored(
    tenant: Tenant, end_user: EndUser, fact: LeagueScored
) -> tuple[dict[str, Any], bool]:
    """league.joined or league.rank_changed: the league, the week, the cohort and the user's
    place in it (one read of the cohort's entries: other users' rows, which no step reads);
    and whether the rank moved."""
    move = fact.move
    league = move.league
    ranks = cohort_ranks(league, move.cohort_pk, move.tier, end_user.pk, move.previous)
    body: dict[str, Any] = {
        "user": user(tenant, end_user),
        "league": league_ref_render(league),
        "week": week_render(move.week),
        "cohort": {
            "id": ranks.cohort_id,
            "tier": tier_render(league, move.tier),
            "members": ranks.members,
        },
        "rank": ranks.rank,
        "score": move.score,
        "zone": ranks.zone,
    }
    if not move.joined:
        body["previousRank"] = ranks.previous_rank
    return body, ranks.previous_rank != ranks.rank


def league_finished(tenant: Tenant, end_user: EndUser, fact: LeagueFinished) -> dict[str, Any]:
    """league.finished: the user's result, as the week-end job wrote it."""
    entry, league = fact.entry, fact.league
    cohort = entry.cohort
    return {
        "user": user(tenant, end_user),
        "league": league_ref_render(league),
        "week": week_render(league_domain.Week(cohort.week_start, cohort.week_end)),
        "cohort": {
            "id": str(cohort.public_id),
            "tier": tier_render(league, entry.tier),
            "members": cohort.members,
        },
        "score": entry.score,
        "placement": entry.placement,
        "zone": entry.zone,
        "newTier": tier_render(league, entry.next_tier or 0),
        "left": entry.left,
        "rewards": [reward_render(r) for r in entry.rewards],
    }


def quest_progress(
    tenant: Tenant, end_user: EndUser, fact: QuestProgressed | QuestCompleted
) -> dict[str, Any]:
    """quest.progressed and quest.completed: the quest, the user's period, the goals as the
    event left them, the reward and, once completed, when (the row the quests step wrote)."""
    quest, row = fact.quest, fact.row
    names = quest_names(tenant)
    period = quest.period(row.period_first, end_user.tz)
    body: dict[str, Any] = {
        "user": user(tenant, end_user),
        "quest": quest_ref_render(quest),
        "period": period_render(period) if period is not None else None,
        "goals": goals_render(quest.goals_stored, row.goals, names.keys),
        "reward": quest_reward_of(quest, names),
    }
    if isinstance(fact, QuestCompleted):
        body["completedAt"] = row.completed_at
        body["rewardPoints"] = row.reward_points
    return body


def quests_renewed(tenant: Tenant, end_user: EndUser, fact: QuestsRenewed) -> dict[str, Any]:
    """quests.renewed: the user's quests of one cadence in the period that began."""
    renewal = fact.renewal
    names = quest_names(tenant)
    return {
        "user": user(tenant, end_user),
        "cadence": renewal.cadence,
        "period": period_render(renewal.period),
        "quests": [
            {
                **quest_ref_render(a.quest),
                "poolKey": a.pool_key,
                "reward": quest_reward_of(a.quest, names),
            }
            for a in renewal.quests
        ],
    }


def user_excluded(tenant: Tenant, end_user: EndUser, fact: UserExcluded) -> dict[str, Any]:
    """user.excluded (fair play, an extension): who was left out of the rankings, when, why
    and by whom."""
    return {
        "user": user(tenant, end_user),
        "excludedAt": _stamp(fact.at),
        "reason": fact.reason,
        "by": fact.by,
    }


def user_reinstated(tenant: Tenant, end_user: EndUser, fact: UserReinstated) -> dict[str, Any]:
    """user.reinstated: the exclusion lifted, the user back in the rankings."""
    return {
        "user": user(tenant, end_user),
        "reinstatedAt": _stamp(fact.at),
        "by": fact.by,
    }


def user_flagged(tenant: Tenant, end_user: EndUser, fact: UserFlagged) -> dict[str, Any]:
    """user.flagged (fair play, an extension): an anomaly rule matched the user, with the
    evidence. The user is not blocked."""
    return {
        "user": user(tenant, end_user),
        "rule": {"key": fact.rule_key, "name": fact.rule_name},
        "window": {"start": _stamp(fact.window_start), "end": _stamp(fact.window_end)},
        "observed": float(fact.observed),
        "threshold": float(fact.threshold),
        "flaggedAt": _stamp(fact.at),
    }


def _stamp(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
