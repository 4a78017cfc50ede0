"""Firebase Cloud Messaging (HTTP v1) client: one POST per device token, authenticated with an
OAuth2 access token that the service account obtains with the JWT bearer grant (RFC 7523).

Access tokens last an hour; one per service account is cached for the whole process and
renewed five minutes before it expires, so a batch never starts with a token about to lapse.
"""

import hashlib
import logging
import threading
import time
from dataclasses import dataclass
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

SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
ASSERTION_LIFETIME = 3600
REFRESH_MARGIN = 5 * 60

_FCM_ERROR_TYPE = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
_DEAD_CODES = frozenset({"UNREGISTERED", "SENDER_ID_MISMATCH"})
_TEMPORARY_CODES = frozenset({"QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL"})
_REQUIRED_FIELDS = ("client_email", "private_key", "token_uri")

_cache_lock = threading.Lock()
# (client email, key digest) -> (access token, renew after). The digest is in the key so that
# a channel naming another tenant's client_email, with a key of its own, cannot reuse theirs.
_access_tokens: dict[tuple[str, str], tuple[str, float]] = {}
# One exchange at a time per service account: a batch of workers whose token lapsed together
# should make one request to the token endpoint, not one each.
_exchange_locks: dict[tuple[str, str], threading.Lock] = {}


def reset_caches() -> None:
    with _cache_lock:
        _access_tokens.clear()
        _exchange_locks.clear()


class TokenExchangeError(Exception):
    """No access token: every token of the batch gets this outcome."""

    def __init__(self, reason: str, *, permanent: bool = False, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
        self.retry_after = retry_after

    def result_for(self, token: str) -> TokenResult:
        temporary = not self.permanent
        retry_after = self.retry_after if temporary else None
        return TokenResult(
            token, ok=False, reason=self.reason, temporary=temporary, retry_after=retry_after
        )


def _cache_key(service_account: dict[str, Any]) -> tuple[str, str]:
    key = str(service_account.get("private_key", ""))
    return str(service_account.get("client_email", "")), hashlib.sha256(key.encode()).hexdigest()


def access_token(client: httpx.Client, service_account: dict[str, Any], stale: str = "") -> str:
    """The cached access token for this service account, exchanged anew when it is due for
    renewal or is `stale` (FCM answered 401 to it). Raises TokenExchangeError."""
    key = _cache_key(service_account)
    with _cache_lock:
        exchange_lock = _exchange_locks.setdefault(key, threading.Lock())
    with exchange_lock:
        with _cache_lock:
            cached = _access_tokens.get(key)
        now = time.time()
        if cached and cached[0] != stale and now < cached[1]:
            return cached[0]
        if cached:
            with _cache_lock:
                _access_tokens.pop(key, None)
        token, expires_in = _exchange(client, service_account, now)
        with _cache_lock:
            _access_tokens[key] = (token, now + expires_in - REFRESH_MARGIN)
        return token


def _assertion(service_account: dict[str, Any], now: float) -> str:
    missing = [field for field in _REQUIRED_FIELDS if not service_account.get(field)]
    if missing:
        raise TokenExchangeError(f"InvalidServiceAccount: no {missing[0]}", permanent=True)
    claims = {
        "iss": service_account["client_email"],
        "scope": SCOPE,
        "aud": service_account["token_uri"],
        "iat": int(now),
        "exp": int(now) + ASSERTION_LIFETIME,
    }
    kid = service_account.get("private_key_id")
    try:
        return jwt.encode(
            claims, service_account["private_key"], "RS256", headers={"kid": kid} if kid else None
        )
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        # A key that cannot sign will not sign on the next attempt either. The class name
        # only: a key parser's message is no place to risk quoting key material from.
        raise TokenExchangeError(
            f"InvalidServiceAccount: {type(exc).__name__}", permanent=True
        ) from exc


def _exchange(
    client: httpx.Client, service_account: dict[str, Any], now: float
) -> tuple[str, float]:
    assertion = _assertion(service_account, now)
    grant = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion}
    try:
        response = client.post(service_account["token_uri"], data=grant)
    except httpx.RequestError as exc:
        raise TokenExchangeError(f"token exchange: {type(exc).__name__}") from exc
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code != 200 or not isinstance(body, dict) or "access_token" not in body:
        error = body.get("error", "") if isinstance(body, dict) else ""
        raise TokenExchangeError(
            f"token exchange: HTTP {response.status_code} {error}".rstrip(),
            retry_after=retry_after_seconds(response),
        )
    try:
        expires_in = float(body.get("expires_in", ASSERTION_LIFETIME))
    except (TypeError, ValueError):
        expires_in = ASSERTION_LIFETIME
    return str(body["access_token"]), expires_in


