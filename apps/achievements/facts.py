"""The achievements' facts (apps/core/facts.py): a completion, with the definition it
completed, as the reactions show it."""

import datetime as dt
from dataclasses import dataclass

from apps.achievements.selectors import AchievementDef
from apps.core.facts import Fact


@dataclass(frozen=True)
class AchievementCompleted(Fact):
    definition: AchievementDef
    completion_id: str
    completed_at: dt.datetime
    backdated: bool = False

    @property
    def achievement_pk(self) -> int:
        return self.definition.pk
