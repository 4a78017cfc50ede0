"""Support's views: the streaks lost in the last 7 days with a one-click restore, the end-user
list's level, streak and last-active columns, and the delivery log's preview, cancel and send
now. Data is made through the API and the services; each view is scoped to the selected tenant,
refuses another organization's staff and costs the same queries whatever its length."""

import datetime as dt
import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.core import mail
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from apps.notifications.choices import MessageStatus, NotificationType
from apps.notifications.context import preview_payload
from apps.notifications.models import EmailTemplate, Message
from apps.points import configuration
from apps.points.domain import PointsLevelSettings, PointsSystemSettings, PointsTriggerSettings
from apps.streaks.configuration import streak_settings_update
from apps.streaks.domain import TenantStreakSettings
from apps.streaks.jobs import streaks_settle_due
from apps.streaks.models import StreakLoss, StreakState
from apps.users.models import EndUser
from tests.dashboard.conftest import admin_url, message_texts, org_staff, switch_tenant
from tests.factories import MetricFactory, OrganizationWithKey, bump, event_body
from tests.notifications.conftest import activate, committed

# Every request runs at this instant, a Thursday, unless a test moves the clock.
TODAY = dt.datetime(2026, 3, 12, 12, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
DAILY = TenantStreakSettings(frequency="daily", conditions=[("words", 1)])


@pytest.fixture(autouse=True)
def clock() -> Iterator[Any]:
    with time_machine.travel(TODAY, tick=False) as traveller:
        yield traveller


@pytest.fixture
def streaks(tenant: Tenant, metric: Metric) -> None:
    streak_settings_update(tenant, DAILY)


def send(api_client: Any, clock: Any, user_id: str, when: dt.datetime, **fields: Any) -> None:
    clock.move_to(when)
    response = api_client.post("/v1/metrics/words/event", event_body(user_id, 2, **fields))
    assert response.status_code == 201, response.content
    clock.move_to(TODAY)


def lose(api_client: Any, clock: Any, user_id: str, days: int, missed: dt.datetime) -> None:
    """A streak of `days` days ending the day before `missed`, then nothing on `missed`."""
    for back in range(days, 0, -1):
        send(api_client, clock, user_id, missed - back * DAY)


def text(response: Any) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


# --- streaks lost ----------------------------------------------------------------------------


def test_the_event_after_a_missed_day_records_the_loss_with_its_length_and_moment(
    api_client: Any, clock: Any, tenant: Tenant, streaks: None
) -> None:
    # Alice (in Paris) wrote on Sunday, Monday and Tuesday, not on Wednesday.
    lose(api_client, clock, "alice", 3, TODAY - DAY)
    EndUser.objects.filter(external_id="alice").update(tz="Europe/Paris")
    StreakState.objects.filter(user__external_id="alice").update(tz="Europe/Paris")
    assert not StreakLoss.objects.exists()  # nothing settled it yet
    send(api_client, clock, "alice", TODAY, tz="Europe/Paris")
    loss = StreakLoss.objects.get()
    assert (loss.length, loss.frequency, loss.missed_period) == (3, "daily", dt.date(2026, 3, 11))
    # Wednesday ended at midnight in Paris, 23:00 UTC.
    assert loss.lost_at == dt.datetime(2026, 3, 11, 23, tzinfo=dt.UTC)
    assert loss.tenant == tenant
    assert loss.restored_at is None
    assert StreakState.objects.get(user__external_id="alice").length == 1


def test_the_settle_job_records_a_loss_once(
    api_client: Any, clock: Any, tenant: Tenant, streaks: None
) -> None:
    lose(api_client, clock, "bob", 2, TODAY - DAY)
    streaks_settle_due(TODAY)
    streaks_settle_due(TODAY + dt.timedelta(minutes=5))  # a second run finds nothing due
    send(api_client, clock, "bob", TODAY)  # and the next event settles nothing again
    loss = StreakLoss.objects.get()
    assert (loss.length, loss.missed_period) == (2, dt.date(2026, 3, 11))
    assert loss.lost_at == dt.datetime(2026, 3, 12, tzinfo=dt.UTC)


def test_a_streak_kept_by_nothing_but_never_lost_records_nothing(
    api_client: Any, clock: Any, streaks: None
) -> None:
    lose(api_client, clock, "carol", 3, TODAY)  # wrote until yesterday: alive today
    send(api_client, clock, "carol", TODAY)
    streaks_settle_due(TODAY + 2 * DAY)  # then lost: once
    assert list(StreakLoss.objects.values_list("length", "missed_period")) == [
        (4, dt.date(2026, 3, 13))
    ]


def losses_url() -> str:
    return admin_url(StreakLoss)


def test_the_list_shows_the_selected_tenants_losses_of_the_last_seven_days(
    api_client: Any,
    clock: Any,
    staff_client: Client,
    tenant: Tenant,
    other_tenant: Tenant,
    streaks: None,
) -> None:
    lose(api_client, clock, "alice", 3, TODAY - DAY)
    lose(api_client, clock, "old", 5, TODAY - 9 * DAY)
    streaks_settle_due(TODAY)
    send(api_client, clock, "alice", TODAY)  # a new streak of 1 since
    other = EndUser.objects.create(tenant=other_tenant, external_id="elsewhere")
    StreakLoss.objects.create(
        tenant=other_tenant,
        user=other,
        frequency="daily",
        length=9,
        missed_period=TODAY.date(),
        lost_at=TODAY,
    )
    switch_tenant(staff_client, tenant)
    response = staff_client.get(losses_url())
    assert response.status_code == 200
    page = text(response)
    assert "Streaks lost in the last 7 days" in page
    rows = response.context["cl"].result_list
    assert [(r.user.external_id, r.length) for r in rows] == [("alice", 3)]
    assert "3 days" in page
    assert "1 day" in page
    assert "March 12, 2026, midnight UTC" in page
    assert "elsewhere" not in page
    assert re.search(r"\bold\b", page) is None  # the user "old" (not the theme's "unfold")


def restore_url(user: EndUser) -> str:
    return reverse("admin:users_enduser_streak_restore", args=[user.pk])


def test_one_click_restores_through_the_end_user_action_and_comes_back_to_the_list(
    api_client: Any, clock: Any, staff_client: Client, tenant: Tenant, streaks: None
) -> None:
    lose(api_client, clock, "alice", 3, TODAY - DAY)
    streaks_settle_due(TODAY)
    switch_tenant(staff_client, tenant)
    listed = staff_client.get(losses_url()).content.decode()
    alice = EndUser.objects.get(external_id="alice")
    # The button posts the list's form (its CSRF token) to the end-user page's action.
    assert f'formaction="{restore_url(alice)}"' in listed
    assert 'name="csrfmiddlewaretoken"' in listed
    back = losses_url() + "?q=alice"
    response = staff_client.post(restore_url(alice), {"next": back})
    assert response.status_code == 302
    assert response["Location"] == back
    assert message_texts(response) == ["Restored alice's streak to 3 days."]
    assert StreakState.objects.get(user=alice).length == 3
    assert StreakLoss.objects.get().restored_at == TODAY
    assert LogEntry.objects.get().change_message == "Restored alice's streak to 3 days."
    listed_again = staff_client.get(losses_url()).content.decode()
    assert 'title="March 12, 2026, noon UTC">restored' in listed_again
    assert "formaction" not in listed_again


def test_the_restore_goes_back_to_the_user_page_for_an_address_elsewhere(
    api_client: Any, clock: Any, staff_client: Client, tenant: Tenant, streaks: None
) -> None:
    lose(api_client, clock, "alice", 2, TODAY - DAY)
    switch_tenant(staff_client, tenant)
    alice = EndUser.objects.get(external_id="alice")
    response = staff_client.post(restore_url(alice), {"next": "https://evil.example/"})
    assert response["Location"] == admin_url(EndUser, "change", alice.pk)


def test_a_streak_back_at_its_length_offers_no_restore(
    api_client: Any, clock: Any, staff_client: Client, tenant: Tenant, streaks: None
) -> None:
    lose(api_client, clock, "alice", 1, TODAY - DAY)
    send(api_client, clock, "alice", TODAY)  # 1 again, as long as the streak lost
    switch_tenant(staff_client, tenant)
    response = staff_client.get(losses_url())
    assert "back at its length" in text(response)
    assert "formaction" not in response.content.decode()


def test_staff_without_the_end_user_change_permission_see_no_restore_button(
    api_client: Any, clock: Any, org: OrganizationWithKey, streaks: None
) -> None:
    lose(api_client, clock, "alice", 2, TODAY - DAY)
    streaks_settle_due(TODAY)
    viewer = org_staff(org, username="viewer")
    viewer.user_permissions.add(Permission.objects.get(codename="view_streakloss"))
    client = Client()
    client.force_login(viewer)
    response = client.get(losses_url())
    assert response.status_code == 200
    assert len(response.context["cl"].result_list) == 1
    assert "formaction" not in response.content.decode()


def test_another_organizations_staff_see_none_of_its_losses_and_cannot_restore(
    api_client: Any, clock: Any, streaks: None
) -> None:
    lose(api_client, clock, "alice", 2, TODAY - DAY)
    streaks_settle_due(TODAY)
    alice = EndUser.objects.get(external_id="alice")
    rival = OrganizationWithKey("Rival")
    staff = org_staff(rival, username="rival")
    staff.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_streakloss", "change_enduser"])
    )
    client = Client()
    client.force_login(staff)
    response = client.get(losses_url())
    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == []
    assert client.post(restore_url(alice), {"next": losses_url()}).status_code == 404
    assert StreakState.objects.get(user=alice).length == 0
    assert StreakLoss.objects.get().restored_at is None


