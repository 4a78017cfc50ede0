"""Push credentials at rest, encrypted by apps.core.secrets (see there for key rotation;
`manage.py push_credentials_rotate` re-encrypts every channel under the current key)."""

from typing import Any

from apps.core.secrets import SecretUnreadableError, decrypt_json, encrypt_json, reencrypt

# The HKDF purpose label; changing it would make every stored credential unreadable.
_PURPOSE = "push credentials"

CredentialsUnreadableError = SecretUnreadableError


def secrets_encrypt(values: dict[str, Any]) -> str:
    return encrypt_json(values, _PURPOSE)


def secrets_decrypt(stored: str) -> dict[str, Any]:
    if not stored:
        return {}
    return dict(decrypt_json(stored, _PURPOSE))


def secrets_reencrypt(stored: str) -> str:
    return reencrypt(stored, _PURPOSE)
