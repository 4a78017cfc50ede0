"""The streaks' facts (apps/core/facts.py): a streak extended (with the user's streak after
it, as the reactions show it), lost, or its freezes consumed or earned."""

from dataclasses import dataclass

from apps.core.facts import Fact
from apps.streaks.selectors import StreakView


@dataclass(frozen=True)
class StreakExtended(Fact):
    view: StreakView  # the user's streak after the extension
    started: bool  # the extension started a new streak (length 1)

    @property
    def length(self) -> int:
        return self.view.length


@dataclass(frozen=True)
class StreakLost(Fact):
    length: int  # the length that was lost


@dataclass(frozen=True)
class StreakFreezesChanged(Fact):
    """Freezes consumed (a missed period bridged) or earned (auto-earn), and those left."""

    consumed: int
    earned: int
    freezes: int
