"""A new signing secret, kept in the staff member's server-side session from the request that
made it until the one page that shows it.

Not the messages framework: its default storage puts messages in a cookie, so the secret would
travel back and forth and sit in the browser's cookie jar. The session row is server-side; the
secret stays there only until its page is shown, and at most SECRET_PAGE_TTL if it never is.
"""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.utils import timezone

from apps.webhooks.models import WebhookEndpoint

_SESSION_KEY = "webhooks.new_secret"
# Long enough for the redirect to the secret page (and a slow page load), short enough that a
# secret left by an abandoned page does not linger in the session store.
SECRET_PAGE_TTL = dt.timedelta(minutes=10)


@dataclass(frozen=True)
class NewSecret:
    secret: str
    rotated: bool


def secret_keep(
    request: HttpRequest, endpoint: WebhookEndpoint, secret: str, rotated: bool
) -> None:
    if settings.SESSION_ENGINE.endswith("signed_cookies"):
        # That engine is the session *in* a cookie: fail (and roll the write back) rather
        # than send the secret to the browser in it.
        raise ImproperlyConfigured("webhook secrets need a server-side SESSION_ENGINE")
    # One entry only: a newer secret replaces an unshown older one.
    request.session[_SESSION_KEY] = {
        # The public id, not the pk: SQLite may hand a rolled-back row's pk to the next row.
        "endpoint": str(endpoint.public_id),
        "secret": secret,
        "rotated": rotated,
        "until": (timezone.now() + SECRET_PAGE_TTL).isoformat(),
    }


def secret_take(request: HttpRequest, endpoint: WebhookEndpoint) -> NewSecret | None:
    """The endpoint's new secret, removed from the session: shown once."""
    entry: dict[str, Any] | None = request.session.get(_SESSION_KEY)
    if entry is None or entry.get("endpoint") != str(endpoint.public_id):
        return None
    del request.session[_SESSION_KEY]
    if dt.datetime.fromisoformat(entry["until"]) < timezone.now():
        return None
    return NewSecret(secret=entry["secret"], rotated=entry["rotated"])
