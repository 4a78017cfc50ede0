"""Friends on the end-user page, in the browser: a user's list, written through the API, shown
as a card with links to each friend's page (which shows the list naming them). Screenshots are
saved (conftest.py)."""

from apps.social.services import friends_add
from apps.users.models import EndUser
from tests.browser.conftest import Staff
from tests.factories import OrganizationWithKey

FRIENDS = [("alice", "Alice Moreau"), ("bob", "Bob Stone"), ("chloe", "Chloé Martin")]


def test_a_users_friends_are_on_their_page(staff: Staff) -> None:
    org = OrganizationWithKey("Acme")
    for external_id, name in [*FRIENDS, ("dan", "Dan Okafor")]:
        EndUser.objects.create(tenant=org.tenant, external_id=external_id, name=name)
    friends_add(org.tenant, "dan", [external_id for external_id, _ in FRIENDS])
    dan = EndUser.objects.get(external_id="dan")

    staff.go(f"/dashboard/users/enduser/{dan.pk}/change/")
    card = staff.find("#user-friends")
    assert "3 / 1,000" in card.text
    assert [a.text for a in staff.all("#user-friends li a")] == [n for _, n in FRIENDS]
    staff.driver.execute_script("arguments[0].scrollIntoView({block: 'start'});", card)
    staff.shot("friends-card", full_page=False)
    assert staff.no_horizontal_scroll()

    staff.click("#user-friends li a")
    assert "1 lists name them" in " ".join(staff.find("#user-friends").text.split())
