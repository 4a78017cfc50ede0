"""The end-user page: every section with data made through the API and the services, search by
name, the actions (a confirmation page first, then the service the API calls), tenant scoping,
permissions and a bounded number of queries."""

import datetime as dt
import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Tenant
from apps.achievements.models import Achievement, AchievementCompletion
from apps.metrics.models import Metric
from apps.notifications.models import Message
from apps.points import configuration
from apps.points.domain import PointsLevelSettings, PointsSystemSettings, PointsTriggerSettings
from apps.points.models import PointsTotal
from apps.streaks.configuration import streak_settings_update
from apps.streaks.domain import FreezeSettings, TenantStreakSettings
from apps.streaks.models import StreakPause, StreakState
from apps.streaks.services import streak_pause_create
from apps.users.models import EndUser
from tests.dashboard.conftest import admin_url, message_texts, org_staff, page_main
from tests.factories import (
    AttributeFactory,
    EndUserFactory,
    MetricFactory,
    OrganizationWithKey,
    bump,
)

# Every request of these tests runs at this instant, a Thursday.
TODAY = dt.datetime(2026, 3, 12, 12, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)

DAILY_WITH_FREEZES = TenantStreakSettings(
    frequency="daily",
    conditions=[("words", 1)],
    freezes=FreezeSettings(start_count=0, max_count=2),
)


@pytest.fixture(autouse=True)
def clock() -> Iterator[Any]:
    with time_machine.travel(TODAY, tick=False) as traveller:
        yield traveller


def send(api_client: Any, clock: Any, user_id: str, when: dt.datetime, value: int = 2) -> None:
    clock.move_to(when)
    body = {"user": {"id": user_id}, "value": value}
    response = api_client.post("/v1/metrics/words/event", body)
    assert response.status_code == 201, response.content
    clock.move_to(TODAY)


def create(api_client: Any, path: str, item: dict[str, Any]) -> dict[str, Any]:
    response = api_client.post(path, [item])
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["issues"] == [], body
    return body["created"][0]


def activate_email(api_client: Any, type: str) -> None:
    templates = api_client.get("/admin/v1/email-templates", {"limit": 100}).json()
    template = next(t for t in templates if t["type"] == type)
    response = api_client.patch(
        "/admin/v1/email-templates", [{"id": template["id"], "status": "active"}]
    )
    assert response.status_code == 200, response.content


@pytest.fixture
def setup(api_client: Any, tenant: Tenant, metric: Metric) -> dict[str, Any]:
    """The tenant's configuration, made through the admin API and the services: daily streaks
    with freezes, four achievements, an XP system paying for words and for sharing, a words
    leaderboard, and the achievement email."""
    AttributeFactory(tenant=tenant, key="plan")
    streak_settings_update(tenant, DAILY_WITH_FREEZES)
    metric_id = str(metric.public_id)
    achievements = {
        "ten": create(
            api_client,
            "/admin/v1/achievements",
            {"name": "Ten words", "trigger": "metric", "metricId": metric_id, "metricValue": 10},
        ),
        "hundred": create(
            api_client,
            "/admin/v1/achievements",
            {
                "name": "Hundred words",
                "trigger": "metric",
                "metricId": metric_id,
                "metricValue": 100,
            },
        ),
        "week": create(
            api_client,
            "/admin/v1/achievements",
            {"name": "Full week", "trigger": "streak", "streakLength": 7},
        ),
        "share": create(
            api_client,
            "/admin/v1/achievements",
            {"name": "Shared a story", "trigger": "api", "key": "share"},
        ),
    }
    for item in achievements.values():
        response = api_client.patch(
            "/admin/v1/achievements", [{"id": item["id"], "status": "active"}]
        )
        assert response.status_code == 200, response.content
    system, _ = configuration.points_system_create(
        tenant,
        PointsSystemSettings(key="xp", name="XP"),
        levels=[
            PointsLevelSettings(key="bronze", name="Bronze", points=10),
            PointsLevelSettings(key="silver", name="Silver", points=100),
        ],
        triggers=[
            PointsTriggerSettings(
                type="metric",
                points=5,
                status="active",
                metric_id=str(metric.public_id),
                metric_threshold=1,
            ),
            PointsTriggerSettings(
                type="achievement",
                points=50,
                status="active",
                achievement_id=achievements["share"]["id"],
            ),
        ],
    )
    create(
        api_client,
        "/admin/v1/leaderboards",
        {
            "key": "top",
            "name": "Top writers",
            "rankBy": "metric",
            "metricId": metric_id,
            "status": "active",
            "start": (TODAY - 30 * DAY).date().isoformat(),
        },
    )
    activate_email(api_client, "achievement_completed")
    return {"achievements": achievements, "system": system}


