"""Frozen outcome objects: what each feature step did to one event.

The response, notifications and webhooks are all built from these, never by re-reading the
database. A step that has no configuration (or whose feature has not been built yet) returns
its empty outcome.
"""

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StreakOutcome:
    """The user's streak after the event, as the wire's MetricEventStreakResponse."""

    length: int = 0
    frequency: str = "daily"
    started: str | None = None
    period_start: str | None = None
    period_end: str | None = None
    expires: str | None = None
    extended: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def render(self) -> dict[str, Any]:
        return {
            "length": self.length,
            "frequency": self.frequency,
            "started": self.started,
            "periodStart": self.period_start,
            "periodEnd": self.period_end,
            "expires": self.expires,
            "extended": self.extended,
            **self.extra,
        }


@dataclass(frozen=True)
class AchievementsOutcome:
    completed: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class PointsOutcome:
    """Points systems changed by the event, keyed by system key."""

    systems: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class LeaderboardsOutcome:
    boards: dict[str, dict[str, Any]] = field(default_factory=dict)
