"""Writes of friends lists (the admin and application routes alike): add, remove, replace.
Both ends of every friendship written are locked first (users_lock, in primary-key order), so
that the bound on a list holds under concurrent requests."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q

from apps.accounts.models import Tenant
from apps.social import domain
from apps.social.errors import FriendsInvalidError
from apps.social.models import Friendship
from apps.social.selectors import friends_config, friends_of
from apps.users.errors import UserNotFoundError
from apps.users.models import EndUser
from apps.users.selectors import user_get
from apps.users.services import users_lock


@dataclass(frozen=True)
class FriendsChanged:
    user: EndUser
    added: list[str]  # the user ids put on the user's list, in the order asked
    removed: list[str]  # the user ids taken off it, in order of id


def friends_add(tenant: Tenant, user_id: str, friend_ids: Sequence[str]) -> FriendsChanged:
    """Put these users on the user's list (and, with mutual friendships, the user on theirs).
    Idempotent: a friend already listed is left as is. Every user must exist (unknown ones
    are refused, nothing is written), no user befriends themself, and no list may pass
    MAX_FRIENDS."""
    ids = _asked(user_id, friend_ids)
    mutual = friends_config(tenant).mutual
    with transaction.atomic():
        user, users = _locked(tenant, user_id, ids)
        return FriendsChanged(user, _add(tenant, user, users, ids, mutual=mutual), [])


def friends_remove(tenant: Tenant, user_id: str, friend_ids: Sequence[str]) -> FriendsChanged:
    """Take these users off the user's list (and, with mutual friendships, the user off
    theirs). Idempotent: an id not on the list, or no user's, changes nothing."""
    ids = list(dict.fromkeys(friend_ids))
    mutual = friends_config(tenant).mutual
    with transaction.atomic():
        user = user_get(tenant, user_id)
        return FriendsChanged(user, [], _remove(tenant, user, ids, mutual=mutual))


def friends_replace(tenant: Tenant, user_id: str, friend_ids: Sequence[str]) -> FriendsChanged:
    """Make the user's list exactly these users (none: an empty list), in one transaction:
    those no longer on it are removed and the new ones added, with the rules of each.
    Idempotent: the same list again changes nothing."""
    ids = _asked(user_id, friend_ids)
    mutual = friends_config(tenant).mutual
    with transaction.atomic():
        user, users = _locked(tenant, user_id, ids)
        gone = sorted(set(friends_of(user)) - set(ids))
        removed = _remove(tenant, user, gone, mutual=mutual)  # first: the bound counts after
        return FriendsChanged(user, _add(tenant, user, users, ids, mutual=mutual), removed)


def _asked(user_id: str, friend_ids: Sequence[str]) -> list[str]:
    ids = list(dict.fromkeys(friend_ids))
    if user_id in ids:
        raise FriendsInvalidError(
            "{user_ids}: a user cannot be their own friend", fields="user_ids", code="invalid"
        )
    return ids


def _locked(tenant: Tenant, user_id: str, ids: list[str]) -> tuple[EndUser, dict[str, EndUser]]:
    """The user and the asked friends, every one locked; refused when one is unknown."""
    users = users_lock(tenant, [user_id, *ids])
    user = users.get(user_id)
    if user is None:
        raise UserNotFoundError(user_id)
    _known_check(users, ids)
    return user, users


def _add(
    tenant: Tenant, user: EndUser, users: dict[str, EndUser], ids: list[str], *, mutual: bool
) -> list[str]:
    friends = [users[i] for i in ids]
    pairs = [(user.pk, f.pk) for f in friends]
    if mutual:
        pairs += [(f.pk, user.pk) for f in friends]
    new = _missing(user, friends, pairs)
    _bound_check(new, {u.pk: u.external_id for u in users.values()})
    Friendship.objects.bulk_create(
        [Friendship(tenant=tenant, user_id=a, friend_id=b) for a, b in new]
    )
    added = {b for a, b in new if a == user.pk}
    return [f.external_id for f in friends if f.pk in added]


def _remove(tenant: Tenant, user: EndUser, ids: list[str], *, mutual: bool) -> list[str]:
    if not ids:
        return []
    mine = Q(user=user, friend__external_id__in=ids)
    removed = list(
        Friendship.objects.filter(mine)
        .order_by("friend__external_id")
        .values_list("friend__external_id", flat=True)
    )
    doomed = (
        mine | Q(friend=user, user__tenant=tenant, user__external_id__in=ids) if mutual else mine
    )
    Friendship.objects.filter(tenant=tenant).filter(doomed).delete()
    return removed


def _known_check(users: dict[str, EndUser], ids: list[str]) -> None:
    unknown = [i for i in ids if i not in users]
    if unknown:
        shown = ", ".join(unknown[:10]) + (
            f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        )
        raise FriendsInvalidError(
            "{user_ids}: unknown users (identify them first): " + shown,
            fields="user_ids",
            code="not_found",
        )


def _missing(
    user: EndUser, friends: list[EndUser], pairs: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """The pairs not written yet (one query)."""
    pks = [f.pk for f in friends]
    have = set(
        Friendship.objects.filter(
            Q(user=user, friend_id__in=pks) | Q(user_id__in=pks, friend=user)
        ).values_list("user_id", "friend_id")
    )
    return [pair for pair in pairs if pair not in have]


def _bound_check(new: list[tuple[int, int]], ids: dict[int, str]) -> None:
    """No list may pass MAX_FRIENDS with the new pairs (one query for every list they grow)."""
    growing: dict[int, int] = {}
    for owner, _ in new:
        growing[owner] = growing.get(owner, 0) + 1
    if not growing:
        return
    counts = dict(
        Friendship.objects.filter(user_id__in=list(growing))
        .values("user_id")
        .annotate(n=Count("pk"))
        .values_list("user_id", "n")
        .order_by()
    )
    full = [
        ids[pk] for pk, more in growing.items() if counts.get(pk, 0) + more > domain.MAX_FRIENDS
    ]
    if full:
        raise FriendsInvalidError(
            "{user_ids}: a friends list holds at most "
            f"{domain.MAX_FRIENDS:,} users; this would pass it for " + ", ".join(sorted(full)[:10]),
            fields="user_ids",
            code="out_of_range",
        )
