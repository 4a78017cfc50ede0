"""A secret shown once: kept in the staff member's server-side session from the request that
made it until the one page that shows it (a new API key, a webhook signing secret).

Not the messages framework: its default storage puts messages in a cookie, so the secret would
travel back and forth and sit in the browser's cookie jar. The session row is server-side; the
secret stays there only until its page is shown, and at most SHOW_ONCE_TTL if it never is.
"""

import datetime as dt
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.utils import timezone

# Long enough for the redirect to the page (and a slow page load), short enough that a secret
# left by an abandoned page does not linger in the session store.
SHOW_ONCE_TTL = dt.timedelta(minutes=10)


def once_keep(request: HttpRequest, slot: str, subject: str, payload: dict[str, Any]) -> None:
    """Keeps `payload` for the page of `subject` (a public id: SQLite may hand a rolled-back
    row's pk to the next row). One entry per slot: a newer secret replaces an unshown one."""
    if settings.SESSION_ENGINE.endswith("signed_cookies"):
        # That engine is the session *in* a cookie: fail (and roll the write back) rather
        # than send the secret to the browser in it.
        raise ImproperlyConfigured("secrets shown once need a server-side SESSION_ENGINE")
    request.session[slot] = {
        "subject": subject,
        "payload": payload,
        "until": (timezone.now() + SHOW_ONCE_TTL).isoformat(),
    }


def once_take(request: HttpRequest, slot: str, subject: str) -> dict[str, Any] | None:
    """The payload kept for `subject`, removed from the session: shown once."""
    entry: dict[str, Any] | None = request.session.get(slot)
    if entry is None or entry.get("subject") != subject:
        return None
    del request.session[slot]
    if dt.datetime.fromisoformat(entry["until"]) < timezone.now():
        return None
    payload: dict[str, Any] = entry["payload"]
    return payload
