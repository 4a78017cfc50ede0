"""What goes on the streams: an event's facts as the webhooks' event types and payloads
(apps/webhooks/payloads.py), unthrottled. A user's stream carries the events about that user;
the tenant's stream carries them too, with the emails.*_due events; a board's stream hears only
that the board may have changed (its top N is read by the process serving it)."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from apps.accounts.models import Tenant
from apps.achievements.facts import AchievementCompleted
from apps.core.facts import Fact, NotificationDue
from apps.leaderboards.facts import RankChanged
from apps.leagues.facts import LeagueFinished, LeagueScored
from apps.points.facts import PointsChanged
from apps.quests.facts import QuestCompleted, QuestProgressed, QuestsRenewed
from apps.streaks.facts import StreakExtended, StreakFreezesChanged, StreakLost
from apps.streams.domain import MAX_TOP
from apps.users.models import EndUser
from apps.webhooks import payloads
from apps.webhooks.choices import EventType


@dataclass(frozen=True)
class Message:
    """One message: its type and how to build its payload. `costly`: building it reads the
    database (a league's cohort, a notification's subject), so it is built only when a client
    watches; `user`: whether it belongs on the user's stream (else the tenant's only)."""

    type: str
    build: Callable[[], dict[str, Any] | None]
    costly: bool = False
    user: bool = True


def fact_messages(tenant: Tenant, user: EndUser, facts: Iterable[Fact]) -> list[Message]:
    """The messages of an event's facts, in the order the webhooks would tell them."""
    found: list[Message] = []
    for fact in facts:
        found += _messages(tenant, user, fact)
    return found


def _messages(tenant: Tenant, user: EndUser, fact: Fact) -> list[Message]:
    if isinstance(fact, AchievementCompleted) and not fact.backdated:
        return [
            Message(
                EventType.ACHIEVEMENT_COMPLETED,
                lambda: payloads.achievement_completed(tenant, user, fact),
            )
        ]
    if isinstance(fact, StreakExtended):
        type = EventType.STREAK_STARTED if fact.started else EventType.STREAK_EXTENDED
        return [Message(type, lambda: payloads.streak(tenant, user, fact))]
    if isinstance(fact, StreakLost):
        body = lambda: {"user": payloads.user(tenant, user), "length": fact.length}  # noqa: E731
        return [Message(EventType.STREAK_LOST, body)]
    if isinstance(fact, StreakFreezesChanged):
        return _freezes(tenant, user, fact)
    if isinstance(fact, PointsChanged):
        return [
            Message(EventType.POINTS_CHANGED, lambda: payloads.points_changed(tenant, user, fact)),
            Message(
                EventType.POINTS_LEVEL_CHANGED,
                lambda: payloads.level_changed(tenant, user, fact),
            ),
        ]
    if isinstance(fact, RankChanged) and fact.moved:
        body = lambda: payloads.rank_changed(tenant, user, fact)  # noqa: E731
        return [Message(EventType.LEADERBOARD_RANK_CHANGED, body)]
    if isinstance(fact, LeagueScored):
        return [_league(tenant, user, fact)]
    if isinstance(fact, LeagueFinished):
        body = lambda: payloads.league_finished(tenant, user, fact)  # noqa: E731
        return [Message(EventType.LEAGUE_FINISHED, body)]
    if isinstance(fact, NotificationDue):
        return [_notification_due(tenant, user, fact)]
    if isinstance(fact, QuestProgressed | QuestCompleted):
        type = (
            EventType.QUEST_COMPLETED
            if isinstance(fact, QuestCompleted)
            else EventType.QUEST_PROGRESSED
        )
        return [Message(type, lambda: payloads.quest_progress(tenant, user, fact))]
    if isinstance(fact, QuestsRenewed):
        body = lambda: payloads.quests_renewed(tenant, user, fact)  # noqa: E731
        return [Message(EventType.QUESTS_RENEWED, body)]
    return []


def _freezes(tenant: Tenant, user: EndUser, fact: StreakFreezesChanged) -> list[Message]:
    found: list[Message] = []
    for type, field, count in (
        (EventType.STREAK_FREEZE_CONSUMED, "consumed", fact.consumed),
        (EventType.STREAK_FREEZE_EARNED, "earned", fact.earned),
    ):
        if count:
            found.append(Message(type, _freeze_body(tenant, user, field, count, fact.freezes)))
    return found


def _freeze_body(
    tenant: Tenant, user: EndUser, field: str, count: int, freezes: int
) -> Callable[[], dict[str, Any]]:
    return lambda: {"user": payloads.user(tenant, user), field: count, "freezes": freezes}


def _league(tenant: Tenant, user: EndUser, fact: LeagueScored) -> Message:
    def build() -> dict[str, Any] | None:
        body, moved = payloads.league_scored(tenant, user, fact)
        return body if fact.move.joined or moved else None

    type = EventType.LEAGUE_JOINED if fact.move.joined else EventType.LEAGUE_RANK_CHANGED
    return Message(type, build, costly=True)


def _notification_due(tenant: Tenant, user: EndUser, fact: NotificationDue) -> Message:
    type = f"emails.{fact.type.removesuffix('_completed')}_due"

    def build() -> dict[str, Any] | None:
        found = payloads.notification_due(tenant, user, fact)
        return found[1] if found is not None else None

    return Message(type, build, costly=True, user=False)


def boards_moved(facts: Iterable[Fact]) -> list[str]:
    """The keys of the boards whose top N (at most MAX_TOP) this event may have changed."""
    keys: list[str] = []
    for fact in facts:
        if isinstance(fact, RankChanged):
            standing = fact.standing
            near = [r for r in (standing.rank, standing.previous_rank) if r is not None]
            if any(r <= MAX_TOP for r in near) and standing.board.key not in keys:
                keys.append(standing.board.key)
    return keys
