"""Facts: what an event (or a job, or an API call) did to one user, as typed, frozen values.

The pipeline's feature steps report facts, and the apps that react to them (notifications,
webhooks) receive them inside the same transaction. `Fact` and the facts that more than one
app produces sit here, below every feature app; each feature app states its own facts in its
`facts.py` (`apps.achievements.facts`, `apps.streaks.facts`, `apps.points.facts`,
`apps.leaderboards.facts`), as subclasses of `Fact`. A fact carries what its producer computed:
plain values, the configuration snapshot's frozen definitions and the rows the step wrote, so
that a reaction (a webhook payload) is built from it without reading the database again.
"""

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True)
class Fact:
    """Something that happened to the user `user_pk`; the reactions dispatch on the subclass."""

    user_pk: int


@dataclass(frozen=True)
class UserActive(Fact):
    """The user sent an event at `at`."""

    at: dt.datetime


@dataclass(frozen=True)
class NotificationDue(Fact):
    """A notification became due for a user who may receive it (not in the control group, the
    type not turned off), whether or not any channel will send it: Trophy's emails.*_due
    webhooks. `key` names the thing (one per completion, streak period, spell or recap
    period); `payload` holds plain values (ids, periods, numbers); `cause` is the fact that
    made it due, when one did (an achievement's completion)."""

    type: str  # a notification type: achievement_completed, recap, reactivation, ...
    key: str
    payload: dict[str, object]
    due_at: dt.datetime
    cause: Fact | None = None