def test_the_list_costs_the_same_queries_for_two_losses_or_twenty(
    staff_client: Client, tenant: Tenant, metric: Metric, streaks: None
) -> None:
    def losses(first: int, count: int) -> None:
        for n in range(first, first + count):
            user = EndUser.objects.create(tenant=tenant, external_id=f"user-{n}")
            StreakState.objects.create(tenant=tenant, user=user, frequency="daily", length=1)
            StreakLoss.objects.create(
                tenant=tenant,
                user=user,
                frequency="daily",
                length=n + 2,
                missed_period=TODAY.date() - DAY,
                lost_at=TODAY - dt.timedelta(hours=n),
            )

    switch_tenant(staff_client, tenant)
    losses(0, 2)
    staff_client.get(losses_url())  # warm per-process caches
    with CaptureQueriesContext(connection) as few:
        staff_client.get(losses_url())
    losses(2, 18)
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(losses_url())
    assert len(response.context["cl"].result_list) == 20
    assert len(many) == len(few)


# --- the end-user list -----------------------------------------------------------------------


@pytest.fixture
def xp(tenant: Tenant, metric: Metric) -> None:
    configuration.points_system_create(
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
            )
        ],
    )


def test_the_user_list_shows_level_streak_and_the_latest_event(
    api_client: Any, clock: Any, staff_client: Client, tenant: Tenant, streaks: None, xp: None
) -> None:
    send(api_client, clock, "alice", TODAY - DAY)
    send(api_client, clock, "alice", TODAY - dt.timedelta(hours=4))  # 08:00, first of the day
    send(api_client, clock, "alice", TODAY - dt.timedelta(minutes=30))  # 11:30, the latest
    send(api_client, clock, "bob", TODAY - 3 * DAY)
    switch_tenant(staff_client, tenant)
    response = staff_client.get(admin_url(EndUser))
    page = text(response)
    for header in ("Level", "Streak", "Last active"):
        assert f"{header}" in page
    rows = {
        cells[0]: cells
        for cells in (
            [text_of(td) for td in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", response.content.decode(), re.S)[1:]
        )
    }
    assert rows["alice"][3:6] == [
        "Bronze",
        "2 days",
        "March 12, 2026, 11:30 a.m. UTC (30 minutes ago)",
    ]
    assert rows["bob"][3:6] == ["Bronze", "0 days", "March 9, 2026, noon UTC (3 days ago)"]
    # The user page says the same.
    alice = EndUser.objects.get(external_id="alice")
    assert alice.last_active_at == TODAY - dt.timedelta(hours=4)  # what is stored: 08:00
    user_page = text(staff_client.get(admin_url(EndUser, "change", alice.pk)))
    assert "Last active March 12, 2026, 11:30 a.m. UTC (30 minutes ago)" in user_page


def text_of(cell: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", cell))).strip()


def test_each_system_with_levels_is_named_when_there_are_several(
    api_client: Any, clock: Any, staff_client: Client, tenant: Tenant, xp: None
) -> None:
    configuration.points_system_create(
        tenant,
        PointsSystemSettings(key="coins", name="Coins"),
        levels=[PointsLevelSettings(key="rich", name="Rich", points=1000)],
    )
    send(api_client, clock, "alice", TODAY)
    switch_tenant(staff_client, tenant)
    assert "XP: Bronze · Coins: none yet" in text(staff_client.get(admin_url(EndUser)))


def test_the_user_list_costs_the_same_queries_for_few_users_or_many(
    api_client: Any, clock: Any, staff_client: Client, tenant: Tenant, streaks: None, xp: None
) -> None:
    for n in range(2):
        send(api_client, clock, f"user-{n}", TODAY - DAY)
    switch_tenant(staff_client, tenant)
    staff_client.get(admin_url(EndUser))  # warm per-process caches
    with CaptureQueriesContext(connection) as few:
        staff_client.get(admin_url(EndUser))
    for n in range(2, 30):
        send(api_client, clock, f"user-{n}", TODAY - DAY * (n % 3))
    with CaptureQueriesContext(connection) as many:
        response = staff_client.get(admin_url(EndUser))
    assert len(response.context["cl"].result_list) == 30
    assert len(many) == len(few)


# --- the delivery log ------------------------------------------------------------------------


@pytest.fixture
def recap(api_client: Any, clock: Any, tenant: Tenant, metric: Metric) -> Message:
    """A recap email to Alice, queued for tomorrow, as the recap job records it."""
    activate(api_client, "recap")
    send(api_client, clock, "alice", TODAY - DAY, email="alice@example.com")
    alice = EndUser.objects.get(external_id="alice")
    now = TODAY
    return Message.objects.create(
        tenant=tenant,
        user=alice,
        type=NotificationType.RECAP,
        dedupe_key="recap:test",
        payload=preview_payload(tenant, alice, NotificationType.RECAP, now),
        template=EmailTemplate.objects.get(tenant=tenant, type=NotificationType.RECAP),
        send_at=TODAY + DAY,
        recipient="alice@example.com",
    )


def message_url(message: Message, view: str = "change") -> str:
    return reverse(f"admin:notifications_message_{view}", args=[message.pk])


def test_the_log_shows_the_user_id_and_the_message_rendered(
    staff_client: Client, tenant: Tenant, recap: Message
) -> None:
    switch_tenant(staff_client, tenant)
    listed = staff_client.get(admin_url(Message))
    assert "user id" in text(listed).lower()
    assert "alice" in text(listed)
    response = staff_client.get(message_url(recap))
    assert response.status_code == 200
    preview = response.context["preview"]
    assert preview.email is not None
    assert preview.refusal == ""
    content = response.content.decode()
    # The tenant-written HTML stays inside a sandboxed frame; the preference links are not links.
    assert '<iframe sandbox srcdoc="' in content
    assert "#preview" in preview.email.html
    assert preview.email.subject in text(response)
    assert "Send now" in content
    assert "Cancel the message" in content
    recap.refresh_from_db()
    assert recap.status == MessageStatus.QUEUED  # looking changed nothing


def test_a_message_that_would_not_be_sent_says_why(
    staff_client: Client, tenant: Tenant, recap: Message
) -> None:
    EndUser.objects.filter(pk=recap.user_id).update(subscribe_to_emails=False)
    switch_tenant(staff_client, tenant)
    response = staff_client.get(message_url(recap))
    assert response.context["preview"].email is None
    assert "Would not be sent now:" in text(response)


def test_cancel_skips_a_queued_message_with_the_reason(
    staff_client: Client, tenant: Tenant, recap: Message
) -> None:
    switch_tenant(staff_client, tenant)
    response = staff_client.post(message_url(recap, "cancel"), {"reason": "asked by the user"})
    assert response.status_code == 302
    assert response["Location"] == message_url(recap)
    recap.refresh_from_db()
    assert (recap.status, recap.error) == (MessageStatus.SKIPPED, "asked by the user")
    assert message_texts(response) == ["Cancelled the recap message to alice."]
    assert LogEntry.objects.get().object_id == str(recap.pk)
    page = staff_client.get(message_url(recap))
    assert "this one is skipped" in text(page)
    assert "Cancel the message" not in page.content.decode()


def test_cancel_needs_a_reason(staff_client: Client, tenant: Tenant, recap: Message) -> None:
    switch_tenant(staff_client, tenant)
    response = staff_client.post(message_url(recap, "cancel"), {"reason": "  "})
    assert message_texts(response) == ["Reason: say why it is cancelled"]
    recap.refresh_from_db()
    assert recap.status == MessageStatus.QUEUED


def test_send_now_makes_it_due_and_hands_it_to_delivery(
    staff_client: Client, tenant: Tenant, recap: Message
) -> None:
    switch_tenant(staff_client, tenant)
    with committed():
        response = staff_client.post(message_url(recap, "send_now"))
    assert response.status_code == 302
    assert message_texts(response) == ["The recap message to alice is sent now."]
    recap.refresh_from_db()
    assert recap.status == MessageStatus.SENT
    assert recap.sent_at == TODAY
    assert [m.to for m in mail.outbox] == [["alice@example.com"]]


@pytest.mark.parametrize(
    "status", [MessageStatus.SENT, MessageStatus.SENDING, MessageStatus.SKIPPED]
)
def test_the_actions_refuse_a_message_that_no_longer_waits(
    staff_client: Client, tenant: Tenant, recap: Message, status: str
) -> None:
    Message.objects.filter(pk=recap.pk).update(status=status)
    switch_tenant(staff_client, tenant)
    for view, data in (("cancel", {"reason": "late"}), ("send_now", {})):
        response = staff_client.post(message_url(recap, view), data)
        assert message_texts(response)[-1] == (
            f"The message is {status}: only a queued or retrying message can be cancelled or "
            "sent now"
        )
    recap.refresh_from_db()
    assert (recap.status, recap.send_at, recap.error) == (status, TODAY + DAY, "")
    assert not LogEntry.objects.exists()


def test_a_retrying_message_can_be_sent_now(
    staff_client: Client, tenant: Tenant, recap: Message
) -> None:
    Message.objects.filter(pk=recap.pk).update(status=MessageStatus.RETRYING, attempts=1)
    switch_tenant(staff_client, tenant)
    staff_client.post(message_url(recap, "send_now"))
    recap.refresh_from_db()
    assert (recap.status, recap.send_at) == (MessageStatus.RETRYING, TODAY)


def test_the_actions_are_posts_with_a_csrf_token(tenant: Tenant, recap: Message) -> None:
    user = org_staff(OrganizationWithKey("Nobody"), username="x")  # no permission needed to 403
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(message_url(recap, "cancel"), {"reason": "r"}).status_code == 403
    staff = Client()
    staff.force_login(user)
    assert staff.get(message_url(recap, "send_now")).status_code == 405
    recap.refresh_from_db()
    assert recap.status == MessageStatus.QUEUED


def test_another_organizations_staff_cannot_act_on_its_messages(recap: Message) -> None:
    rival = org_staff(OrganizationWithKey("Rival"), username="rival")
    rival.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_message", "change_message"])
    )
    client = Client()
    client.force_login(rival)
    assert client.get(message_url(recap)).status_code in (302, 404)
    assert client.post(message_url(recap, "cancel"), {"reason": "r"}).status_code == 404
    assert client.post(message_url(recap, "send_now")).status_code == 404
    recap.refresh_from_db()
    assert (recap.status, recap.send_at) == (MessageStatus.QUEUED, TODAY + DAY)


def test_staff_who_may_only_look_cannot_act(org: OrganizationWithKey, recap: Message) -> None:
    viewer = org_staff(org, username="viewer")
    viewer.user_permissions.add(Permission.objects.get(codename="view_message"))
    client = Client()
    client.force_login(viewer)
    page = client.get(message_url(recap))
    assert page.status_code == 200
    assert "You may not change messages." in text(page)
    assert client.post(message_url(recap, "cancel"), {"reason": "r"}).status_code == 403
    recap.refresh_from_db()
    assert recap.status == MessageStatus.QUEUED


def test_a_metric_without_events_keeps_last_active_at_never(
    staff_client: Client, tenant: Tenant
) -> None:
    MetricFactory(tenant=tenant, key="other")
    bump(tenant)
    EndUser.objects.create(tenant=tenant, external_id="quiet")
    switch_tenant(staff_client, tenant)
    assert "never" in text(staff_client.get(admin_url(EndUser)))
