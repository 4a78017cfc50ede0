"""Frozen outcome objects: what each feature step did to one event.

The response, notifications and webhooks are all built from these, never by re-reading the
database. A step that has no configuration (or whose feature has not been built yet) returns
its empty outcome.
"""

from dataclasses import dataclass, field
from typing import Any

from apps.core.facts import AchievementCompleted


@dataclass(frozen=True)
class StreakOutcome:
    """The user's streak after the event (the wire's MetricEventStreakResponse without
    `extended`) and what the event did to it."""

    streak: dict[str, Any] = field(
        default_factory=lambda: {
            "length": 0,
            "frequency": "daily",
            "started": None,
            "periodStart": None,
            "periodEnd": None,
            "expires": None,
        }
    )
    extended: bool = False
    started: bool = False  # this event started a new streak
    lost: int = 0  # a streak of this length was found lost (missed periods) before the event
    freezes_consumed: int = 0

    @property
    def length(self) -> int:
        return int(self.streak["length"])

    def render(self) -> dict[str, Any]:
        return {**self.streak, "extended": self.extended}


@dataclass(frozen=True)
class AchievementsOutcome:
    """Achievements this event completed: rendered (UserAchievementResponse) and by pk, for
    the points step's achievement triggers."""

    completed: tuple[dict[str, Any], ...] = ()
    achievement_pks: tuple[int, ...] = ()
    facts: tuple[AchievementCompleted, ...] = ()


@dataclass(frozen=True)
class PointsOutcome:
    """Points systems changed by the event, keyed by system key."""

    systems: dict[str, dict[str, Any]] = field(default_factory=dict)
    added_by_pk: dict[int, int] = field(default_factory=dict)  # for points leaderboards


@dataclass(frozen=True)
class LeaderboardsOutcome:
    boards: dict[str, dict[str, Any]] = field(default_factory=dict)
