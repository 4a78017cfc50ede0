"""Rules of neighbours and friends. No ORM."""

from dataclasses import dataclass

from apps.core import declarations as declare
from apps.core.arguments import Unset

# A user's friends list holds at most this many users (and a request adds at most as many).
MAX_FRIENDS = 1000


@dataclass(frozen=True, kw_only=True)
class TenantFriendSettings:
    """A tenant's friends settings (apps/core/declarations.py), as friend_settings_update takes
    them. Like the streak settings, one set per tenant, made by its first update."""

    mutual: bool | Unset = declare.flag(
        "Mutual friendships",
        help="On: adding a friend puts each user on the other's list, and removing takes both "
        "off. Off (the default): lists are one-way. Lists written before a change stay as they "
        "are.",
    )
