"""An email backend for tests that fails the way SMTP servers do, on demand."""

import smtplib
from typing import Any, ClassVar

from django.core import mail
from django.core.mail.backends.locmem import EmailBackend


class ScriptedBackend(EmailBackend):
    """Raises the next exception of `script` for each message sent (None: deliver it)."""

    script: ClassVar[list[BaseException | None]] = []
    opened: ClassVar[int] = 0  # connections made

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        type(self).opened += 1

    def send_messages(self, messages: Any) -> int:
        for _ in messages:
            outcome = self.script.pop(0) if self.script else None
            if outcome is not None:
                raise outcome
        return super().send_messages(messages)


def temporary() -> smtplib.SMTPResponseException:
    return smtplib.SMTPResponseException(421, b"Service not available, try again later")


def permanent() -> smtplib.SMTPRecipientsRefused:
    return smtplib.SMTPRecipientsRefused({"u1@example.com": (550, b"No such user")})


def reset() -> None:
    ScriptedBackend.script = []
    ScriptedBackend.opened = 0
    mail.outbox = []
