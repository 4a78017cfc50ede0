"""The friends card of the end-user page: the list with links to each friend's page, the count
and how many lists name the user, the tenant's setting, and two queries whatever the list."""

import html
import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.social import admin as social_admin
from apps.users.models import EndUser
from tests.dashboard.conftest import admin_url, page_main
from tests.social.support import users

pytestmark = pytest.mark.django_db


def card(content: bytes) -> str:
    found = re.search(
        r'<section[^>]*id="user-friends".*?</section>', page_main(content.decode()), re.S
    )
    assert found, "no friends card"
    return found.group(0)


def words(section: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section)))


def test_the_card_lists_the_friends_with_links(staff_client, api_client, tenant):
    who = users(tenant, 4)
    assert api_client.post("/ext/v1/users/u0/friends", {"userIds": ["u2", "u1"]}).status_code == 200
    assert api_client.post("/ext/v1/users/u3/friends", {"userIds": ["u0"]}).status_code == 200
    response = staff_client.get(admin_url(EndUser, "change", who[0].pk))
    assert response.status_code == 200
    section = card(response.content)
    text = words(section)
    assert "2 / 1,000 friends on their list" in text
    assert "1 lists name them" in text
    assert "one-way in this tenant" in text
    assert text.index("Name 1") < text.index("Name 2")
    assert admin_url(EndUser, "change", who[1].pk) in section
    assert "No friends on their list" in words(
        card(staff_client.get(admin_url(EndUser, "change", who[1].pk)).content)
    )


def test_a_long_list_is_cut_and_costs_the_same_queries(
    staff_client, api_client, tenant, monkeypatch: Any
):
    monkeypatch.setattr(social_admin, "SHOWN", 3)
    who = users(tenant, 12)
    api_client.post("/ext/v1/users/u0/friends", {"userIds": ["u1", "u2"]})
    url = admin_url(EndUser, "change", who[0].pk)
    staff_client.get(url)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            staff_client.get(url)
        return len(captured)

    few = queries()
    api_client.post("/ext/v1/users/u0/friends", {"userIds": [f"u{n}" for n in range(3, 12)]})
    text = words(card(staff_client.get(url).content))
    assert "11 / 1,000" in text
    assert "and 8 more" in text
    assert queries() == few + 1  # the count of a list longer than the card shows