def _error(response: httpx.Response) -> tuple[str, str]:
    """(status, FCM errorCode) of an error answer; empty strings when absent."""
    try:
        error = response.json()["error"]
        status = str(error.get("status") or "")
        details = error.get("details") or []
        codes = [d.get("errorCode") for d in details if d.get("@type") == _FCM_ERROR_TYPE]
    except (ValueError, KeyError, TypeError, AttributeError):
        return "", ""
    code = str(codes[0] or "") if codes else ""
    return status, code


def _result(token: str, response: httpx.Response) -> TokenResult:
    http_status = response.status_code
    if http_status == 200:
        return TokenResult(token, ok=True, status_code=http_status)
    status, code = _error(response)
    reason = code or status or f"HTTP {http_status}"
    if code in _DEAD_CODES:
        return TokenResult(token, ok=False, status_code=http_status, reason=reason, dead=True)
    # INVALID_ARGUMENT lands here, permanent but not dead: a bad payload is not a bad token.
    temporary = http_status == 429 or http_status >= 500 or bool({status, code} & _TEMPORARY_CODES)
    return TokenResult(
        token,
        ok=False,
        status_code=http_status,
        reason=reason,
        temporary=temporary,
        retry_after=retry_after_seconds(response) if temporary else None,
    )


@dataclass
class _Auth:
    """The access token a batch is using, and whether the batch already renewed it once."""

    bearer: str
    renewed: bool = False


class FcmProvider(HttpClientOwner):
    kind = "fcm"

    def __init__(
        self,
        service_account: dict[str, Any],
        base_url: str,
        client: httpx.Client | None = None,
        *,
        project_id: str | None = None,
    ) -> None:
        self._service_account = service_account
        # The channel's projectId setting; the service account's own project otherwise.
        self.project_id = project_id or str(service_account.get("project_id", ""))
        self.base_url = base_url.rstrip("/")
        super().__init__(client)

    def send(self, notification: PushNotification, tokens: list[str]) -> list[TokenResult]:
        results: list[TokenResult] = []
        try:
            auth = _Auth(access_token(self._client, self._service_account))
            for token in tokens:
                results.append(self._send_one(notification, token, auth))
        except TokenExchangeError as exc:
            # %r: the project id and the reason come from the tenant's service account and
            # Google's answer; a control character in either must not forge a log line.
            logger.warning("fcm project %r: no access token: %r", self.project_id, exc.reason)
            results += [exc.result_for(token) for token in tokens[len(results) :]]
        return results

    def _send_one(self, notification: PushNotification, token: str, auth: _Auth) -> TokenResult:
        result = self._post(notification, token, auth.bearer)
        # 401 UNAUTHENTICATED: the access token was revoked or expired early. Renewed once per
        # batch, so that a project that refuses every token costs one exchange, not one per
        # device. (THIRD_PARTY_AUTH_ERROR is also a 401, but about the APNs key held by FCM.)
        refused = result.status_code == 401 and result.reason != "THIRD_PARTY_AUTH_ERROR"
        if refused and not auth.renewed:
            auth.bearer = access_token(self._client, self._service_account, auth.bearer)
            auth.renewed = True
            result = self._post(notification, token, auth.bearer)
        if not result.ok:
            logger.info("fcm token %s: %s %r", token_hash(token), result.status_code, result.reason)
        return result

    def _post(self, notification: PushNotification, token: str, bearer: str) -> TokenResult:
        data = {key: str(value) for key, value in notification.data.items()}
        if notification.url:
            data["url"] = notification.url
        message = {
            "token": token,
            "notification": {"title": notification.title, "body": notification.body},
            "data": data,
        }
        url = f"{self.base_url}/v1/projects/{quote(self.project_id, safe='')}/messages:send"
        try:
            response = self._client.post(
                url, json={"message": message}, headers={"authorization": f"Bearer {bearer}"}
            )
        except httpx.RequestError as exc:
            return unanswered(token, exc)
        return _result(token, response)
