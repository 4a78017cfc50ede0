"""Push credentials at rest: encrypted with Fernet (AES-128-CBC + HMAC-SHA256) under a key
derived from ENCRYPTION_KEY, or from SECRET_KEY when no dedicated key is set.

Rotation: set the new ENCRYPTION_KEY, move the old one (or the SECRET_KEY that was in use) to
ENCRYPTION_KEY_FALLBACKS, and run `manage.py push_credentials_rotate`, which re-encrypts every
channel under the new key; then the fallback can go.
"""

import base64
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

from apps.core.errors import ValidationError


class CredentialsUnreadableError(ValidationError):
    def __init__(self) -> None:
        super().__init__(
            "The channel's credentials cannot be decrypted with the configured keys "
            "(ENCRYPTION_KEY / ENCRYPTION_KEY_FALLBACKS); enter them again."
        )


def _derived(secret: str) -> Fernet:
    # HKDF with a purpose label: the same SECRET_KEY also signs sessions and links, and a key
    # derived for one purpose must be useless for another.
    key = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"gamify push credentials"
    ).derive(secret.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def _keys() -> MultiFernet:
    primary = settings.ENCRYPTION_KEY or settings.SECRET_KEY
    fallbacks = list(settings.ENCRYPTION_KEY_FALLBACKS)
    if not settings.ENCRYPTION_KEY:
        fallbacks += list(getattr(settings, "SECRET_KEY_FALLBACKS", []))
    return MultiFernet([_derived(primary), *(_derived(k) for k in fallbacks if k)])


def secrets_encrypt(values: dict[str, Any]) -> str:
    return _keys().encrypt(json.dumps(values, sort_keys=True).encode()).decode()


def secrets_decrypt(stored: str) -> dict[str, Any]:
    if not stored:
        return {}
    try:
        return dict(json.loads(_keys().decrypt(stored.encode())))
    except InvalidToken as exc:
        raise CredentialsUnreadableError from exc


def secrets_reencrypt(stored: str) -> str:
    """The same secrets under the current primary key (raises if no key can read them)."""
    try:
        return _keys().rotate(stored.encode()).decode()
    except InvalidToken as exc:
        raise CredentialsUnreadableError from exc