@pytest.fixture
def alice(api_client: Any, clock: Any, tenant: Tenant, setup: dict[str, Any]) -> EndUser:
    """Alice wrote on 5 and 6 March, missed the 7th (no freeze: the streak was lost), and wrote
    every day from the 9th: a streak of 4 days. Bob wrote once, less than her."""
    user_fields = {
        "name": "Alice Liddell",
        "email": "alice@example.com",
        "tz": "Europe/Paris",
        "attributes": {"plan": "pro"},
    }
    clock.move_to(TODAY - 7 * DAY)
    response = api_client.post(
        "/v1/metrics/words/event", {"user": {"id": "alice", **user_fields}, "value": 2}
    )
    assert response.status_code == 201, response.content
    clock.move_to(TODAY)
    for days_ago in (6, 3, 2, 1, 0):
        send(api_client, clock, "alice", TODAY - days_ago * DAY)
    send(api_client, clock, "bob", TODAY, value=1)
    user = EndUser.objects.get(tenant=tenant, external_id="alice")
    streak_pause_create(tenant, user, start=TODAY.date() + 2 * DAY, end=TODAY.date() + 3 * DAY)
    return user


def page(client: Client, user: EndUser) -> str:
    response = client.get(admin_url(EndUser, "change", user.pk))
    assert response.status_code == 200
    return response.content.decode()


def card(content: str, slug: str) -> str:
    """The HTML of one card of the page."""
    match = re.search(rf'<section [^>]*id="user-{slug}">(.*?)</section>', content, re.S)
    assert match, f"no {slug} card"
    return match.group(1)


def squash(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r">\s+<", "><", html))


def action_url(name: str, user: EndUser, *args: Any) -> str:
    from django.urls import reverse

    return reverse(f"admin:users_enduser_{name}", args=[user.pk, *args])


# --- the page --------------------------------------------------------------------------------


def test_the_page_shows_every_section(staff_client: Client, alice: EndUser) -> None:
    content = page(staff_client, alice)

    profile = squash(card(content, "profile"))
    assert "Alice Liddell" in profile
    assert "alice@example.com" in profile
    assert "Europe/Paris" in profile
    assert "<td><code>plan</code></td><td>pro</td>" in squash(card(content, "attributes"))

    metrics = squash(card(content, "metrics"))
    assert "Words" in metrics
    assert '<td class="user-num user-strong">12</td>' in metrics  # six events of 2
    # One bar per day of the last 30, six of them with a change.
    assert metrics.count("<rect") == 30
    assert metrics.count('class="user-spark-zero"') == 24
    assert "Thu 12 Mar: +2" in metrics
    assert f"?user={alice.pk}" in metrics

    points = squash(card(content, "points"))
    # Five points per word: six awards of 10.
    assert '<td class="user-num user-strong">60</td>' in points
    assert "<td>Bronze</td>" in points
    assert 'title="55%"' in points  # from Bronze at 10 to Silver at 100
    assert "Silver at 100" in points
    assert points.count('<td class="user-num">+10</td>') == 6
    assert points.count("<td>metric</td>") == 6

    achievements = squash(card(content, "achievements"))
    completed, pending = achievements.split("Not completed")
    assert "Ten words" in completed
    assert "Hundred words" not in completed
    assert "12 of 100 Words" in pending
    assert "streak 4 of 7" in pending
    assert action_url("achievement_complete", alice, Achievement.objects.get(key="share").pk) in (
        pending
    )

    boards = squash(card(content, "leaderboards"))
    assert "Top writers" in boards
    assert '<span class="user-strong">#1</span>' in boards

    notifications = squash(card(content, "notifications"))
    assert "<td>Achievement completed</td><td>Email</td>" in notifications


