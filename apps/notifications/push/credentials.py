"""What a push channel needs, per provider, checked before it is saved: a channel that cannot
sign its requests is refused at once, not discovered at the first send."""

import re
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.conf import settings as django_settings

from apps.core.errors import ValidationError
from apps.core.wording import listed
from apps.notifications.choices import PushKind

# Non-secret settings and secret fields, by provider, as named on the wire.
SETTINGS: dict[str, tuple[str, ...]] = {
    PushKind.APNS: ("teamId", "keyId", "bundleId", "sandbox"),
    PushKind.FCM: (),
    PushKind.EXPO: (),
}
SECRETS: dict[str, tuple[str, ...]] = {
    PushKind.APNS: ("signingKey",),
    PushKind.FCM: ("serviceAccount",),
    PushKind.EXPO: ("accessToken",),
}
REQUIRED: dict[str, tuple[str, ...]] = {
    PushKind.APNS: ("teamId", "keyId", "bundleId", "signingKey"),
    PushKind.FCM: ("serviceAccount",),
    PushKind.EXPO: (),
}
SERVICE_ACCOUNT_FIELDS = ("project_id", "client_email", "private_key", "token_uri")
# A Google Cloud project id: lowercase letters, digits and hyphens, with the "example.com:"
# prefix of older domain-scoped projects (and, leniently, upper case, "_" and "."). It goes
# into FCM's URL path and into log lines, so nothing else (no control characters, no spaces)
# is stored.
_PROJECT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,99}\Z")
# Apple's Team ID and Key ID (ten letters and digits) and an app's bundle id (letters, digits,
# "-" and "."): they go into the provider token, the apns-topic header and log lines, so
# nothing else (no control characters, no spaces) is stored.
_APNS_IDS: dict[str, tuple[re.Pattern[str], str]] = {
    "teamId": (re.compile(r"[A-Za-z0-9]{1,20}\Z"), "letters and digits (Apple's Team ID)"),
    "keyId": (re.compile(r"[A-Za-z0-9]{1,20}\Z"), "letters and digits (the key's Key ID)"),
    "bundleId": (
        re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,254}\Z"),
        "letters, digits, - and . (the app's bundle id)",
    ),
}
# The longest value of each field a tenant may give (characters); a service account is
# counted as its parsed JSON's text.
MAX_LENGTHS: dict[str, int] = {
    "teamId": 20,
    "keyId": 20,
    "bundleId": 255,
    "signingKey": 10_000,
    "serviceAccount": 20_000,
    "accessToken": 1_000,
}


def _private_key(pem: str, kind: type, what: str) -> None:
    try:
        key = load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise ValidationError(f"{what} is not a PEM private key") from exc
    if not isinstance(key, kind):
        raise ValidationError(f"{what} is not the right kind of key")


def token_uri_check(token_uri: str) -> None:
    """Only the token endpoints the operator allows (PUSH_FCM_TOKEN_URIS): a tenant-supplied
    service account must not make gamify post to an address of the tenant's choosing."""
    if token_uri not in django_settings.PUSH_FCM_TOKEN_URIS:
        allowed = ", ".join(django_settings.PUSH_FCM_TOKEN_URIS)
        raise ValidationError(f"serviceAccount.token_uri must be one of: {allowed}")


def credentials_check(
    kind: str, settings: dict[str, Any], secrets: dict[str, Any]
) -> dict[str, Any]:
    """Raise ValidationError unless the channel can sign its requests; returns the settings to
    store (FCM's project id is taken from its service account)."""
    missing = [f for f in REQUIRED[kind] if not (settings.get(f) or secrets.get(f))]
    if missing:
        raise ValidationError(f"{kind} channels need {listed(missing)}")
    if kind == PushKind.APNS:
        for name, (pattern, what) in _APNS_IDS.items():
            if not pattern.match(str(settings[name])):
                raise ValidationError(f"{name} must be {what}, nothing else")
        _private_key(secrets["signingKey"], ec.EllipticCurvePrivateKey, "signingKey (the .p8 file)")
        return {**settings, "sandbox": bool(settings.get("sandbox", False))}
    if kind == PushKind.FCM:
        account = secrets["serviceAccount"]
        absent = [f for f in SERVICE_ACCOUNT_FIELDS if not isinstance(account.get(f), str)]
        if absent:
            raise ValidationError(f"serviceAccount lacks {', '.join(absent)}")
        if not _PROJECT_ID.match(account["project_id"]):
            raise ValidationError(
                "serviceAccount.project_id must be a Google Cloud project id: letters, digits "
                "and - . : _ (at most 100), nothing else"
            )
        _private_key(account["private_key"], rsa.RSAPrivateKey, "serviceAccount.private_key")
        token_uri_check(account["token_uri"])
        return {"projectId": account["project_id"]}
    return {}
