"""What every push provider client offers the delivery code: send one notification to a batch
of device tokens and say, per token, what happened, in the provider-neutral terms the
delivery code acts on (sent, retry later, the token is dead, a permanent failure)."""

import hashlib
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class PushNotification:
    """A rendered push message: what every provider can show."""

    title: str
    body: str
    url: str | None = None  # a deep link, passed in the payload's data as "url"
    data: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TokenResult:
    token: str
    ok: bool
    status_code: int | None = None  # the provider's HTTP status, None without an answer
    reason: str = ""  # the provider's reason ("BadDeviceToken", "UNREGISTERED", ...)
    dead: bool = False  # the token should be removed from the user's device tokens
    temporary: bool = False  # 429, 5xx, timeouts, connection errors: try again later
    retry_after: float | None = None  # seconds, from Retry-After
    ticket_id: str | None = None  # Expo: the ticket whose receipt tells the final outcome


class PushProvider(Protocol):
    kind: str

    def send(self, notification: PushNotification, tokens: list[str]) -> list[TokenResult]:
        """One result per token, in order. Never raises for a provider's answer or a network
        failure: those are results (temporary, with the exception's text as `reason`)."""
        ...

    def close(self) -> None: ...


def token_hash(token: str) -> str:
    """How a token appears in logs and the delivery log: a stable, non-reversible prefix."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]
