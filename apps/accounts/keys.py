"""API key material: generation and hashing.

Keys carry 256 bits of randomness, so a single SHA-256 is enough to make a leaked database
useless for authentication; a slow password hash would only add latency to every request.
"""

import hashlib
import hmac
import secrets
import string

_ALPHABET = string.ascii_lowercase + string.digits


def _random_chars(length: int) -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def key_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def key_generate(application: bool) -> tuple[str, str, str]:
    """Returns (prefix, secret, full key)."""
    prefix = f"app_{_random_chars(8)}" if application else _random_chars(8)
    secret = secrets.token_urlsafe(32)
    return prefix, secret, f"{prefix}.{secret}"


def key_split(raw: str) -> tuple[str, str] | None:
    prefix, sep, secret = raw.strip().partition(".")
    if not sep or not prefix or not secret or len(prefix) > 32:
        return None
    return prefix, secret


def key_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(key_hash(secret), stored_hash)
