"""Apple Push Notification service client: one HTTP/2 POST per device token, authenticated with
a provider token (an ES256 JWT signed with the team's .p8 key).

Apple wants provider tokens refreshed at least hourly and rejects refreshes more often than
every 20 minutes (TooManyProviderTokenUpdates), so one token per key is cached for the whole
process and reused for 50 minutes.
"""

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx
import jwt

from apps.notifications.push.providers.base import PushNotification, TokenResult, token_hash
from apps.notifications.push.providers.http import (
    HttpClientOwner,
    retry_after_seconds,
    unanswered,
)

logger = logging.getLogger("gamify.notifications.push")

PAYLOAD_LIMIT = 4096  # bytes of UTF-8 JSON; APNs answers 413 PayloadTooLarge beyond it
JWT_REUSE_SECONDS = 50 * 60
ELLIPSIS = "…"

# 410 is always a dead token; these 400 reasons mean the token will never work for this app.
_DEAD_REASONS = frozenset({"Unregistered", "BadDeviceToken", "DeviceTokenNotForTopic"})

_jwt_lock = threading.Lock()
# (team id, key id, key digest) -> (jwt, minted at). The digest is in the key so that a channel
# naming another tenant's team and key id, with a key of its own, cannot reuse their token.
_jwt_cache: dict[tuple[str, str, str], tuple[str, float]] = {}


class SigningKeyError(Exception):
    """The channel's signing key cannot sign a provider token: a misconfiguration."""


def reset_caches() -> None:
    with _jwt_lock:
        _jwt_cache.clear()


def provider_token(team_id: str, key_id: str, signing_key_pem: str, stale: str = "") -> str:
    """The cached provider token for this key, minted anew when older than 50 minutes or when
    it is `stale` (APNs said it expired). Passing the rejected token rather than a "force" flag
    means that of several threads told at once, only the first mints a replacement."""
    now = time.time()
    cache_key = (team_id, key_id, hashlib.sha256(signing_key_pem.encode()).hexdigest())
    with _jwt_lock:
        cached = _jwt_cache.get(cache_key)
        if cached and cached[0] != stale and now - cached[1] < JWT_REUSE_SECONDS:
            return cached[0]
        try:
            token = jwt.encode(
                {"iss": team_id, "iat": int(now)},
                signing_key_pem,
                algorithm="ES256",
                headers={"kid": key_id},
            )
        except (ValueError, TypeError, jwt.PyJWTError) as exc:
            raise SigningKeyError(type(exc).__name__) from exc
        _jwt_cache[cache_key] = (token, now)
        return token


def apns_payload(notification: PushNotification) -> bytes:
    """The JSON payload, with the body (then, if need be, the title) shortened to fit the 4 KB
    limit: a long message should arrive truncated rather than not at all."""
    title, body = notification.title, notification.body
    encoded = _encode(notification, title, body)
    if len(encoded) <= PAYLOAD_LIMIT:
        return encoded
    body = _longest_fitting(lambda text: _encode(notification, title, text), body)
    encoded = _encode(notification, title, body)
    if len(encoded) <= PAYLOAD_LIMIT:
        return encoded
    title = _longest_fitting(lambda text: _encode(notification, text, body), title)
    # Custom data alone may still exceed the limit; APNs then answers 413, a permanent failure.
    return _encode(notification, title, body)


def _encode(notification: PushNotification, title: str, body: str) -> bytes:
    payload: dict[str, Any] = dict(notification.data)
    # Custom data must not replace the alert itself; an explicit url wins over data["url"].
    payload["aps"] = {"alert": {"title": title, "body": body}, "sound": "default"}
    if notification.url:
        payload["url"] = notification.url
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def _longest_fitting(encode: Callable[[str], bytes], text: str) -> str:
    """The longest prefix of `text` (whole code points, so never a split UTF-8 sequence) that,
    followed by an ellipsis, keeps the payload within the limit. Binary search: the payload's
    size grows with the prefix. Every character takes at least a byte, hence the upper bound."""
    low, high = 0, min(len(text), PAYLOAD_LIMIT)
    while low < high:
        middle = (low + high + 1) // 2
        if len(encode(text[:middle] + ELLIPSIS)) <= PAYLOAD_LIMIT:
            low = middle
        else:
            high = middle - 1
    return text[:low].rstrip() + ELLIPSIS if low < len(text) else text


def _reason(response: httpx.Response) -> str:
    try:
        reason = response.json().get("reason")
    except (ValueError, AttributeError):
        reason = None
    return str(reason) if reason else f"HTTP {response.status_code}"


def _result(token: str, response: httpx.Response) -> TokenResult:
    status = response.status_code
    if status == 200:
        return TokenResult(token, ok=True, status_code=status)
    reason = _reason(response)
    if status == 410 or (status == 400 and reason in _DEAD_REASONS):
        return TokenResult(token, ok=False, status_code=status, reason=reason, dead=True)
    if status == 429 or status >= 500:
        return TokenResult(
            token,
            ok=False,
            status_code=status,
            reason=reason,
            temporary=True,
            retry_after=retry_after_seconds(response),
        )
    return TokenResult(token, ok=False, status_code=status, reason=reason)


class ApnsProvider(HttpClientOwner):
    kind = "apns"

    def __init__(
        self,
        team_id: str,
        key_id: str,
        bundle_id: str,
        signing_key_pem: str,
        base_url: str,
        client: httpx.Client | None = None,
    ) -> None:
        self.team_id = team_id
        self.key_id = key_id
        self.bundle_id = bundle_id
        self._signing_key_pem = signing_key_pem
        self.base_url = base_url.rstrip("/")
        super().__init__(client)

    def send(self, notification: PushNotification, tokens: list[str]) -> list[TokenResult]:
        payload = apns_payload(notification)
        results: list[TokenResult] = []
        try:
            for token in tokens:
                results.append(self._send_one(payload, token))
        except SigningKeyError as exc:
            logger.warning("apns key %r of team %r cannot sign: %s", self.key_id, self.team_id, exc)
            reason = f"InvalidSigningKey: {exc}"
            results += [TokenResult(t, ok=False, reason=reason) for t in tokens[len(results) :]]
        return results

    def _send_one(self, payload: bytes, token: str) -> TokenResult:
        bearer = self._provider_token()
        result = self._post(payload, token, bearer)
        # An expired token is ours to renew; InvalidProviderToken is a misconfiguration that a
        # new token from the same key would not fix, so it stays a permanent failure.
        if result.status_code == 403 and result.reason == "ExpiredProviderToken":
            result = self._post(payload, token, self._provider_token(stale=bearer))
        if not result.ok:
            logger.info(
                "apns token %s: %s %r", token_hash(token), result.status_code, result.reason
            )
        return result

    def _provider_token(self, stale: str = "") -> str:
        return provider_token(self.team_id, self.key_id, self._signing_key_pem, stale)

    def _post(self, payload: bytes, token: str, bearer: str) -> TokenResult:
        headers = {
            "authorization": f"bearer {bearer}",
            "apns-topic": self.bundle_id,
            "apns-push-type": "alert",
            "apns-priority": "10",
            "content-type": "application/json",
        }
        # Quoted so that a malformed token cannot reach another path on the APNs host.
        url = f"{self.base_url}/3/device/{quote(token, safe='')}"
        try:
            response = self._client.post(url, content=payload, headers=headers)
        except httpx.RequestError as exc:
            return unanswered(token, exc)
        return _result(token, response)
