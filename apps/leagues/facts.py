"""The leagues' facts (apps/core/facts.py): a user joined a league's week, their score in it
changed, their week finished."""

from dataclasses import dataclass

from apps.core.facts import Fact
from apps.leagues.models import LeagueEntry
from apps.leagues.selectors import LeagueDef
from apps.leagues.services import LeagueMove


@dataclass(frozen=True)
class LeagueScored(Fact):
    """An event (or points paid outside one) joined the user to the week (`move.joined`) or
    added to their score."""

    move: LeagueMove


@dataclass(frozen=True)
class LeagueFinished(Fact):
    """The week-end job wrote the user's result (the entry holds it, with its cohort)."""

    league: LeagueDef
    entry: LeagueEntry