def test_the_streak_card_shows_the_calendar(staff_client: Client, alice: EndUser) -> None:
    streak = squash(card(page(staff_client, alice), "streak"))

    assert '<div class="user-big">4</div>' in streak
    assert "March 14, 2026 to March 15, 2026" in streak  # the pause
    cells = re.findall(r'<span class="user-cal (user-cal-[a-z-]+)[^"]*" title="([^"]*)"', streak)
    # Eight whole weeks, Sunday 18 January to Saturday 14 March.
    assert len(cells) == 8 * 7
    assert cells[0][1].startswith("Sun 18 Jan 2026")
    by_day = {title.split(":")[0]: status for status, title in cells}
    assert by_day["Thu 05 Mar 2026"] == "user-cal-extended"
    assert by_day["Fri 06 Mar 2026"] == "user-cal-extended"
    assert by_day["Sat 07 Mar 2026"] == "user-cal-missed"
    assert by_day["Sun 08 Mar 2026"] == "user-cal-inactive"
    assert by_day["Thu 12 Mar 2026"] == "user-cal-extended"
    assert by_day["Fri 13 Mar 2026"] == "user-cal-upcoming"
    assert "user-cal-paused-ahead" in streak  # Saturday 14, inside the pause
    assert {t.split(":")[0]: t for _, t in cells}["Thu 12 Mar 2026"].endswith("streak 4")


def test_a_weekly_streak_shows_one_cell_per_week(
    staff_client: Client, api_client: Any, clock: Any, tenant: Tenant, metric: Metric
) -> None:
    streak_settings_update(
        tenant, TenantStreakSettings(frequency="weekly", conditions=[("words", 1)])
    )
    for days_ago in (21, 14, 0):  # the weeks of 15 February, 22 February and 8 March
        send(api_client, clock, "walt", TODAY - days_ago * DAY)
    walt = EndUser.objects.get(tenant=tenant, external_id="walt")

    streak = squash(card(page(staff_client, walt), "streak"))

    assert '<div class="user-big">1</div>' in streak
    assert "week in a row" in streak
    cells = re.findall(
        r'<span class="user-cal user-cal-wide (user-cal-[a-z-]+)[^"]*" title="([^"]*)"', streak
    )
    assert [title.split(":")[0] for _, title in cells][-3:] == [
        "22 Feb to 28 Feb 2026",
        "01 Mar to 07 Mar 2026",
        "08 Mar to 14 Mar 2026",
    ]
    assert [status for status, _ in cells][-4:] == [
        "user-cal-extended",
        "user-cal-extended",
        "user-cal-missed",
        "user-cal-extended",
    ]


def test_a_user_without_data_has_a_quiet_page(staff_client: Client, tenant: Tenant) -> None:
    user = EndUserFactory(tenant=tenant, external_id="newcomer")
    content = page(staff_client, user)
    assert "No events yet." in content
    assert "Streaks are not set up for this tenant" in content
    assert "No points yet." in content
    assert "No notification yet." in content
    # No streak actions without streaks.
    assert action_url("streak_reset", user) not in content


