"""Real SMTP: Django's SMTP backend talking to an aiosmtpd server on 127.0.0.1, and the
message checked as the server received it."""

import email
import email.policy
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from apps.notifications.choices import MessageStatus
from tests.notifications.conftest import (
    activate,
    at,
    messages,
    metric_achievement,
    run_jobs,
    send_event,
)


class Sink:
    """Keeps what it receives; refuses recipients on demand with a given reply."""

    def __init__(self) -> None:
        self.received: list[tuple[str, list[str], bytes]] = []
        self.refuse_with: str | None = None

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: Any
    ) -> str:
        if self.refuse_with is not None:
            return self.refuse_with
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 Message accepted for delivery"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def smtp(settings) -> Iterator[Sink]:
    sink = Sink()
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = port
    settings.EMAIL_TIMEOUT = 5
    settings.DEFAULT_FROM_EMAIL = "gamify <notify@gamify.test>"
    try:
        yield sink
    finally:
        controller.stop()


@pytest.fixture
def scheduled(api_client, metric):
    api_client.patch(
        "/admin/v1/settings", {"branding": {"appName": "Wordsmith", "brandColor": "#4f46e5"}}
    )
    metric_achievement(api_client, metric, "Ten words", 10, description="You wrote <10> words")
    activate(api_client, "achievement_completed")
    send_event(api_client, at("2026-03-10", 9), value=10, tz="UTC", name="Ada Lovelace")


def test_an_email_arrives_with_both_parts_and_unsubscribe_headers(smtp, scheduled):
    run_jobs(at("2026-03-10", 17))
    [(mail_from, rcpt_tos, raw)] = smtp.received
    assert mail_from == "notify@gamify.test"
    assert rcpt_tos == ["u1@example.com"]
    received = email.message_from_bytes(raw, policy=email.policy.default)
    assert received["From"] == "Wordsmith <notify@gamify.test>"
    assert received["To"] == "Ada Lovelace <u1@example.com>"
    unsubscribe = str(received["List-Unsubscribe"]).strip()
    assert unsubscribe.startswith("<http://testserver/notifications/unsubscribe/")
    assert received["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert received.get_content_type() == "multipart/alternative"
    text = received.get_body(("plain",)).get_content()
    html = received.get_body(("html",)).get_content()
    assert "Ten words" in text
    assert "Ten words" in html
    assert "You wrote <10> words" in text
    assert "You wrote &lt;10&gt; words" in html
    assert "http://testserver/notifications/preferences/" in html
    assert "http://testserver/notifications/preferences/" in text
    [message] = messages()
    assert message.status == MessageStatus.SENT


def test_a_451_reply_is_retried_and_a_550_fails(smtp, scheduled):
    smtp.refuse_with = "451 4.3.0 Try again later"
    run_jobs(at("2026-03-10", 17))
    [message] = messages()
    assert message.status == MessageStatus.RETRYING
    assert "451" in message.error
    smtp.refuse_with = "550 5.1.1 No such user"
    run_jobs(at("2026-03-10", 17, 1))
    message.refresh_from_db()
    assert message.status == MessageStatus.FAILED
    assert "550" in message.error
    assert smtp.received == []


def test_a_server_that_is_down_is_retried(settings, scheduled):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = free_port()  # nothing listens there
    settings.EMAIL_TIMEOUT = 2
    run_jobs(at("2026-03-10", 17))
    [message] = messages()
    assert message.status == MessageStatus.RETRYING
    assert "Connection" in message.error or "refused" in message.error.lower()


def test_an_unbranded_tenant_s_email_uses_the_defaults_the_settings_api_reports(
    smtp, api_client, metric
):
    branding = api_client.get("/admin/v1/settings").json()["branding"]
    metric_achievement(api_client, metric, "Ten words", 10)
    activate(api_client, "achievement_completed")
    send_event(api_client, at("2026-03-10", 9), value=10, tz="UTC")
    run_jobs(at("2026-03-10", 17))
    [(_, _, raw)] = smtp.received
    received = email.message_from_bytes(raw, policy=email.policy.default)
    assert received["From"] == f"{branding['appName']} <notify@gamify.test>"
    html = received.get_body(("html",)).get_content()
    assert f"background-color: {branding['brandColor']}" in html
