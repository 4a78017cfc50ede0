"""The leaderboards' facts (apps/core/facts.py): where a change left the user on one board
(the board, the run, the ranks before and after and the user's value)."""

from dataclasses import dataclass

from apps.core.facts import Fact
from apps.leaderboards.services import BoardStanding


@dataclass(frozen=True)
class RankChanged(Fact):
    standing: BoardStanding

    @property
    def moved(self) -> bool:
        return self.standing.rank != self.standing.previous_rank
