"""Support's views in the browser, at a laptop's width (1280 px) and a phone's (390 px): the
streaks lost in the last 7 days and a one-click restore, the end-user list with level, streak
and last active, and the delivery log's message page with its preview, "Send now" and
"Cancel". Screenshots of each are saved (conftest.py)."""

import datetime as dt
from pathlib import Path
from typing import Any

import time_machine
from django.core import mail
from django.utils import timezone

from apps.metrics.configuration import metric_create
from apps.metrics.domain import MetricSettings
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
from tests.browser.conftest import HEIGHT, SCREENSHOTS, WIDTH, Staff
from tests.conftest import Client
from tests.factories import OrganizationWithKey, event_body
from tests.notifications.conftest import activate

WIDTHS = (1280, 390)


def shot_at(staff: Staff, name: str, width: int, full_page: bool = True) -> Path:
    """A screenshot with the window `width` pixels wide: of the whole page, or of what the
    window shows from the top."""
    driver = staff.driver
    driver.set_window_size(width, HEIGHT)
    height, bars = driver.execute_script(
        "return [document.documentElement.scrollHeight, window.outerHeight - window.innerHeight]"
    )
    if full_page:
        driver.set_window_size(width, max(HEIGHT, min(int(height) + int(bars), 6000)))
    else:
        driver.execute_script("window.scrollTo(0, 0)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{staff.test_name}-{len(staff.shots) + 1:02d}-{name}-{width}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(WIDTH, HEIGHT)
    staff.shots.append(path)
    return path


def page_fits(staff: Staff, width: int) -> bool:
    """At `width`, the page itself does not scroll sideways (a wide table scrolls in its box)."""
    staff.driver.set_window_size(width, HEIGHT)
    fits = staff.no_horizontal_scroll()
    staff.driver.set_window_size(WIDTH, HEIGHT)
    return fits


def send(client: Client, user: str, when: dt.datetime, **fields: Any) -> None:
    with time_machine.travel(when, tick=False):
        response = client.post("/v1/metrics/words/event", event_body(user, 2, **fields))
    assert response.status_code == 201, response.content


def world() -> tuple[OrganizationWithKey, Client]:
    """Acme: a daily streak and XP with levels on words. Alice wrote for four days until the
    day before yesterday and lost her streak; Bob writes every day; Chloé lost hers last week."""
    org = OrganizationWithKey("Acme")
    tenant = org.tenant
    metric = metric_create(
        tenant, MetricSettings(name="Words", key="words", unit_type="number", units="words")
    )
    streak_settings_update(
        tenant, TenantStreakSettings(frequency="daily", conditions=[("words", 1)])
    )
    configuration.points_system_create(
        tenant,
        PointsSystemSettings(key="xp", name="XP"),
        levels=[
            PointsLevelSettings(key="bronze", name="Bronze", points=10),
            PointsLevelSettings(key="silver", name="Silver", points=50),
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
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    now = timezone.now()
    day = dt.timedelta(days=1)
    for back in (6, 5, 4, 3):
        send(client, "alice", now - back * day, name="Alice Liddell", email="alice@example.com")
    for back in (4, 3, 2, 1, 0):
        bob = {"name": "Bob", "email": "bob@example.com"}
        send(client, "bob", now - back * day - dt.timedelta(hours=1), **bob)
    send(client, "bob", now - dt.timedelta(minutes=5))
    for back in (12, 11, 10, 9, 8, 7, 6):
        send(client, "chloe", now - back * day, name="Chloé Zhao")
    streaks_settle_due(now)
    return org, client


def test_support_finds_lost_streaks_and_restores_one(staff: Staff) -> None:
    world()
    alice = EndUser.objects.get(external_id="alice")
    assert StreakLoss.objects.filter(user__external_id__in=["alice", "chloe"]).count() == 2

    staff.go("/dashboard/streaks/streakloss/")
    assert "Streaks lost in the last 7 days" in staff.text("#page-title")
    rows = [row.text for row in staff.all("#result_list tbody tr")]
    assert len(rows) == 2, rows
    assert rows[0].startswith("alice 4 days"), rows
    assert rows[1].startswith("chloe 7 days"), rows
    for width in WIDTHS:
        assert page_fits(staff, width), width
        shot_at(staff, "streaks-lost", width)

    # One click: the user page's restore action, and back to the list.
    staff.submit(f'button[formaction="/dashboard/users/enduser/{alice.pk}/streak/restore/"]')
    assert staff.messages() == ["Restored alice's streak to 4 days."]
    assert "/dashboard/streaks/streakloss/" in staff.driver.current_url
    assert StreakState.objects.get(user=alice).length == 4
    first = staff.all("#result_list tbody tr")[0].text
    assert "restored" in first, first
    for width in WIDTHS:
        shot_at(staff, "streak-restored", width)

    # Her page's calendar carries the streak through the days she missed, as its header says.
    staff.go(f"/dashboard/users/enduser/{alice.pk}/change/")
    assert staff.text("#user-streak .user-big") == "4"
    restored = staff.all("#user-streak .user-cal-grid .user-cal-restored")
    assert restored, staff.text("#user-streak")
    assert all(cell.get_attribute("title").endswith("streak 4") for cell in restored)
    assert not staff.all("#user-streak .user-cal-grid .user-cal-missed")
    shot_at(staff, "user-page-restored-calendar", 1280)


def test_the_user_list_shows_level_streak_and_last_active(staff: Staff) -> None:
    world()
    staff.go("/dashboard/users/enduser/")
    headers = staff.text("#result_list thead")
    for header in ("LEVEL", "STREAK", "LAST ACTIVE"):
        assert header in headers.upper(), headers
    rows = {row.text.split()[0]: row.text for row in staff.all("#result_list tbody tr")}
    assert "Bronze" in rows["bob"] or "Silver" in rows["bob"], rows["bob"]
    assert "5 days" in rows["bob"], rows["bob"]
    assert "5 minutes ago" in rows["bob"], rows["bob"]  # the latest event, not the day's first
    for width in WIDTHS:
        assert page_fits(staff, width), width
        shot_at(staff, "end-users", width)
    bob = EndUser.objects.get(external_id="bob")
    staff.go(f"/dashboard/users/enduser/{bob.pk}/change/")
    assert "5 minutes ago" in staff.text("#user-profile")
    shot_at(staff, "user-page-profile", 1280)


def test_the_delivery_log_previews_cancels_and_sends_now(staff: Staff) -> None:
    org, client = world()
    tenant = org.tenant
    activate(client, "recap")
    template = EmailTemplate.objects.get(tenant=tenant, type=NotificationType.RECAP)
    now = timezone.now()

    def queued(external_id: str) -> Message:
        user = EndUser.objects.get(external_id=external_id)
        return Message.objects.create(
            tenant=tenant,
            user=user,
            type=NotificationType.RECAP,
            dedupe_key=f"recap:{external_id}",
            payload=preview_payload(tenant, user, NotificationType.RECAP, now),
            template=template,
            send_at=now + dt.timedelta(hours=5),
            recipient=f"{external_id}@example.com",
        )

    to_alice, to_bob = queued("alice"), queued("bob")
    staff.go("/dashboard/notifications/message/")
    assert "USER ID" in staff.text("#result_list thead").upper()
    assert "alice" in staff.text("#result_list")
    for width in WIDTHS:
        assert page_fits(staff, width), width
        shot_at(staff, "delivery-log", width)

    staff.go(f"/dashboard/notifications/message/{to_alice.pk}/change/")
    assert "Preview" in staff.text("#message-preview")
    frame = staff.find("#message-preview iframe")
    assert frame.get_attribute("sandbox") == ""
    for width in WIDTHS:
        assert page_fits(staff, width), width
        shot_at(staff, "message-queued", width)
    shot_at(staff, "message-queued-top", 390, full_page=False)  # what a phone shows first

    staff.fill("reason", "Alice asked for no more recaps")
    staff.submit('#message-actions input[value="Cancel the message"]')
    assert staff.messages() == ["Cancelled the recap message to alice."]
    to_alice.refresh_from_db()
    assert (to_alice.status, to_alice.error) == (
        MessageStatus.SKIPPED,
        "Alice asked for no more recaps",
    )
    assert "this one is skipped" in staff.text("#message-actions")
    for width in WIDTHS:
        shot_at(staff, "message-cancelled", width)

    staff.go(f"/dashboard/notifications/message/{to_bob.pk}/change/")
    staff.submit('#message-actions input[value="Send now"]')
    assert staff.messages() == ["The recap message to bob is sent now."]
    to_bob.refresh_from_db()
    assert to_bob.status == MessageStatus.SENT
    assert [m.to for m in mail.outbox][-1][0].endswith("<bob@example.com>")
    for width in WIDTHS:
        shot_at(staff, "message-sent-now", width)
