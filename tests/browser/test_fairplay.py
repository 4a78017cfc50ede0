"""Fair play in the browser: a staff member excludes a user from the rankings on their page,
with a reason, sees the exclusion on the page and the user gone from the leaderboard, then
reinstates them. Screenshots of each step are saved (conftest.py)."""

import datetime as dt

import time_machine

from apps.users.models import EndUser
from tests.browser.conftest import Staff
from tests.conftest import Client
from tests.factories import MetricFactory, OrganizationWithKey, bump


def test_a_user_is_excluded_with_a_reason_and_reinstated(staff: Staff) -> None:
    org = OrganizationWithKey("Acme")
    metric = MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    board = {"name": "Top", "key": "top", "rankBy": "metric", "status": "active"}
    board["metricId"] = str(metric.public_id)
    assert client.post("/admin/v1/leaderboards", [board]).status_code == 201
    with time_machine.travel(dt.datetime.now(dt.UTC) + dt.timedelta(days=1)):
        for user, value in (("ada", 30), ("bob", 50), ("cy", 10)):
            body = {"user": {"id": user, "name": user.title()}, "value": value}
            assert client.post("/v1/metrics/words/event", body).status_code == 201

        def ranked() -> list[str]:
            return [r["userId"] for r in client.get("/v1/leaderboards/top").json()["rankings"]]

        assert ranked() == ["bob", "ada", "cy"]
        bob = EndUser.objects.get(external_id="bob")
        staff.go(f"/dashboard/users/enduser/{bob.pk}/change/")
        assert "Ranked on every leaderboard" in staff.text("#user-included")
        staff.shot("user-page-included")
        staff.submit("#user-exclude")  # a link: waits for its page
        staff.shot("exclude-confirm")
        staff.submit('.user-confirm-buttons input[type="submit"]')  # no reason: refused
        assert "This field is required" in staff.text()
        staff.fill("reason", "Scripted events at night")
        staff.submit('.user-confirm-buttons input[type="submit"]')
        assert not staff.errors(), staff.errors()
        assert "Excluded bob from the rankings: Scripted events at night" in staff.messages()
        notice = staff.text("#user-excluded")
        assert "Scripted events at night" in notice
        assert "staff:admin" in notice
        assert staff.all("#user-boards-excluded")  # the ranks shown are the user's view
        staff.shot("user-page-excluded")
        assert ranked() == ["ada", "cy"]
        staff.submit("#user-reinstate")
        staff.shot("reinstate-confirm")
        staff.submit('.user-confirm-buttons input[type="submit"]')
        assert any("Reinstated" in m for m in staff.messages()), staff.messages()
        assert staff.all("#user-included")
        staff.shot("user-page-reinstated")
        assert ranked() == ["bob", "ada", "cy"]


def test_flags_are_listed_with_one_click_exclude_and_dismiss(staff: Staff) -> None:
    org = OrganizationWithKey("Acme")
    metric = MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    item = {
        "name": "Too many words",
        "key": "too-many-words",
        "kind": "metric",
        "metricId": str(metric.public_id),
        "threshold": 100,
        "windowMinutes": 30,
    }
    assert client.post("/admin/ext/v1/anomaly-rules", [item]).status_code == 201
    for user, value in (("ada", 150), ("bob", 40), ("cy", 500)):
        body = {"user": {"id": user}, "value": value}
        assert client.post("/v1/metrics/words/event", body).status_code == 201
    staff.go("/dashboard/fairplay/userflag/")
    assert not staff.errors(), staff.errors()
    rows = staff.text("#result_list")
    assert "ada" in rows
    assert "cy" in rows
    assert "bob" not in rows
    assert "150, more than 100" in rows
    staff.shot("flags-open")
    # Rows are newest first: cy, then ada.
    staff.submit("#result_list tbody tr:nth-child(1) .flag-exclude")
    assert "Excluded cy from the rankings (Too many words)." in staff.messages()
    staff.submit("#result_list tbody tr:nth-child(1) .flag-dismiss")
    assert "Dismissed the flag of ada (Too many words)." in staff.messages()
    assert "0 user flags" in staff.text() or not staff.all("#result_list tbody tr")
    staff.shot("flags-resolved")
    cy = EndUser.objects.get(external_id="cy")
    assert cy.excluded_at is not None
    assert cy.excluded_reason.startswith("Flagged by Too many words: 500")
    assert EndUser.objects.get(external_id="ada").excluded_at is None
    staff.go("/dashboard/fairplay/userflag/?state=excluded")
    assert "excluded by staff:admin" in staff.text("#result_list")
