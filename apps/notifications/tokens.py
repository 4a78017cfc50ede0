"""Signed links in emails: the manage-preferences page and one-click unsubscribe.

A token names the tenant, the user and (for unsubscribe) the notification type, signed with
SECRET_KEY (and accepted with SECRET_KEY_FALLBACKS while keys rotate): unguessable without the
key, tamper-evident, and needing no table. Links do not expire; rotating SECRET_KEY out of the
fallbacks invalidates every link already sent.
"""

from dataclasses import dataclass

from django.conf import settings
from django.core import signing

from apps.users.models import EndUser

_SALT = "gamify.notifications.preferences"


@dataclass(frozen=True)
class TokenClaims:
    tenant_pk: int
    user_pk: int
    type: str | None


def preferences_token(user: EndUser, type: str | None = None) -> str:
    return signing.dumps([user.tenant_id, user.pk, type], salt=_SALT)


def preferences_token_read(token: str) -> TokenClaims | None:
    """The claims of a valid token; None for a tampered or malformed one."""
    try:
        tenant_pk, user_pk, type = signing.loads(token, salt=_SALT)
    except (signing.BadSignature, ValueError, TypeError):
        return None
    if not isinstance(tenant_pk, int) or not isinstance(user_pk, int):
        return None
    return TokenClaims(tenant_pk, user_pk, type if isinstance(type, str) else None)


def preferences_url(user: EndUser) -> str:
    return f"{settings.PUBLIC_URL}/notifications/preferences/{preferences_token(user)}"


def unsubscribe_url(user: EndUser, type: str) -> str:
    return f"{settings.PUBLIC_URL}/notifications/unsubscribe/{preferences_token(user, type)}"
