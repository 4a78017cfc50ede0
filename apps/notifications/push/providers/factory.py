"""From a channel's stored settings and decrypted secrets to a provider client.

Base URLs are Django settings so that tests and staging can point every client at local
fakes; PUSH_BACKEND=console (the default with DEBUG) logs instead of sending anything.
"""

import logging
from typing import Any

import httpx
from django.conf import settings as django_settings

from apps.notifications.push.providers.apns import ApnsProvider
from apps.notifications.push.providers.base import (
    PushNotification,
    PushProvider,
    TokenResult,
    token_hash,
)
from apps.notifications.push.providers.expo import ExpoProvider
from apps.notifications.push.providers.fcm import FcmProvider

logger = logging.getLogger("gamify.notifications.push")


class ConsoleProvider:
    """Logs what would be sent and reports every token as sent: local development needs no
    provider account, and nothing leaves the machine."""

    kind = "console"

    def send(self, notification: PushNotification, tokens: list[str]) -> list[TokenResult]:
        for token in tokens:
            logger.info(
                "push to %s: title=%r body=%r url=%r data=%r",
                token_hash(token),
                notification.title,
                notification.body,
                notification.url,
                notification.data,
            )
        return [TokenResult(token, ok=True) for token in tokens]

    def close(self) -> None:
        pass


def _required(values: dict[str, Any], key: str, kind: str) -> Any:
    value = values.get(key)
    if not value:
        raise ValueError(f"the {kind} channel has no {key}")
    return value


def provider_for(
    kind: str,
    settings: dict[str, Any],
    secrets: dict[str, Any],
    *,
    client: httpx.Client | None = None,
) -> PushProvider:
    """Raises ValueError for an unknown kind or a setting the channel lacks (channels are
    validated when saved, so either means a bug or a hand-edited row)."""
    if getattr(django_settings, "PUSH_BACKEND", "providers") == "console":
        return ConsoleProvider()
    if kind == "apns":
        sandbox = bool(settings.get("sandbox"))
        base_url = (
            getattr(django_settings, "PUSH_APNS_SANDBOX_URL", "https://api.sandbox.push.apple.com")
            if sandbox
            else getattr(django_settings, "PUSH_APNS_URL", "https://api.push.apple.com")
        )
        return ApnsProvider(
            team_id=_required(settings, "teamId", kind),
            key_id=_required(settings, "keyId", kind),
            bundle_id=_required(settings, "bundleId", kind),
            signing_key_pem=_required(secrets, "signingKey", kind),
            base_url=base_url,
            client=client,
        )
    if kind == "fcm":
        account = _required(secrets, "serviceAccount", kind)
        allowed = getattr(django_settings, "PUSH_FCM_TOKEN_URIS", [])
        if account.get("token_uri") not in allowed:
            raise ValueError("the service account's token_uri is not in PUSH_FCM_TOKEN_URIS")
        return FcmProvider(
            service_account=account,
            base_url=getattr(django_settings, "PUSH_FCM_URL", "https://fcm.googleapis.com"),
            client=client,
            project_id=_required(settings, "projectId", kind),
        )
    if kind == "expo":
        return ExpoProvider(
            access_token=secrets.get("accessToken") or None,
            base_url=getattr(django_settings, "PUSH_EXPO_URL", "https://exp.host"),
            client=client,
        )
    raise ValueError(f"unknown push provider kind {kind!r}")
