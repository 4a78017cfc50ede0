"""Secrets at rest (push credentials, webhook signing secrets): encrypted with Fernet (AES-128-
CBC + HMAC-SHA256) under a key derived from ENCRYPTION_KEY, or from SECRET_KEY when no
dedicated key is set, with a purpose label so that a key derived for one use is useless for
another.

Rotation: set the new ENCRYPTION_KEY, move the old one (or the SECRET_KEY that was in use) to
ENCRYPTION_KEY_FALLBACKS, and re-encrypt what is stored (`manage.py push_credentials_rotate`
for push channels); then the fallback can go.
"""

import base64
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

from apps.core.errors import ValidationError


class SecretUnreadableError(ValidationError):
    def __init__(self) -> None:
        super().__init__(
            "A stored secret cannot be decrypted with the configured keys "
            "(ENCRYPTION_KEY / ENCRYPTION_KEY_FALLBACKS); enter it again."
        )


def _derived(secret: str, purpose: str) -> Fernet:
    key = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=f"gamify {purpose}".encode()
    ).derive(secret.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def _keys(purpose: str) -> MultiFernet:
    primary = settings.ENCRYPTION_KEY or settings.SECRET_KEY
    fallbacks = list(settings.ENCRYPTION_KEY_FALLBACKS)
    if not settings.ENCRYPTION_KEY:
        fallbacks += list(getattr(settings, "SECRET_KEY_FALLBACKS", []))
    return MultiFernet([_derived(k, purpose) for k in (primary, *fallbacks) if k])


def encrypt_json(values: Any, purpose: str) -> str:
    return _keys(purpose).encrypt(json.dumps(values, sort_keys=True).encode()).decode()


def decrypt_json(stored: str, purpose: str) -> Any:
    try:
        return json.loads(_keys(purpose).decrypt(stored.encode()))
    except InvalidToken as exc:
        raise SecretUnreadableError from exc


def reencrypt(stored: str, purpose: str) -> str:
    """The same secret under the current primary key (raises if no key can read it)."""
    try:
        return _keys(purpose).rotate(stored.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadableError from exc
