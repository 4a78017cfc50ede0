"""Signed links in emails: the manage-preferences page and one-click unsubscribe.

The two links carry different tokens, signed with different salts, so neither opens the other's
page: a one-click unsubscribe link (sent in a header that mail providers act on, shown in every
footer) can turn one kind of email off and nothing else, and a preferences link never
unsubscribes by itself. A token names the user by their random public id (and, for unsubscribe,
the notification type): no primary key, no customer id. Tokens are signed with SECRET_KEY (and
accepted with SECRET_KEY_FALLBACKS while keys rotate): unguessable without the key,
tamper-evident, and needing no table. Links do not expire; rotating SECRET_KEY out of the
fallbacks invalidates every link already sent.

Links sent before the tokens were separated carry one kind of token for both pages, naming the
tenant's and the user's primary keys, with a type in unsubscribe links only. They keep working
for what they were sent for, and only that: one with a type unsubscribes, one without opens the
preferences page (README, "Email notifications").
"""

import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core import signing

from apps.core.cells import cells, cells_configured, using_cell
from apps.users.models import EndUser

_PREFERENCES_SALT = "gamify.notifications.preferences-page"
_UNSUBSCRIBE_SALT = "gamify.notifications.unsubscribe"
# Both pages' links before they were separated: [tenant pk, user pk, type or None].
_LEGACY_SALT = "gamify.notifications.preferences"


@dataclass(frozen=True)
class LinkUser:
    """Whom a link names: the user's public id, or in a legacy link the primary keys of the
    tenant and the user (both must still match)."""

    public_id: uuid.UUID | None = None
    tenant_pk: int | None = None
    user_pk: int | None = None


def _loads(token: str, salt: str) -> Any:
    try:
        return signing.loads(token, salt=salt)
    except (signing.BadSignature, ValueError, TypeError):
        return None


def _public_id(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _legacy(token: str) -> tuple[LinkUser, str | None] | None:
    claims = _loads(token, _LEGACY_SALT)
    if not isinstance(claims, list) or len(claims) != 3:
        return None
    tenant_pk, user_pk, type = claims
    if not isinstance(tenant_pk, int) or not isinstance(user_pk, int):
        return None
    return LinkUser(tenant_pk=tenant_pk, user_pk=user_pk), type if isinstance(type, str) else None


def preferences_token(user: EndUser) -> str:
    return signing.dumps(str(user.public_id), salt=_PREFERENCES_SALT)


def preferences_token_read(token: str) -> LinkUser | None:
    """The user a preferences token names; None for a tampered or malformed one, and for an
    unsubscribe token (legacy ones included)."""
    public_id = _public_id(_loads(token, _PREFERENCES_SALT))
    if public_id is not None:
        return LinkUser(public_id=public_id)
    legacy = _legacy(token)
    if legacy is None or legacy[1] is not None:
        return None
    return legacy[0]


def unsubscribe_token(user: EndUser, type: str) -> str:
    return signing.dumps([str(user.public_id), type], salt=_UNSUBSCRIBE_SALT)


def unsubscribe_token_read(token: str) -> tuple[LinkUser, str] | None:
    """The user and the notification type an unsubscribe token names; None for a tampered or
    malformed one, and for a preferences token (legacy ones included)."""
    claims = _loads(token, _UNSUBSCRIBE_SALT)
    if isinstance(claims, list) and len(claims) == 2 and isinstance(claims[1], str):
        public_id = _public_id(claims[0])
        return (LinkUser(public_id=public_id), claims[1]) if public_id is not None else None
    legacy = _legacy(token)
    if legacy is None or legacy[1] is None:
        return None
    return legacy[0], legacy[1]


def link_cell(token: str) -> str | None:
    """The cell holding the user a preferences or unsubscribe link names (tenant cells,
    apps/core/cells.py): links never expire and their organization may have moved since, so
    each cell is asked for the user's public id, one after the other (no join across cells).
    None when no cell has them, or with a single cell."""
    if not cells_configured():
        return None
    read = preferences_token_read(token)
    if read is None:
        unsubscribe = unsubscribe_token_read(token)
        read = unsubscribe[0] if unsubscribe is not None else None
    if read is None:
        return None
    for cell in cells():
        with using_cell(cell):
            users = EndUser.objects.all()
            if read.public_id is not None:
                users = users.filter(public_id=read.public_id)
            else:
                users = users.filter(pk=read.user_pk or 0, tenant_id=read.tenant_pk or 0)
            if users.exists():
                return cell
    return None


def preferences_url(user: EndUser) -> str:
    return f"{settings.PUBLIC_URL}/notifications/preferences/{preferences_token(user)}"


def unsubscribe_url(user: EndUser, type: str) -> str:
    return f"{settings.PUBLIC_URL}/notifications/unsubscribe/{unsubscribe_token(user, type)}"
