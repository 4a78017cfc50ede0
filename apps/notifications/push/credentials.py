"""What a push channel needs, per provider, checked before it is saved: a channel that cannot
sign its requests is refused at once, not discovered at the first send. The fields are named as
PushChannelSettings names them (the services store them as the admin API names them)."""

import re
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.conf import settings as django_settings

from apps.core.errors import ValidationError
from apps.core.wording import listed
from apps.notifications.choices import PushKind

# Non-secret settings and secret fields, by provider.
SETTINGS: dict[str, tuple[str, ...]] = {
    PushKind.APNS: ("team_id", "key_id", "bundle_id", "sandbox"),
    PushKind.FCM: (),
    PushKind.EXPO: (),
}
SECRETS: dict[str, tuple[str, ...]] = {
    PushKind.APNS: ("signing_key",),
    PushKind.FCM: ("service_account",),
    PushKind.EXPO: ("access_token",),
}
REQUIRED: dict[str, tuple[str, ...]] = {
    PushKind.APNS: ("team_id", "key_id", "bundle_id", "signing_key"),
    PushKind.FCM: ("service_account",),
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
    "team_id": (re.compile(r"[A-Za-z0-9]{1,20}\Z"), "letters and digits (Apple's Team ID)"),
    "key_id": (re.compile(r"[A-Za-z0-9]{1,20}\Z"), "letters and digits (the key's Key ID)"),
    "bundle_id": (
        re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,254}\Z"),
        "letters, digits, - and . (the app's bundle id)",
    ),
}


def _private_key(pem: str, kind: type, field: str, what: str) -> None:
    """`what`: how the message names the key, with `{field}` for the field it came in."""
    try:
        key = load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise ValidationError(
            f"{what} is not a PEM private key", fields=field, code="invalid"
        ) from exc
    if not isinstance(key, kind):
        raise ValidationError(f"{what} is not the right kind of key", fields=field, code="invalid")


def token_uri_check(token_uri: str) -> None:
    """Only the token endpoints the operator allows (PUSH_FCM_TOKEN_URIS): a tenant-supplied
    service account must not make gamify post to an address of the tenant's choosing."""
    if token_uri not in django_settings.PUSH_FCM_TOKEN_URIS:
        allowed = ", ".join(django_settings.PUSH_FCM_TOKEN_URIS)
        raise ValidationError(
            f"{{service_account}}.token_uri must be one of: {allowed}",
            fields="service_account",
            code="not_allowed",
        )


def credentials_check(
    kind: str, settings: dict[str, Any], secrets: dict[str, Any]
) -> dict[str, Any]:
    """Raise ValidationError unless the channel can sign its requests; returns the settings to
    store (FCM's project id is taken from its service account)."""
    missing = [f for f in REQUIRED[kind] if not (settings.get(f) or secrets.get(f))]
    if missing:
        placeholders = listed(["{" + f + "}" for f in missing])
        raise ValidationError(
            f"{kind} channels need {placeholders}", fields=missing, code="required"
        )
    if kind == PushKind.APNS:
        for name, (pattern, what) in _APNS_IDS.items():
            if not pattern.match(str(settings[name])):
                raise ValidationError(
                    f"{{{name}}} must be {what}, nothing else", fields=name, code="invalid"
                )
        _private_key(
            secrets["signing_key"],
            ec.EllipticCurvePrivateKey,
            "signing_key",
            "{signing_key} (the .p8 file)",
        )
        return {**settings, "sandbox": bool(settings.get("sandbox", False))}
    if kind == PushKind.FCM:
        account = secrets["service_account"]
        absent = [f for f in SERVICE_ACCOUNT_FIELDS if not isinstance(account.get(f), str)]
        if absent:
            raise ValidationError(
                f"{{service_account}} lacks {', '.join(absent)}",
                fields="service_account",
                code="required",
            )
        if not _PROJECT_ID.match(account["project_id"]):
            raise ValidationError(
                "{service_account}.project_id must be a Google Cloud project id: letters, digits "
                "and - . : _ (at most 100), nothing else",
                fields="service_account",
                code="invalid",
            )
        _private_key(
            account["private_key"],
            rsa.RSAPrivateKey,
            "service_account",
            "{service_account}.private_key",
        )
        token_uri_check(account["token_uri"])
        return {"project_id": account["project_id"]}
    return {}
