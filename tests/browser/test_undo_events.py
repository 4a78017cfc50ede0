"""Undoing events in the browser: on a user's page, staff open "Undo events…", tick two of the
user's events, give a reason, and get the user's page back with the totals and points taken
back and the undone events listed with who and why. Screenshots of each step (conftest.py)."""

import datetime as dt
from decimal import Decimal

import time_machine

from apps.metrics.configuration import metric_create
from apps.metrics.domain import MetricSettings
from apps.metrics.models import MetricTotal, UndoneEvent
from apps.pipeline.services import EventInput, event_process
from apps.points.configuration import points_system_create
from apps.points.domain import PointsSystemSettings, PointsTriggerSettings
from apps.points.models import PointsTotal
from apps.users.domain import UserFields
from apps.users.models import EndUser
from tests.browser.conftest import Staff
from tests.factories import OrganizationWithKey

START = dt.datetime(2026, 11, 23, 9, 0, tzinfo=dt.UTC)


def test_staff_undo_selected_events_with_a_reason(staff: Staff) -> None:
    org = OrganizationWithKey("Acme")
    words = metric_create(
        org.tenant,
        MetricSettings(name="Words written", key="words", unit_type="number", units="words"),
    )
    points_system_create(
        org.tenant,
        PointsSystemSettings(key="xp", name="XP"),
        triggers=[
            PointsTriggerSettings(
                type="metric",
                points=1,
                status="active",
                metric_id=str(words.public_id),
                metric_threshold=1,
            )
        ],
    )
    values = [120, 5000, 80, 4000, 150]  # two absurd ones
    for hour, value in enumerate(values):
        with time_machine.travel(START + dt.timedelta(hours=hour), tick=False):
            data = EventInput("words", "bob", UserFields(name="Bob Stone"), Decimal(value), {})
            event_process(org.tenant, data)
    bob = EndUser.objects.get(external_id="bob")
    assert MetricTotal.objects.get(user=bob).total == 9350

    staff.go(f"/dashboard/users/enduser/{bob.pk}/change/")
    assert "No event of this user was undone." in staff.text("#user-undone")
    staff.click("#user-undo-events")
    labels = [e.text for e in staff.all('input[name="events"]')]
    boxes = staff.all('#id_events input[name="events"]')
    assert len(boxes) == 5, labels
    # The latest first: 150, 4000, 80, 5000, 120.
    texts = [b.find_element("xpath", "..").text for b in boxes]
    assert "4000" in texts[1]
    assert "5000" in texts[3]
    staff.check("events", boxes[1].get_attribute("value"))
    staff.check("events", boxes[3].get_attribute("value"))
    staff.fill("reason", "Pasted text: not written")
    assert staff.no_horizontal_scroll()
    staff.shot("undo-form")
    staff.submit('input[type="submit"].default')

    assert not staff.errors(), staff.errors()
    assert staff.messages() == ["Undid 2 events of bob."]
    assert MetricTotal.objects.get(user=bob).total == 350
    assert PointsTotal.objects.get(user=bob).total == 350
    card = staff.text("#user-undone")
    assert "Pasted text: not written" in card
    assert "admin" in card
    assert UndoneEvent.objects.filter(user=bob, actor_kind="staff", actor="admin").count() == 2
    staff.shot("user-page-after")

    # Nothing left to pick twice: the undone events are no longer offered.
    staff.click("#user-undo-events")
    assert len(staff.all('#id_events input[name="events"]')) == 3
