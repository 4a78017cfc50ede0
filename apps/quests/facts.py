"""The quests' facts (apps/core/facts.py): an event moved a user's quest, completed it, or
was their first progress in a new period."""

from dataclasses import dataclass

from apps.core.facts import Fact
from apps.quests.models import QuestProgress
from apps.quests.selectors import QuestDef
from apps.quests.services import Renewal


@dataclass(frozen=True)
class QuestProgressed(Fact):
    """An event moved a goal of the quest without completing it (`row` as written)."""

    quest: QuestDef
    row: QuestProgress


@dataclass(frozen=True)
class QuestCompleted(Fact):
    """An event met the quest's last goal: once per user, quest and period (`row` as written,
    its `reward_points` what the reward paid into the quest's points system)."""

    quest: QuestDef
    row: QuestProgress


@dataclass(frozen=True)
class QuestsRenewed(Fact):
    """The user's first progress in a new daily, weekly or monthly period: the quests of that
    cadence they have in it (apps/quests/services.Renewal)."""

    renewal: Renewal
