"""Expo push service client: batches of up to 100 messages per request, answered with one
ticket per message. A ticket only says Expo accepted the message; the receipt, fetched later
by ticket id, says whether Apple or Google did (and whether the device is gone).
"""

import logging
import re
from dataclasses import dataclass
from typing import Any

import httpx

from apps.notifications.push.providers.base import PushNotification, TokenResult, token_hash
from apps.notifications.push.providers.http import (
    HttpClientOwner,
    retry_after_seconds,
    unanswered,
)

logger = logging.getLogger("gamify.notifications.push")

# Expo's documented limits: 100 messages per send request, 1,000 ids per receipts request.
SEND_BATCH = 100
RECEIPTS_BATCH = 1000

_EXPO_TOKEN = re.compile(r"(?:ExponentPushToken|ExpoPushToken)\[[^\[\]\s]+\]")


def _scrubbed(text: str) -> str:
    """Expo's messages quote the token ('"ExponentPushToken[...]" is not a registered push
    notification recipient'); reasons end up in logs and the delivery log, tokens must not."""
    return _EXPO_TOKEN.sub(lambda match: token_hash(match[0]), text)


def is_expo_token(token: str) -> bool:
    return _EXPO_TOKEN.fullmatch(token) is not None


@dataclass(frozen=True)
class ExpoReceipt:
    ticket_id: str
    ok: bool
    reason: str = ""
    dead: bool = False


def _error_name(answer: dict[str, Any]) -> str:
    """Expo's machine-readable error ("DeviceNotRegistered"), else its message."""
    details = answer.get("details")
    error = details.get("error") if isinstance(details, dict) else None
    return _scrubbed(str(error or answer.get("message") or "error"))


def _ticket_result(token: str, ticket: Any) -> TokenResult:
    if not isinstance(ticket, dict):
        return TokenResult(token, ok=False, status_code=200, reason="UnexpectedResponse")
    if ticket.get("status") == "ok":
        ticket_id = str(ticket["id"]) if ticket.get("id") else None
        return TokenResult(token, ok=True, status_code=200, ticket_id=ticket_id)
    reason = _error_name(ticket)
    return TokenResult(
        token,
        ok=False,
        status_code=200,
        reason=reason,
        dead=reason == "DeviceNotRegistered",
        temporary=reason == "MessageRateExceeded",
    )


def _request_failure(tokens: list[str], response: httpx.Response) -> list[TokenResult]:
    """A whole request refused: every message of it shares the outcome."""
    status = response.status_code
    try:
        errors = response.json().get("errors") or []
        reason = _scrubbed(str(errors[0].get("code") or errors[0].get("message") or ""))
    except (ValueError, AttributeError, IndexError, TypeError):
        reason = ""
    reason = reason or f"HTTP {status}"
    temporary = status == 429 or status >= 500
    retry_after = retry_after_seconds(response) if temporary else None
    return [
        TokenResult(
            t,
            ok=False,
            status_code=status,
            reason=reason,
            temporary=temporary,
            retry_after=retry_after,
        )
        for t in tokens
    ]


def _messages(notification: PushNotification, tokens: list[str]) -> list[dict[str, Any]]:
    data: dict[str, Any] = dict(notification.data)
    if notification.url:
        data["url"] = notification.url
    return [
        {
            "to": token,
            "title": notification.title,
            "body": notification.body,
            "data": data,
            "sound": "default",
        }
        for token in tokens
    ]


def _tickets(response: httpx.Response, count: int) -> list[Any] | None:
    """The tickets of a 200 answer, or None when they cannot be matched to the messages."""
    try:
        tickets = response.json().get("data")
    except (ValueError, AttributeError):
        return None
    return tickets if isinstance(tickets, list) and len(tickets) == count else None


def _receipt(ticket_id: str, answer: Any) -> ExpoReceipt:
    if isinstance(answer, dict) and answer.get("status") == "ok":
        return ExpoReceipt(ticket_id, ok=True)
    reason = _error_name(answer) if isinstance(answer, dict) else "UnexpectedResponse"
    return ExpoReceipt(ticket_id, ok=False, reason=reason, dead=reason == "DeviceNotRegistered")


class ExpoProvider(HttpClientOwner):
    kind = "expo"

    def __init__(
        self, access_token: str | None, base_url: str, client: httpx.Client | None = None
    ) -> None:
        self._access_token = access_token
        self.base_url = base_url.rstrip("/")
        super().__init__(client)

    def send(self, notification: PushNotification, tokens: list[str]) -> list[TokenResult]:
        results: list[TokenResult] = []
        for start in range(0, len(tokens), SEND_BATCH):
            results += self._send_batch(notification, tokens[start : start + SEND_BATCH])
        return results

    def receipts(self, ticket_ids: list[str]) -> dict[str, ExpoReceipt]:
        """The receipts that are ready. An id left out is not ready yet, or its request failed:
        either way, ask again later."""
        found: dict[str, ExpoReceipt] = {}
        for start in range(0, len(ticket_ids), RECEIPTS_BATCH):
            found.update(self._receipts_batch(ticket_ids[start : start + RECEIPTS_BATCH]))
        return found

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "application/json"}
        if self._access_token:
            headers["authorization"] = f"Bearer {self._access_token}"
        return headers

    def _send_batch(self, notification: PushNotification, tokens: list[str]) -> list[TokenResult]:
        messages = _messages(notification, tokens)
        url = f"{self.base_url}/--/api/v2/push/send"
        try:
            response = self._client.post(url, json=messages, headers=self._headers())
        except httpx.RequestError as exc:
            return [unanswered(t, exc) for t in tokens]
        if response.status_code != 200:
            logger.warning("expo send of %d messages: HTTP %d", len(tokens), response.status_code)
            return _request_failure(tokens, response)
        tickets = _tickets(response, len(tokens))
        if tickets is None:
            # Not retried: Expo may have accepted some of these, and a retry would repeat them.
            return [
                TokenResult(t, ok=False, status_code=200, reason="UnexpectedResponse")
                for t in tokens
            ]
        results = [
            _ticket_result(token, ticket) for token, ticket in zip(tokens, tickets, strict=True)
        ]
        for result in results:
            if not result.ok:
                logger.info("expo token %s: %s", token_hash(result.token), result.reason)
        return results

    def _receipts_batch(self, ticket_ids: list[str]) -> dict[str, ExpoReceipt]:
        url = f"{self.base_url}/--/api/v2/push/getReceipts"
        try:
            response = self._client.post(url, json={"ids": ticket_ids}, headers=self._headers())
        except httpx.RequestError as exc:
            logger.warning("expo receipts: %s", type(exc).__name__)
            return {}
        try:
            answers = response.json().get("data") if response.status_code == 200 else None
        except (ValueError, AttributeError):
            answers = None
        if not isinstance(answers, dict):
            logger.warning("expo receipts: HTTP %d, no receipts", response.status_code)
            return {}
        wanted = set(ticket_ids)
        return {tid: _receipt(tid, answer) for tid, answer in answers.items() if tid in wanted}
