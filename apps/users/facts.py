"""Facts of end-users themselves (apps/core/facts.py): fair play's exclusion from the rankings
and its lifting (apps/fairplay), which the webhooks announce."""

import datetime as dt
from dataclasses import dataclass

from apps.core.facts import Fact


@dataclass(frozen=True)
class UserExcluded(Fact):
    """Staff (or an admin key) excluded the user from every ranking of the tenant."""

    at: dt.datetime
    reason: str
    by: str


@dataclass(frozen=True)
class UserReinstated(Fact):
    """The user's exclusion was lifted: back in every ranking with their current values."""

    at: dt.datetime
    by: str
