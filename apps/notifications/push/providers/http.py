"""The HTTP plumbing the provider clients share."""

import email.utils
import time

import httpx

from apps.notifications.push.providers.base import TokenResult


def new_http_client() -> httpx.Client:
    """The client every provider uses unless one is injected. No redirects: a provider that
    redirects is misconfigured, and following would resend credentials to another host."""
    return httpx.Client(http2=True, timeout=httpx.Timeout(10.0), follow_redirects=False)


class HttpClientOwner:
    """A provider's HTTP client: its own (new_http_client) unless one is injected (the tests'
    mock transports); `close` closes only its own."""

    def __init__(self, client: httpx.Client | None) -> None:
        self._owns_client = client is None
        self._client = client or new_http_client()

    def close(self) -> None:
        if self._owns_client:
            self._client.close()


def unanswered(token: str, exc: httpx.RequestError) -> TokenResult:
    """A token whose request got no answer (timeout, connection error): try again later. The
    class name only: an exception's text may carry the URL, hence the token."""
    return TokenResult(token, ok=False, reason=type(exc).__name__, temporary=True)


def retry_after_seconds(response: httpx.Response) -> float | None:
    """Retry-After as seconds: either delta-seconds or an HTTP date (RFC 9110 section 10.2.3)."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
