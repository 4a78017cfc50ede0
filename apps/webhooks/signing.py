"""Webhook signatures: Trophy's `X-Trophy-Signature` for wire compatibility, plus the Standard
Webhooks headers (https://www.standardwebhooks.com) so receivers can use any of that spec's
libraries, which also check a timestamp and so reject replayed deliveries.

Secrets look like `whsec_<base64 of 32 random bytes>`, the Standard Webhooks form; the Trophy
signature is keyed with that same string (see `trophy_signature`).
"""

import base64
import hashlib
import hmac
import secrets as random_source

SECRET_PREFIX = "whsec_"  # noqa: S105 - the fixed prefix of every secret, not a secret
SECRET_BYTES = 32  # 256 bits, SHA-256's output size: a longer HMAC key adds no strength


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(random_source.token_bytes(SECRET_BYTES)).decode()


def trophy_signature(secret: str, body: bytes) -> str:
    """Base64(HMAC-SHA256(secret, raw body)), Trophy's `X-Trophy-Signature` (reference §4.7).

    The key is the secret string exactly as shown to the customer, prefix included, as UTF-8:
    Trophy's verification examples pass the secret string straight to the HMAC, so decoding
    the base64 part here (as Standard Webhooks does) would break every existing receiver.
    """
    digest = hmac.new(secret.encode(), body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def standard_signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256>` over `{msg_id}.{timestamp}.{body}`; the key is the decoded
    base64 after `whsec_`, as the Standard Webhooks spec says."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(_standard_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_headers(
    secrets: list[str],
    msg_id: str,
    timestamp: int,
    body: bytes,
    tenant_customer_id: str | None,
) -> dict[str, str]:
    """Every header that authenticates one delivery.

    `secrets` is current first: the Trophy header carries only that one (Trophy's format has
    room for a single signature), while `webhook-signature` lists one signature per secret so
    that, during a rotation, receivers still holding the previous secret keep verifying.
    """
    if not secrets:
        raise ValueError("at least one signing secret is required")
    headers = {
        "Content-Type": "application/json",
        "X-Trophy-Signature": trophy_signature(secrets[0], body),
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(
            standard_signature(secret, msg_id, timestamp, body) for secret in secrets
        ),
    }
    if tenant_customer_id is not None:
        headers["webhook-tenant"] = tenant_customer_id
    return headers


def _standard_key(secret: str) -> bytes:
    encoded = secret.removeprefix(SECRET_PREFIX)
    # Padding is restored because some issuers strip it (the reference library tolerates that
    # too); validate=True makes a mistyped secret fail loudly instead of signing with a key
    # silently different from the customer's (b64decode otherwise drops unknown characters).
    encoded += "=" * (-len(encoded) % 4)
    key = base64.b64decode(encoded, validate=True)
    if not key:
        raise ValueError("webhook secret is empty")
    return key
