"""Delivery: what is built, what is retried, what fails, what a crashed worker leaves."""

import datetime as dt
import smtplib
import time

import pytest
import time_machine
from django.core import mail

from apps.notifications.choices import MessageStatus
from apps.notifications.delivery import messages_send, messages_stuck_release
from apps.notifications.models import Message
from apps.users.models import EndUser
from tests.notifications import backends
from tests.notifications.conftest import (
    COSTLY_HTML,
    TOO_MUCH_WORK,
    activate,
    at,
    messages,
    metric_achievement,
    run_jobs,
    send_event,
)

SCRIPTED = "tests.notifications.backends.ScriptedBackend"


@pytest.fixture
def scripted(settings):
    settings.EMAIL_BACKEND = SCRIPTED
    backends.reset()
    yield backends.ScriptedBackend
    backends.reset()


@pytest.fixture
def due_message(api_client, metric):
    """An achievement email scheduled for 17:00 UTC on 2026-03-10."""
    metric_achievement(api_client, metric, "Ten words", 10)
    activate(api_client, "achievement_completed")
    send_event(api_client, at("2026-03-10", 9), value=10, tz="UTC", name="Ada")
    # The API refuses control characters in names; a name stored before that rule (or written
    # another way) must still not inject headers.
    EndUser.objects.filter(external_id="u1").update(name="Ada\r\nBcc: evil@x.com")
    [message] = messages()
    return message


def test_an_email_has_both_parts_and_one_click_unsubscribe_headers(due_message):
    run_jobs(at("2026-03-10", 17))
    [email] = mail.outbox
    headers = email.message()
    assert headers["List-Unsubscribe"].startswith("<http://testserver/notifications/unsubscribe/")
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert email.body  # text part
    [(html, mimetype)] = email.alternatives
    assert mimetype == "text/html"
    assert "http://testserver/notifications/preferences/" in html
    assert "http://testserver/notifications/preferences/" in email.body
    # A name with CR/LF stays inside the To header: no injected Bcc.
    assert headers["Bcc"] is None
    assert "evil@x.com" not in str(headers["To"]).split("<")[-1]
    assert email.to[0].endswith("<u1@example.com>")


def test_a_temporary_failure_is_retried_with_backoff(scripted, due_message):
    scripted.script = [backends.temporary()]
    run_jobs(at("2026-03-10", 17))
    due_message.refresh_from_db()
    assert due_message.status == MessageStatus.RETRYING
    assert due_message.attempts == 1
    assert "421" in due_message.error
    assert due_message.send_at == at("2026-03-10", 17, 1)
    run_jobs(
        at(
            "2026-03-10",
            17,
            0,
        )
    )
    assert mail.outbox == []
    run_jobs(at("2026-03-10", 17, 1))
    due_message.refresh_from_db()
    assert due_message.status == MessageStatus.SENT
    assert due_message.attempts == 2
    assert len(mail.outbox) == 1


def test_connection_errors_are_temporary(scripted, due_message):
    scripted.script = [ConnectionRefusedError("refused"), smtplib.SMTPServerDisconnected("bye")]
    run_jobs(at("2026-03-10", 17))
    run_jobs(at("2026-03-10", 17, 1))
    due_message.refresh_from_db()
    assert (due_message.status, due_message.attempts) == (MessageStatus.RETRYING, 2)


def test_a_permanent_failure_is_not_retried(scripted, due_message):
    scripted.script = [backends.permanent()]
    run_jobs(at("2026-03-10", 17))
    due_message.refresh_from_db()
    assert due_message.status == MessageStatus.FAILED
    assert "550" in due_message.error
    run_jobs(at("2026-03-11", 17))
    assert mail.outbox == []


def test_temporary_failures_give_up_after_the_last_retry(scripted, due_message):
    scripted.script = [backends.temporary() for _ in range(10)]
    when = at("2026-03-10", 17)
    for _ in range(10):
        run_jobs(when)
        due_message.refresh_from_db()
        if due_message.status != MessageStatus.RETRYING:
            break
        when = due_message.send_at
    assert due_message.status == MessageStatus.FAILED
    assert due_message.attempts == 6
    assert "gave up after 6 attempts" in due_message.error


def test_a_message_stuck_in_sending_is_sent_again(due_message):
    Message.objects.filter(pk=due_message.pk).update(
        status=MessageStatus.SENDING, claimed_at=at("2026-03-10", 17), attempts=1
    )
    assert messages_stuck_release(at("2026-03-10", 17, 10)) == 0  # not old enough
    assert messages_stuck_release(at("2026-03-10", 17, 16)) == 1
    run_jobs(at("2026-03-10", 17, 16))
    due_message.refresh_from_db()
    assert due_message.status == MessageStatus.SENT
    assert len(mail.outbox) == 1


def test_a_task_run_twice_sends_once(due_message):
    with time_machine.travel(at("2026-03-10", 17), tick=False):
        first = messages_send([due_message.pk])
        second = messages_send([due_message.pk])
    assert first == {MessageStatus.SENT: 1}
    assert second == {}
    assert len(mail.outbox) == 1


def test_one_connection_serves_a_chunk(scripted, api_client, metric):
    metric_achievement(api_client, metric, "Ten words", 10)
    activate(api_client, "achievement_completed")
    for n in range(5):
        send_event(api_client, at("2026-03-10", 9), f"u{n}", value=10, tz="UTC")
    run_jobs(at("2026-03-10", 17))
    assert len(mail.outbox) == 5
    assert scripted.opened == 1


def test_a_template_that_fails_at_send_time_fails_the_message(due_message):
    Message.objects.filter(pk=due_message.pk)
    template = due_message.template
    # Written around the service (which refuses it) to simulate a template broken by data.
    type(template).objects.filter(pk=template.pk).update(html="{{ user.__class__ }}")
    run_jobs(at("2026-03-10", 17))
    due_message.refresh_from_db()
    assert due_message.status == MessageStatus.FAILED
    assert due_message.error.startswith("template:")


def test_old_messages_are_purged(due_message, settings):
    from apps.notifications.jobs import notifications_purge

    run_jobs(at("2026-03-10", 17))
    Message.objects.update(created=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    assert notifications_purge(dt.datetime(2026, 2, 1, tzinfo=dt.UTC)) == 1
    assert Message.objects.count() == 0


def test_a_template_too_costly_to_render_fails_its_message_quickly(due_message):
    template = due_message.template
    # Written around the service, which refuses it: a template saved before the work budget.
    type(template).objects.filter(pk=template.pk).update(html=COSTLY_HTML)

    started = time.perf_counter()
    run_jobs(at("2026-03-10", 17))

    assert time.perf_counter() - started < 5
    due_message.refresh_from_db()
    assert due_message.status == MessageStatus.FAILED
    assert due_message.error.startswith(f"template: html: {TOO_MUCH_WORK}")


def test_a_template_without_a_preferences_link_gets_one(api_client, metric):
    metric_achievement(api_client, metric)
    activate(
        api_client,
        "achievement_completed",
        subject="Well done",
        html="<html><body><p>Hi {{ user.name }}</p></body></html>",
        text="Hi {{ user.name }}",
    )
    send_event(api_client, at("2026-03-10", 18), value=10, tz="UTC", name="Ada")
    [email] = mail.outbox
    [(html, _)] = email.alternatives
    assert html.count("http://testserver/notifications/preferences/") == 1
    assert html.index("notifications/preferences/") < html.index("</body>")
    assert "Manage email preferences: http://testserver/notifications/preferences/" in email.body