def test_sections_of_other_apps_are_shown_as_cards(
    staff_client: Client, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.contrib import admin
    from django.utils.html import format_html

    from apps.users import admin as users_admin

    @admin.display(description="something new")
    def fresh(user: EndUser) -> Any:
        return format_html("<p>{} fresh</p>", user)

    monkeypatch.setattr(users_admin, "END_USER_SECTIONS", [fresh])
    user = EndUserFactory(tenant=tenant, external_id="zoe")

    shown = page(staff_client, user)

    assert "<p>zoe fresh</p>" in card(shown, "fresh")
    assert "<h2>Something new</h2>" in shown


def test_end_users_are_searched_by_id_name_or_email(staff_client: Client, tenant: Tenant) -> None:
    EndUserFactory(tenant=tenant, external_id="u-1", name="Alice Liddell", email="a@example.com")
    EndUserFactory(tenant=tenant, external_id="u-2", name="Bob Stone", email="bob@example.org")
    EndUserFactory(tenant=tenant, external_id="liddell-3", name=None, email=None)

    def found(query: str) -> list[str]:
        response = staff_client.get(admin_url(EndUser), {"q": query})
        assert response.status_code == 200
        return sorted(u.external_id for u in response.context["cl"].result_list)

    assert found("liddell") == ["liddell-3", "u-1"]
    assert found("Bob St") == ["u-2"]
    assert found("example.org") == ["u-2"]
    assert found("u-1") == ["u-1"]


# --- actions -------------------------------------------------------------------------------


def confirm(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return html.unescape(squash(response.content.decode()))


def post(client: Client, url: str, data: dict[str, Any] | None = None) -> tuple[Any, list[str]]:
    """POST, then follow to the page it returns to, which shows (and so consumes) messages."""
    response = client.post(url, data or {}, follow=True)
    return response, message_texts(response)


def assert_back_on_the_page(response: Any, user: EndUser) -> None:
    assert response.redirect_chain == [(admin_url(EndUser, "change", user.pk), 302)]
    assert response.status_code == 200


def streak_of(user: EndUser) -> StreakState:
    return StreakState.objects.get(user=user)


def test_reset_is_confirmed_then_resets_the_streak(staff_client: Client, alice: EndUser) -> None:
    url = action_url("streak_reset", alice)
    assert url in page(staff_client, alice)

    text = confirm(staff_client, url)
    assert "alice's streak of 4 days (since March 9, 2026) drops to 0 now." in text
    assert 'value="Yes, reset the streak to 0"' in text
    assert streak_of(alice).length == 4

    response, texts = post(staff_client, url)
    assert_back_on_the_page(response, alice)
    assert texts == ["Reset alice's streak to 0."]
    assert streak_of(alice).length == 0
    entry = LogEntry.objects.get(object_id=str(alice.pk))
    assert entry.get_change_message() == "Reset alice's streak to 0."


def test_restore_brings_back_the_longest_recent_streak(
    staff_client: Client, alice: EndUser
) -> None:
    url = action_url("streak_restore", alice)
    text = confirm(staff_client, url)
    assert "Nothing to restore" in text
    assert 'type="submit"' not in page_main(text)

    post(staff_client, action_url("streak_reset", alice))
    text = confirm(staff_client, url)
    assert "alice's streak goes from 0 days to 4" in text
    assert streak_of(alice).length == 0

    response, texts = post(staff_client, url)
    assert_back_on_the_page(response, alice)
    assert texts == ["Restored alice's streak to 4 days."]
    assert streak_of(alice).length == 4

    # Nothing longer now: the service declines, and says so.
    response, texts = post(staff_client, url)
    assert_back_on_the_page(response, alice)
    assert texts == ["alice's streak had nothing longer to restore."]


def test_a_freeze_is_granted_up_to_the_maximum(staff_client: Client, alice: EndUser) -> None:
    url = action_url("streak_freeze", alice)
    text = confirm(staff_client, url)
    assert "alice has 0 of at most 2 freezes; granting adds one (1 of 2)." in text
    assert streak_of(alice).freezes == 0

    response, texts = post(staff_client, url)
    assert_back_on_the_page(response, alice)
    assert texts == ["Granted a streak freeze to alice: 1 of 2."]
    post(staff_client, url)
    assert streak_of(alice).freezes == 2

    assert "alice already has the maximum of 2 freezes." in confirm(staff_client, url)
    response, texts = post(staff_client, url)
    assert texts == ["alice already has the maximum of 2 freezes."]
    assert streak_of(alice).freezes == 2


def test_no_freeze_is_granted_while_freezes_are_off(
    staff_client: Client, tenant: Tenant, alice: EndUser
) -> None:
    streak_settings_update(tenant, TenantStreakSettings(freezes=None))
    url = action_url("streak_freeze", alice)
    assert "Streak freezes are not enabled for this tenant" in confirm(staff_client, url)
    response, texts = post(staff_client, url)
    assert_back_on_the_page(response, alice)
    assert texts == ["Streak freezes are not enabled for this tenant"]
    assert streak_of(alice).freezes == 0


def test_a_pause_is_added_with_its_dates(staff_client: Client, alice: EndUser) -> None:
    url = action_url("streak_pause", alice)
    text = confirm(staff_client, url)
    # The form starts at the user's today, with the dashboard's date widget.
    assert 'class="vDateField"' in text
    assert 'value="2026-03-12"' in text
    assert "Pauses already set: March 14, 2026 to March 15, 2026." in text
    assert StreakPause.objects.filter(user=alice).count() == 1

    response, texts = post(staff_client, url, {"start": "2026-03-20", "end": "2026-03-22"})
    assert_back_on_the_page(response, alice)
    assert texts == ["Paused alice's streak from March 20, 2026 to March 22, 2026."]
    pause = StreakPause.objects.filter(user=alice).latest("pk")
    assert (pause.start, pause.end) == (dt.date(2026, 3, 20), dt.date(2026, 3, 22))


def test_an_invalid_pause_is_refused(staff_client: Client, alice: EndUser) -> None:
    url = action_url("streak_pause", alice)
    # The admin API's rule: the form shows it, nothing is written.
    response = staff_client.post(url, {"start": "2026-03-20", "end": "2026-03-19"})
    assert response.status_code == 200
    assert "end must not be before start" in response.content.decode()
    # The service's rule: a pause may not start before the user's today.
    response, texts = post(staff_client, url, {"start": "2026-03-01", "end": "2026-03-02"})
    assert_back_on_the_page(response, alice)
    assert texts == ["Start must not be before today in the user's time zone"]
    assert StreakPause.objects.filter(user=alice).count() == 1


def test_an_api_achievement_is_completed_through_the_pipeline(
    staff_client: Client, alice: EndUser
) -> None:
    share = Achievement.objects.get(key="share")
    url = action_url("achievement_complete", alice, share.pk)
    text = confirm(staff_client, url)
    assert "alice completes “Shared a story” now, as POST /v1/achievements/share/complete" in text
    assert "+50 XP" in text
    assert not AchievementCompletion.objects.filter(user=alice, achievement=share).exists()

    response, texts = post(staff_client, url)
    assert_back_on_the_page(response, alice)
    assert texts == ["Completed “Shared a story” for alice: +50 XP."]
    assert AchievementCompletion.objects.filter(user=alice, achievement=share).exists()
    assert PointsTotal.objects.get(user=alice).total == 60 + 50
    # The completion is notified like one made through the API.
    assert Message.objects.filter(
        user=alice, type="achievement_completed", payload__achievementId=share.pk
    ).exists()

    assert "alice completed it on" in confirm(staff_client, url)
    response, texts = post(staff_client, url)
    assert texts[0].startswith("alice had already completed “Shared a story”")
    assert PointsTotal.objects.get(user=alice).total == 110


def test_only_api_achievements_are_completed_here(
    staff_client: Client, api_client: Any, alice: EndUser
) -> None:
    hundred = Achievement.objects.get(name="Hundred words")
    url = action_url("achievement_complete", alice, hundred.pk)
    assert staff_client.get(url).status_code == 404
    assert staff_client.post(url).status_code == 404

    share = Achievement.objects.get(key="share")
    response = api_client.patch(
        "/admin/v1/achievements", [{"id": str(share.public_id), "status": "locked"}]
    )
    assert response.status_code == 200
    url = action_url("achievement_complete", alice, share.pk)
    assert "This achievement is locked" in confirm(staff_client, url)
    response, texts = post(staff_client, url)
    assert texts == ["This achievement is locked: it cannot be completed"]
    assert not AchievementCompletion.objects.filter(achievement=share).exists()


# --- scope and permissions -----------------------------------------------------------------


def action_urls(user: EndUser) -> list[str]:
    share = Achievement.objects.get(key="share")
    return [
        action_url("streak_reset", user),
        action_url("streak_restore", user),
        action_url("streak_freeze", user),
        action_url("streak_pause", user),
        action_url("achievement_complete", user, share.pk),
    ]


def test_another_tenants_user_is_not_found(
    staff_client: Client, other_tenant: Tenant, alice: EndUser
) -> None:
    stranger = EndUserFactory(tenant=other_tenant, external_id="stranger")
    missing = EndUser(pk=stranger.pk + 1000)

    # The page: Django's "does not exist" redirect, the same as for a user that does not exist.
    for user in (stranger, missing):
        response = staff_client.get(admin_url(EndUser, "change", user.pk))
        assert response.status_code == 302
        assert response["Location"] == "/dashboard/"
    for url in action_urls(stranger):
        assert staff_client.get(url).status_code == 404, url
        assert staff_client.post(url, {"start": "2026-03-20", "end": "2026-03-21"}).status_code == (
            404
        )
    assert not StreakPause.objects.filter(user=stranger).exists()
    assert not StreakState.objects.filter(user=stranger).exists()


def grant(user: Any, *codenames: str) -> None:
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_staff_of_no_organization_see_no_user(db: Any, alice: EndUser) -> None:
    from django.contrib.auth import get_user_model

    loner = get_user_model().objects.create_user(username="loner", is_staff=True)
    grant(loner, "view_enduser", "change_enduser")
    client = logged_in(loner)

    response = client.get(admin_url(EndUser))
    assert list(response.context["cl"].result_list) == []
    assert client.get(admin_url(EndUser, "change", alice.pk)).status_code == 302
    for url in action_urls(alice):
        assert client.get(url).status_code == 404, url
        assert client.post(url).status_code == 404, url
    assert streak_of(alice).length == 4


def test_staff_without_change_permission_cannot_act(
    org: OrganizationWithKey, alice: EndUser
) -> None:
    viewer = org_staff(org, username="viewer")
    grant(viewer, "view_enduser")
    client = logged_in(viewer)

    content = page(client, alice)
    assert "Reset…" not in content
    assert "Complete…" not in content
    for url in action_urls(alice):
        assert client.get(url).status_code == 403, url
        assert client.post(url).status_code == 403, url
    assert streak_of(alice).length == 4

    grant(viewer, "change_enduser")
    client = logged_in(viewer)
    assert action_url("streak_reset", alice) in page(client, alice)
    response, _ = post(client, action_url("streak_reset", alice))
    assert_back_on_the_page(response, alice)
    assert streak_of(alice).length == 0


# --- queries -------------------------------------------------------------------------------


def count_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_page_queries_do_not_grow_with_the_users_history(
    staff_client: Client,
    api_client: Any,
    clock: Any,
    tenant: Tenant,
    alice: EndUser,
    django_assert_max_num_queries: Any,
) -> None:
    url = admin_url(EndUser, "change", alice.pk)
    staff_client.get(url)  # fills the per-process caches (content types, tenant config)
    few = count_queries(staff_client, url)

    # Months of daily writing, another metric, more completions, awards and messages.
    MetricFactory(tenant=tenant, key="pages")
    bump(tenant)
    for days_ago in range(8, 70):
        send(api_client, clock, "alice", TODAY - days_ago * DAY)
    response = api_client.post("/v1/metrics/pages/event", {"user": {"id": "alice"}, "value": 3})
    assert response.status_code == 201, response.content
    staff_client.get(url)  # the new metric changed the configuration: snapshots reload once

    many = count_queries(staff_client, url)
    # One more metric charts with two more queries; the history itself costs nothing.
    assert many == few + 2
    # About half of them are the folded sections' (apps.users.admin.END_USER_SECTIONS_SUPERSEDED).
    with django_assert_max_num_queries(34):
        staff_client.get(url)


# --- consistency after staff's changes (issue 27 item 4) --------------------------------------
# A restored streak's calendar says what its header says, through the API's history too, and
# a points system archived under a user below its top level does not call their level the top
# one.


def calendar(content: str) -> tuple[int, dict[str, tuple[str, str]]]:
    """The streak card's header length, and its calendar by day: (status, hover title)."""
    streak = squash(card(content, "streak"))
    header = re.search(r'<div class="user-big">(\d+)</div>', streak)
    assert header, streak
    cells = re.findall(r'<span class="user-cal (user-cal-[a-z-]+)[^"]*" title="([^"]*)"', streak)
    return int(header.group(1)), {title.split(":")[0]: (status, title) for status, title in cells}


def test_a_streak_restored_the_day_it_was_reset_shows_in_the_calendar(
    staff_client: Client, alice: EndUser
) -> None:
    post(staff_client, action_url("streak_reset", alice))
    _, days = calendar(page(staff_client, alice))
    assert days["Thu 12 Mar 2026"][0] == "user-cal-reset"

    _, texts = post(staff_client, action_url("streak_restore", alice))
    assert texts == ["Restored alice's streak to 4 days."]

    length, days = calendar(page(staff_client, alice))
    assert length == 4
    # Today reached 4 before the reset; the restore brought it back: no longer a reset at 0.
    status, title = days["Thu 12 Mar 2026"]
    assert status == "user-cal-extended"
    assert title.endswith("streak 4")


def test_a_restored_streak_is_carried_through_the_periods_it_missed(
    staff_client: Client, api_client: Any, clock: Any, tenant: Tenant, setup: dict[str, Any]
) -> None:
    # Carol wrote from Monday 2 to Friday 6 March (5 days), then nothing: lost on the 7th.
    for days_ago in range(10, 5, -1):
        send(api_client, clock, "carol", TODAY - days_ago * DAY)
    carol = EndUser.objects.get(tenant=tenant, external_id="carol")
    length, days = calendar(page(staff_client, carol))
    assert length == 0
    assert days["Sat 07 Mar 2026"][0] == "user-cal-missed"

    _, texts = post(staff_client, action_url("streak_restore", carol))
    assert texts == ["Restored carol's streak to 5 days."]

    length, days = calendar(page(staff_client, carol))
    assert length == 5
    assert days["Fri 06 Mar 2026"] == ("user-cal-extended", "Fri 06 Mar 2026: extended, streak 5")
    for day in ("Sat 07", "Sun 08", "Mon 09", "Tue 10", "Wed 11"):
        assert days[f"{day} Mar 2026"] == (
            "user-cal-restored",
            f"{day} Mar 2026: restored, streak 5",
        )
    # Today is still to be extended, from the restored length, as the header says.
    assert days["Thu 12 Mar 2026"] == ("user-cal-pending", "Thu 12 Mar 2026: in progress, streak 5")
    assert "restored" in squash(card(page(staff_client, carol), "streak"))  # in the legend

    # The application API's history tells the same story, in the same shape.
    response = api_client.get("/v1/users/carol/streak", {"historyPeriods": 7})
    assert response.status_code == 200
    body = response.json()
    assert body["length"] == 5
    assert [p["length"] for p in body["streakHistory"]] == [5] * 7

    # Carol writes today: the streak and the calendar go on from 5.
    send(api_client, clock, "carol", TODAY)
    length, days = calendar(page(staff_client, carol))
    assert length == 6
    assert days["Thu 12 Mar 2026"] == ("user-cal-extended", "Thu 12 Mar 2026: extended, streak 6")


def test_a_reset_after_a_restore_stands(
    staff_client: Client, api_client: Any, alice: EndUser
) -> None:
    post(staff_client, action_url("streak_reset", alice))
    post(staff_client, action_url("streak_restore", alice))
    post(staff_client, action_url("streak_reset", alice))

    length, days = calendar(page(staff_client, alice))
    assert length == 0
    assert days["Thu 12 Mar 2026"] == ("user-cal-reset", "Thu 12 Mar 2026: reset, streak 0")
    history = api_client.get("/v1/users/alice/streak", {"historyPeriods": 1}).json()
    assert history["streakHistory"][-1]["length"] == 0
    assert "resetAt" in history["streakHistory"][-1]


def points_row(content: str, system: str = "XP") -> str:
    points = squash(card(content, "points"))
    row = re.search(rf"<tr><td><a [^>]*>{system}</a>.*?</tr>", points)
    assert row, points
    return row.group(0)


def test_an_archived_system_does_not_call_a_lower_level_the_top_one(
    staff_client: Client, tenant: Tenant, alice: EndUser, setup: dict[str, Any]
) -> None:
    # 60 XP: Bronze (from 10), on the way to Silver (at 100).
    row = points_row(page(staff_client, alice))
    assert "<td>Bronze</td>" in row
    assert "Silver at 100" in row

    configuration.points_system_archive(tenant, setup["system"], confirm="xp")

    row = points_row(page(staff_client, alice))
    assert "archived" in row
    assert "<td>Bronze</td>" in row  # the level she reached, kept with the ledger
    assert "top level" not in row
    assert "no more levels: the system is archived" in row


def test_the_top_level_is_still_called_so(
    staff_client: Client, api_client: Any, clock: Any, tenant: Tenant, setup: dict[str, Any]
) -> None:
    # Twenty events of 5 XP each: 100, Silver, the top level.
    for minutes in range(20):
        send(api_client, clock, "tess", TODAY - dt.timedelta(minutes=minutes))
    tess = EndUser.objects.get(tenant=tenant, external_id="tess")

    row = points_row(page(staff_client, tess))
    assert "<td>Silver</td>" in row
    assert "top level" in row
