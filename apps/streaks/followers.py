"""What the apps above streaks keep in step with streaks that change outside an event (issue 27
item 4): a restore or a reset of one user's streak by staff or the admin API, and a change of the
tenant's frequency, which restarts every streak.

An event's streak reaches the leaderboards through the pipeline's steps; these changes come from
the streaks app's own services, which cannot import the apps above them. Those apps register a
follower here instead (XX
imported by its AppConfig), and the services call it in their own transaction, under the same
locks: the board shows the new length when the change commits, never minutes later when the
periodic `leaderboards-streaks` job comes by.
"""

import datetime as dt
from collections.abc import Callable

from apps.accounts.models import Tenant
from apps.users.models import EndUser

# One user's streak length is now `length` (the caller holds the user's row lock).
LengthFollower = Callable[[Tenant, EndUser, int, dt.datetime], None]
# Every streak of the tenant restarted at 0 (a change of frequency).
RestartFollower = Callable[[Tenant, dt.datetime], None]

_LENGTH: list[LengthFollower] = []
_RESTART: list[RestartFollower] = []


def length_follower(follower: LengthFollower) -> LengthFollower:
    """Register a function told of each user's streak that staff set (restore, reset)."""
    _LENGTH.append(follower)
    return follower


def restart_follower(follower: RestartFollower) -> RestartFollower:
    """Register a function told when every streak of a tenant restarts."""
    _RESTART.append(follower)
    return follower


def streak_length_set(tenant: Tenant, user: EndUser, length: int, now: dt.datetime) -> None:
    for follower in _LENGTH:
        follower(tenant, user, length, now)


def streaks_restarted(tenant: Tenant, now: dt.datetime) -> None:
    for follower in _RESTART:
        follower(tenant, now)
