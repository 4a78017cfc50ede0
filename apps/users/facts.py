"""Facts of end-users themselves (apps/core/facts.py): fair play's exclusion from the rankings
and its lifting (apps/fairplay), which the webhooks announce."""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

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


@dataclass(frozen=True)
class UserFlagged(Fact):
    """An anomaly rule matched the user (apps/fairplay): their total in one of the rule's
    windows passed its threshold. The evidence, as the flag holds it."""

    flag_pk: int
    rule_key: str
    rule_name: str
    window_start: dt.datetime
    window_end: dt.datetime
    observed: Decimal
    threshold: Decimal
    at: dt.datetime
