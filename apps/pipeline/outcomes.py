"""Frozen outcome objects: what each feature step did to one event, as typed facts.

The response, notifications and webhooks are all built from these, never by re-reading the
database; the response is rendered once, at the end (`event_response_render` in
apps/pipeline/wire.py). A step that has no configuration returns its empty outcome.
"""

from dataclasses import dataclass, field

from apps.achievements.facts import AchievementCompleted
from apps.achievements.services import Completed
from apps.leaderboards.services import BoardStanding
from apps.leagues.services import LeagueMove
from apps.points.ledger import SystemChange
from apps.quests.facts import QuestCompleted, QuestProgressed, QuestsRenewed
from apps.streaks.selectors import StreakView


@dataclass(frozen=True)
class StreakOutcome:
    """The user's streak after the event and what the event did to it."""

    view: StreakView
    extended: bool = False
    started: bool = False  # this event started a new streak
    lost: int = 0  # a streak of this length was found lost (missed periods) before the event
    freezes_consumed: int = 0

    @property
    def length(self) -> int:
        return self.view.length

    @property
    def started_on(self) -> str | None:
        """The streak's first day as the wire writes it (None without a streak)."""
        state = self.view.settlement.state
        return state.started.isoformat() if state.length and state.started else None

    @property
    def freezes(self) -> int:
        """Freezes left (0 when freezes are not enabled)."""
        return self.view.settlement.state.freezes if self.view.config.freezes_enabled else 0


@dataclass(frozen=True)
class AchievementsOutcome:
    """Achievements this event completed, in order."""

    completed: tuple[Completed, ...] = ()
    facts: tuple[AchievementCompleted, ...] = ()

    @property
    def achievement_pks(self) -> tuple[int, ...]:  # for the points step's achievement triggers
        return tuple(c.definition.pk for c in self.completed)


@dataclass(frozen=True)
class PointsOutcome:
    """Points systems changed by the event."""

    changes: tuple[SystemChange, ...] = ()

    @property
    def added_by_pk(self) -> dict[int, int]:  # for points leaderboards
        added: dict[int, int] = {}
        for change in self.changes:
            added[change.system.pk] = added.get(change.system.pk, 0) + change.added
        return added


@dataclass(frozen=True)
class LeaderboardsOutcome:
    standings: tuple[BoardStanding, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class LeaguesOutcome:
    """The user's week in each league the event scored in."""

    moves: tuple[LeagueMove, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class QuestsOutcome:
    """The quests the event moved or completed, and what the completions' rewards paid into
    points systems (the leaderboards and leagues count those as points gained; the event's
    response does not show them: apps/pipeline/quests.py)."""

    renewed: tuple[QuestsRenewed, ...] = ()
    progressed: tuple[QuestProgressed, ...] = ()
    completed: tuple[QuestCompleted, ...] = ()
    reward_changes: tuple[SystemChange, ...] = ()
    reward_achievements: tuple[int, ...] = ()  # achievement pks the completions complete
