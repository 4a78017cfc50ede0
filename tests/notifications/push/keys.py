"""Signing keys made for the tests (never a real credential)."""

import functools

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa


def _pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@functools.cache
def apns_signing_key() -> str:
    """An ES256 key in the PKCS#8 PEM form of Apple's .p8 files."""
    return _pem(ec.generate_private_key(ec.SECP256R1()))


@functools.cache
def fcm_private_key() -> str:
    return _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))


GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"


def service_account(token_uri: str = GOOGLE_TOKEN_URI) -> dict[str, str]:
    return {
        "type": "service_account",
        "project_id": "gamify-test",
        "private_key_id": "k1",
        "private_key": fcm_private_key(),
        "client_email": "push@gamify-test.iam.gserviceaccount.com",
        "token_uri": token_uri,
    }
