"""The HTTP plumbing the provider clients share."""

import email.utils
import time

import httpx


def new_http_client() -> httpx.Client:
    """The client every provider uses unless one is injected. No redirects: a provider that
    redirects is misconfigured, and following would resend credentials to another host."""
    return httpx.Client(http2=True, timeout=httpx.Timeout(10.0), follow_redirects=False)


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
