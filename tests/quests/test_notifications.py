"""quest_reminder: in the user's local evening (19:00 to 23:00) when today's daily quests are
unfinished and the user was active in their last 3 days; once a day; with the control group,
preferences and unsubscribe rules of every type, out of Trophy's preferences body, and its
built-in templates seeded once the tenant has a quest."""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from apps.accounts.models import Tenant
from apps.metrics.models import Metric
from apps.notifications import jobs
from apps.notifications.services import notification_unsubscribe
from apps.users.models import EndUser
from tests.notifications.conftest import activate, committed, messages, outbox_to, send_event
from tests.quests.support import quest

pytestmark = pytest.mark.django_db

UTC = dt.UTC
TUESDAY = dt.datetime(2026, 11, 24, 9, tzinfo=UTC)
TOKYO, NEW_YORK = "Asia/Tokyo", "America/New_York"


@pytest.fixture
def quests(api_client: Any, tenant: Tenant, metric: Metric) -> None:
    goal = {"kind": "metric", "metric_id": str(metric.public_id), "target": Decimal(5)}
    quest(tenant, "five", [goal], name="Write five words")
    quest(tenant, "days", [{"kind": "active_days", "target": 1}], name="Show up")
    quest(tenant, "weekly", [goal], cadence="weekly")  # not today's: never reminded of
    activate(api_client, "quest_reminder")


def sweep(when: dt.datetime) -> None:
    with time_machine.travel(when, tick=False), committed():
        jobs.notifications_quest_reminder(when)
        jobs.notifications_dispatch(when)


@pytest.mark.usefixtures("quests")
def test_a_user_with_unfinished_quests_is_reminded_in_their_evening_once(api_client: Any):
    send_event(api_client, TUESDAY, "ada", 2, tz=NEW_YORK)  # "Show up" done, five words not
    send_event(api_client, TUESDAY, "bob", 5, tz=NEW_YORK)  # both done
    send_event(api_client, TUESDAY, "cy", 1, tz=TOKYO)  # Tokyo's evening is over (18:00 its)
    sweep(dt.datetime(2026, 11, 24, 23, 55, tzinfo=UTC))  # 18:55 in New York: too early
    assert messages(type="quest_reminder") == []
    sweep(dt.datetime(2026, 11, 25, 0, 5, tzinfo=UTC))  # 19:05 in New York, 09:05 in Tokyo
    [message] = messages(type="quest_reminder")
    assert message.user.external_id == "ada"
    assert message.payload["quests"]["date"] == "2026-11-24"
    assert message.payload["quests"]["unfinished"] == 1
    assert message.payload["quests"]["names"] == "Write five words"
    [email] = outbox_to("ada@example.com")
    assert email.subject == "1 of today's quests left"
    assert "You have 1 of today's 2 quests left: Write five words." in email.body
    sweep(dt.datetime(2026, 11, 25, 1, 5, tzinfo=UTC))  # again that evening: not again
    assert len(messages(type="quest_reminder")) == 1


@pytest.mark.usefixtures("quests")
def test_a_user_inactive_for_3_days_is_not_reminded(api_client: Any):
    send_event(api_client, TUESDAY - dt.timedelta(days=3), "ada", 1, tz="UTC")
    send_event(api_client, TUESDAY - dt.timedelta(days=2), "bob", 1, tz="UTC")
    sweep(dt.datetime(2026, 11, 24, 19, 5, tzinfo=UTC))
    # bob was active on the 22nd: one of his last 3 days (22, 23, 24); ada on the 21st.
    assert [m.user.external_id for m in messages(type="quest_reminder")] == ["bob"]
    # bob has not shown up today: both of today's quests are unfinished.
    assert messages(type="quest_reminder")[0].payload["quests"]["unfinished"] == 2


@pytest.mark.usefixtures("quests")
def test_the_control_group_and_unsubscribed_users_get_nothing(api_client: Any):
    for user in ("ada", "bob", "cy"):
        send_event(api_client, TUESDAY, user, 1, tz="UTC")
    EndUser.objects.filter(external_id="bob").update(control=True)
    notification_unsubscribe(EndUser.objects.get(external_id="cy"), "quest_reminder")
    sweep(dt.datetime(2026, 11, 24, 19, 5, tzinfo=UTC))
    assert [m.user.external_id for m in messages(type="quest_reminder")] == ["ada"]


def test_the_templates_and_preferences_come_with_the_first_quest(
    api_client: Any, tenant: Tenant, metric: Metric
):
    from django.test import Client

    from apps.notifications.tokens import preferences_url

    def types() -> list[str]:
        listed = api_client.get("/admin/v1/email-templates", {"limit": 100}).json()
        return sorted(t["type"] for t in listed)

    assert "quest_reminder" not in types()
    user = EndUser.objects.create(tenant=tenant, external_id="u1", email="u1@example.com")
    path = preferences_url(user).removeprefix("http://testserver")
    assert "Quest reminder" not in Client().get(path).content.decode()
    quest(tenant, "five", [{"kind": "active_days", "target": 1}])
    assert "quest_reminder" in types()
    pushed = api_client.get("/admin/v1/push-templates", {"limit": 100}).json()
    assert "quest_reminder" in {t["type"] for t in pushed}
    assert "Quest reminder" in Client().get(path).content.decode()
    Client().post(path, {"recap": ["email"]})
    user.refresh_from_db()
    assert user.notification_preferences["quest_reminder"] == []
    # Trophy's preferences body never shows it.
    response = api_client.get("/v1/users/u1/preferences")
    assert "quest_reminder" not in response.json()["notifications"]


def test_no_template_no_sweep(api_client: Any, tenant: Tenant, metric: Metric):
    quest(tenant, "days", [{"kind": "active_days", "target": 2}])
    send_event(api_client, TUESDAY, "ada", 1, tz="UTC")
    sweep(dt.datetime(2026, 11, 24, 19, 5, tzinfo=UTC))
    assert messages(type="quest_reminder") == []


def test_the_block_editor_starts_a_quest_reminder_with_its_own_words() -> None:
    from apps.notifications.rendering import template_check
    from apps.notifications.rendering.blocks import (
        STARTER_SUBJECTS,
        blocks_check,
        blocks_compile,
        starter_blocks,
        variables_for,
    )

    blocks = starter_blocks("quest_reminder")
    assert "quests.unfinished" in blocks[1]["text"]
    compiled = blocks_compile(blocks_check(blocks))
    template_check(
        subject=STARTER_SUBJECTS["quest_reminder"], html=compiled.html, text=compiled.text
    )
    paths = {v["path"] for v in variables_for("quest_reminder")}
    assert "quests.unfinished" in paths
    assert "league.name" not in paths
