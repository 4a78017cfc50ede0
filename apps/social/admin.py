"""The friends card of the end-user dashboard page (Django's autodiscovery imports this module):
the user's friends list, linked to each friend's page, and how many lists name the user. Two
queries, whatever the list's length (the card shows its first SHOWN friends)."""

from dataclasses import dataclass

from django.http import HttpRequest
from django.template.loader import render_to_string

from apps.accounts.staff import selected_tenant
from apps.social.domain import MAX_FRIENDS
from apps.social.models import Friendship
from apps.social.selectors import friends_config
from apps.users.end_user_page import END_USER_CARDS, EndUserCard
from apps.users.models import EndUser

SHOWN = 50


@dataclass(frozen=True)
class FriendRow:
    pk: int
    external_id: str
    name: str | None


def friends_card(request: HttpRequest, user: EndUser) -> list[EndUserCard]:
    tenant = selected_tenant(request)
    if tenant is None or tenant.pk != user.tenant_id:  # the page's scoped queryset rules it out
        return []
    listed = (
        Friendship.objects.filter(user=user)
        .order_by("friend__external_id")
        .values_list("friend_id", "friend__external_id", "friend__name")
    )
    rows = [FriendRow(*row) for row in listed[: SHOWN + 1]]
    count = len(rows) if len(rows) <= SHOWN else Friendship.objects.filter(user=user).count()
    context = {
        "friends": rows[:SHOWN],
        "count": count,
        "more": count - min(count, SHOWN),
        "listed_by": Friendship.objects.filter(friend=user).count(),
        "mutual": friends_config(tenant).mutual,
        "most": f"{MAX_FRIENDS:,}",
    }
    body = render_to_string("admin/users/enduser/cards/friends.html", context, request)
    return [EndUserCard(slug="friends", title="Friends", body=body)]


END_USER_CARDS.append(friends_card)
