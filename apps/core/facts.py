"""Facts: what an event (or a job) did, as typed, frozen values.

The pipeline's feature steps report facts, and the apps that react to them (notifications,
webhooks) receive them inside the same transaction; they sit here, below every feature app, so
that both producers and consumers can import them. Facts carry primary keys and plain values,
never ORM objects or rendered JSON: whoever reacts loads what it needs.
"""

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True)
class UserActive:
    """The user sent an event at `at`."""

    user_pk: int
    at: dt.datetime


@dataclass(frozen=True)
class AchievementCompleted:
    user_pk: int
    achievement_pk: int
    completion_id: str
    completed_at: dt.datetime
    backdated: bool = False


@dataclass(frozen=True)
class StreakExtended:
    user_pk: int
    length: int
    started: bool  # the extension started a new streak (length 1)


@dataclass(frozen=True)
class StreakLost:
    user_pk: int
    length: int  # the length that was lost


@dataclass(frozen=True)
class StreakFreezesChanged:
    """Freezes consumed (a missed period bridged) or earned (auto-earn), and those left."""

    user_pk: int
    consumed: int
    earned: int
    freezes: int


@dataclass(frozen=True)
class PointsChanged:
    user_pk: int
    system_key: str
    added: int
    total: int
    award_ids: tuple[str, ...] = ()  # public ids of the awards that made the change


@dataclass(frozen=True)
class RankChanged:
    user_pk: int
    leaderboard_key: str
    rank: int | None
    previous_rank: int | None


@dataclass(frozen=True)
class NotificationDue:
    """A notification became due for a user who may receive it (not in the control group, the
    type not turned off), whether or not any channel will send it: Trophy's emails.*_due
    webhooks. `key` names the thing (one per completion, streak period, spell or recap
    period); `payload` holds plain values (ids, periods, numbers)."""

    user_pk: int
    type: str  # a notification type: achievement_completed, recap, reactivation, ...
    key: str
    payload: dict[str, object]
    due_at: dt.datetime


Fact = (
    UserActive
    | AchievementCompleted
    | StreakExtended
    | StreakLost
    | StreakFreezesChanged
    | PointsChanged
    | RankChanged
    | NotificationDue
)
