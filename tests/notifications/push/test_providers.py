"""The provider clients against mock transports (request shapes, answer mapping, token caches)
and, once each, against the fake servers over real HTTP on 127.0.0.1."""

import datetime as dt
import email.utils
import json
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import jwt
import pytest
import time_machine
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from apps.notifications.push.providers import apns, fcm
from apps.notifications.push.providers.apns import ApnsProvider, apns_payload
from apps.notifications.push.providers.base import (
    PushNotification,
    PushProvider,
    TokenResult,
    token_hash,
)
from apps.notifications.push.providers.expo import ExpoProvider, ExpoReceipt, is_expo_token
from apps.notifications.push.providers.factory import ConsoleProvider, provider_for
from apps.notifications.push.providers.fcm import FcmProvider
from tests.notifications.push.fakes import Answer, FakeApns, FakeExpo, FakeFcm, fcm_error

NOTE = PushNotification("Well done", "You reached 10 words", url="app://x", data={"k": "v"})
T1, T2 = "a" * 64, "b" * 64
E1, E2 = "ExponentPushToken[one]", "ExponentPushToken[two]"
START = dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC)

Handler = Callable[[httpx.Request], httpx.Response]


def _pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> tuple[str, str]:
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


EC_KEY, EC_PUBLIC = _pem(ec.generate_private_key(ec.SECP256R1()))
RSA_KEY, RSA_PUBLIC = _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))
SERVICE_ACCOUNT = {
    "project_id": "sa-project",
    "private_key_id": "rsa-1",
    "private_key": RSA_KEY,
    "client_email": "push@p.iam.gserviceaccount.com",
    "token_uri": "https://oauth2.example/token",
}


@pytest.fixture(autouse=True)
def _empty_caches() -> Iterator[None]:
    apns.reset_caches()
    fcm.reset_caches()
    yield
    apns.reset_caches()
    fcm.reset_caches()


@pytest.fixture
def clock() -> Iterator[time_machine.Traveller]:
    with time_machine.travel(START, tick=False) as traveller:
        yield traveller


class Recorder:
    """A mock transport that records requests and answers with `handler`."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[httpx.Request] = []
        self.client = httpx.Client(transport=httpx.MockTransport(self._handle))

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.handler(request)


def answers(*responses: httpx.Response | Exception) -> Handler:
    """A handler giving these answers in turn, then 200s."""
    queue = list(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        answer = queue.pop(0) if queue else httpx.Response(200, json={})
        if isinstance(answer, Exception):
            raise answer
        return answer

    return handler


def one(result: TokenResult) -> tuple[bool, bool, bool, str]:
    return result.ok, result.dead, result.temporary, result.reason


# APNs


def apns_provider(recorder: Recorder, base_url: str = "https://apns.test") -> ApnsProvider:
    return ApnsProvider("TEAM", "KEY", "com.example.app", EC_KEY, base_url, recorder.client)


def bearer(request: httpx.Request) -> str:
    return request.headers["authorization"].split(" ", 1)[1]


def test_apns_posts_each_token_with_a_verifiable_provider_token(clock: Any) -> None:
    recorder = Recorder(answers())
    results = apns_provider(recorder).send(NOTE, [T1, T2])
    assert [r.ok for r in results] == [True, True]
    first, second = recorder.requests
    assert (first.method, first.url.path) == ("POST", f"/3/device/{T1}")
    assert second.url.path == f"/3/device/{T2}"
    assert first.headers["apns-topic"] == "com.example.app"
    assert (first.headers["apns-push-type"], first.headers["apns-priority"]) == ("alert", "10")
    assert first.headers["authorization"].startswith("bearer ")
    assert jwt.get_unverified_header(bearer(first)) == {"alg": "ES256", "kid": "KEY", "typ": "JWT"}
    claims = jwt.decode(bearer(first), EC_PUBLIC, algorithms=["ES256"])
    assert claims == {"iss": "TEAM", "iat": int(START.timestamp())}
    assert json.loads(first.content) == {
        "aps": {
            "alert": {"title": "Well done", "body": "You reached 10 words"},
            "sound": "default",
        },
        "url": "app://x",
        "k": "v",
    }


def test_apns_reuses_its_provider_token_for_50_minutes(clock: Any) -> None:
    recorder = Recorder(answers())
    provider = apns_provider(recorder)
    provider.send(NOTE, [T1])
    clock.shift(dt.timedelta(minutes=49))
    provider.send(NOTE, [T1])
    apns_provider(recorder).send(NOTE, [T1])  # another client with the same key shares it
    clock.shift(dt.timedelta(minutes=2))
    provider.send(NOTE, [T1])
    tokens = [bearer(r) for r in recorder.requests]
    assert tokens[0] == tokens[1] == tokens[2] != tokens[3]
    assert jwt.decode(tokens[3], EC_PUBLIC, algorithms=["ES256"])["iat"] == int(
        (START + dt.timedelta(minutes=51)).timestamp()
    )


def test_apns_threads_share_one_provider_token() -> None:
    with ThreadPoolExecutor(8) as pool:
        tokens = set(pool.map(lambda _: apns.provider_token("TEAM", "KEY", EC_KEY), range(16)))
    assert len(tokens) == 1


def test_apns_mints_a_new_token_after_expired_provider_token_and_retries_once(clock: Any) -> None:
    expired = httpx.Response(403, json={"reason": "ExpiredProviderToken"})
    recorder = Recorder(answers(expired, httpx.Response(200), httpx.Response(200)))
    provider = apns_provider(recorder)
    clock.shift(dt.timedelta(seconds=5))  # a new token must differ in iat
    [result, second] = provider.send(NOTE, [T1, T2])
    assert (result.ok, second.ok) == (True, True)
    tokens = [bearer(r) for r in recorder.requests]
    assert len(tokens) == 3
    assert tokens[0] != tokens[1] == tokens[2]


def test_apns_expired_twice_in_a_row_is_a_permanent_failure(clock: Any) -> None:
    expired = httpx.Response(403, json={"reason": "ExpiredProviderToken"})
    recorder = Recorder(lambda request: expired)
    [result] = apns_provider(recorder).send(NOTE, [T1])
    assert one(result) == (False, False, False, "ExpiredProviderToken")
    assert len(recorder.requests) == 2


def test_apns_invalid_provider_token_is_not_retried() -> None:
    recorder = Recorder(
        lambda request: httpx.Response(403, json={"reason": "InvalidProviderToken"})
    )
    [result] = apns_provider(recorder).send(NOTE, [T1])
    assert one(result) == (False, False, False, "InvalidProviderToken")
    assert len(recorder.requests) == 1


@pytest.mark.parametrize(
    ("status", "reason", "headers", "expected"),
    [
        (410, "Unregistered", {}, (False, True, False, "Unregistered")),
        (400, "BadDeviceToken", {}, (False, True, False, "BadDeviceToken")),
        (400, "DeviceTokenNotForTopic", {}, (False, True, False, "DeviceTokenNotForTopic")),
        (400, "BadTopic", {}, (False, False, False, "BadTopic")),
        (413, "PayloadTooLarge", {}, (False, False, False, "PayloadTooLarge")),
        (429, "TooManyRequests", {"retry-after": "30"}, (False, False, True, "TooManyRequests")),
        (503, "ServiceUnavailable", {}, (False, False, True, "ServiceUnavailable")),
        (500, None, {}, (False, False, True, "HTTP 500")),
    ],
)
def test_apns_answers_map_to_outcomes(
    status: int, reason: str | None, headers: dict[str, str], expected: tuple[Any, ...]
) -> None:
    body = json.dumps({"reason": reason}).encode() if reason else b"<html>oops</html>"
    recorder = Recorder(lambda request: httpx.Response(status, content=body, headers=headers))
    [result] = apns_provider(recorder).send(NOTE, [T1])
    assert one(result) == expected
    assert result.status_code == status
    assert result.retry_after == (30.0 if headers else None)


@pytest.mark.parametrize("error", [httpx.ConnectError("refused"), httpx.ReadTimeout("slow")])
def test_network_errors_are_temporary_for_every_provider(error: Exception) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/token":
            return httpx.Response(200, json={"access_token": "at", "expires_in": 3600})
        raise error

    providers: list[PushProvider] = [
        apns_provider(Recorder(fail)),
        FcmProvider(SERVICE_ACCOUNT, "https://fcm.test", Recorder(fail).client),
        ExpoProvider(None, "https://exp.test", Recorder(fail).client),
    ]
    for provider in providers:
        results = provider.send(NOTE, [T1, T2])
        assert [one(r) for r in results] == [(False, False, True, type(error).__name__)] * 2


def test_apns_truncates_a_huge_body_to_fit_4_kb_and_still_sends() -> None:
    body = "Ünïcödé 🎉 " * 1000
    payload = apns_payload(PushNotification("Title", body, url="app://x", data={"k": "v"}))
    assert len(payload) <= apns.PAYLOAD_LIMIT
    sent = json.loads(payload)["aps"]["alert"]["body"]
    assert sent.endswith("…")
    assert body.startswith(sent[:-1])
    assert len(payload) > apns.PAYLOAD_LIMIT - 10  # not shortened more than needed
    recorder = Recorder(answers())
    [result] = apns_provider(recorder).send(PushNotification("Title", body), [T1])
    assert result.ok
    assert len(recorder.requests[0].content) <= apns.PAYLOAD_LIMIT


def test_apns_leaves_a_payload_that_fits_alone_and_shortens_the_title_last() -> None:
    assert json.loads(apns_payload(NOTE))["aps"]["alert"]["body"] == NOTE.body
    payload = apns_payload(PushNotification("T" * 5000, "B" * 5000))
    alert = json.loads(payload)["aps"]["alert"]
    assert len(payload) <= apns.PAYLOAD_LIMIT
    assert (alert["body"], alert["title"][-2:]) == ("…", "T…")


def test_apns_quotes_a_token_that_would_change_the_path() -> None:
    recorder = Recorder(answers())
    apns_provider(recorder).send(NOTE, ["../../x?y"])
    assert recorder.requests[0].url.raw_path == b"/3/device/..%2F..%2Fx%3Fy"


def test_apns_with_an_unusable_key_fails_every_token_permanently_without_sending() -> None:
    recorder = Recorder(answers())
    provider = ApnsProvider("TEAM", "KEY", "app", "not a key", "https://apns.test", recorder.client)
    results = provider.send(NOTE, [T1, T2])
    assert [(r.ok, r.temporary, r.dead) for r in results] == [(False, False, False)] * 2
    assert results[0].reason.startswith("InvalidSigningKey")
    assert recorder.requests == []


def test_retry_after_may_be_an_http_date(clock: Any) -> None:
    later = email.utils.format_datetime(START + dt.timedelta(seconds=120), usegmt=True)
    for value, expected in [(later, 120.0), ("soon", None), ("-5", 0.0), ("2.5", 2.5)]:
        response = httpx.Response(503, headers={"retry-after": value})
        assert apns.retry_after_seconds(response) == expected, value


# FCM


def fcm_handler(*sends: httpx.Response, tokens: list[str] | None = None) -> Handler:
    """Token endpoint answers access tokens from `tokens` (at-1, at-2, ...); the sends answer
    `sends` in turn, then 200."""
    issued = iter(tokens or [f"at-{n}" for n in range(1, 100)])
    queue = list(sends)

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/token":
            return httpx.Response(200, json={"access_token": next(issued), "expires_in": 3600})
        return queue.pop(0) if queue else httpx.Response(200, json={"name": "projects/p/m/1"})

    return handler


def fcm_provider(recorder: Recorder, project_id: str | None = "proj") -> FcmProvider:
    return FcmProvider(SERVICE_ACCOUNT, "https://fcm.test", recorder.client, project_id=project_id)


def sends(recorder: Recorder) -> list[httpx.Request]:
    return [r for r in recorder.requests if r.url.path != "/token"]


def test_fcm_exchanges_a_signed_assertion_and_sends_per_token(clock: Any) -> None:
    recorder = Recorder(fcm_handler())
    note = PushNotification("T", "B", url="app://x", data={"k": "v"})
    assert [r.ok for r in fcm_provider(recorder).send(note, [T1, T2])] == [True, True]
    exchange, first, _ = recorder.requests
    assert str(exchange.url) == SERVICE_ACCOUNT["token_uri"]
    assert exchange.headers["content-type"] == "application/x-www-form-urlencoded"
    form = dict(httpx.QueryParams(exchange.content.decode()))
    assert form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert jwt.get_unverified_header(form["assertion"])["kid"] == "rsa-1"
    claims = jwt.decode(
        form["assertion"], RSA_PUBLIC, algorithms=["RS256"], audience=SERVICE_ACCOUNT["token_uri"]
    )
    iat = int(START.timestamp())
    assert claims == {
        "iss": SERVICE_ACCOUNT["client_email"],
        "scope": "https://www.googleapis.com/auth/firebase.messaging",
        "aud": SERVICE_ACCOUNT["token_uri"],
        "iat": iat,
        "exp": iat + 3600,
    }
    assert first.url.path == "/v1/projects/proj/messages:send"
    assert first.headers["authorization"] == "Bearer at-1"
    assert json.loads(first.content) == {
        "message": {
            "token": T1,
            "notification": {"title": "T", "body": "B"},
            "data": {"k": "v", "url": "app://x"},
        }
    }


def test_fcm_uses_the_service_accounts_project_without_a_project_id() -> None:
    recorder = Recorder(fcm_handler())
    fcm_provider(recorder, project_id=None).send(NOTE, [T1])
    assert sends(recorder)[0].url.path == "/v1/projects/sa-project/messages:send"


def test_fcm_caches_the_access_token_until_5_minutes_before_it_expires(clock: Any) -> None:
    recorder = Recorder(fcm_handler())
    fcm_provider(recorder).send(NOTE, [T1])
    clock.shift(dt.timedelta(minutes=54))
    fcm_provider(recorder).send(NOTE, [T1])  # shared by clients of the same account
    clock.shift(dt.timedelta(minutes=2))
    fcm_provider(recorder).send(NOTE, [T1])
    assert [r.headers["authorization"] for r in sends(recorder)] == [
        "Bearer at-1",
        "Bearer at-1",
        "Bearer at-2",
    ]


def test_fcm_drops_a_refused_access_token_and_retries_once_with_a_fresh_one() -> None:
    recorder = Recorder(fcm_handler(fcm_response(401, "UNAUTHENTICATED")))
    provider = fcm_provider(recorder)
    assert [r.ok for r in provider.send(NOTE, [T1, T2])] == [True, True]
    auths = [r.headers["authorization"] for r in sends(recorder)]
    assert auths == ["Bearer at-1", "Bearer at-2", "Bearer at-2"]
    provider.send(NOTE, [T1])
    assert sends(recorder)[-1].headers["authorization"] == "Bearer at-2"


def test_fcm_refused_again_after_renewal_is_a_permanent_failure() -> None:
    refused = fcm_response(401, "UNAUTHENTICATED")
    recorder = Recorder(fcm_handler(refused, refused, refused))
    results = fcm_provider(recorder).send(NOTE, [T1, T2])
    assert [one(r) for r in results] == [(False, False, False, "UNAUTHENTICATED")] * 2
    assert len([r for r in recorder.requests if r.url.path == "/token"]) == 2  # one renewal


def fcm_response(status: int, grpc_status: str, code: str | None = None, **headers: str) -> Any:
    answer = fcm_error(status, grpc_status, code)
    return httpx.Response(status, json=answer.body, headers=headers)


@pytest.mark.parametrize(
    ("response", "expected", "retry_after"),
    [
        (
            fcm_response(404, "NOT_FOUND", "UNREGISTERED"),
            (False, True, False, "UNREGISTERED"),
            None,
        ),
        (
            fcm_response(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH"),
            (False, True, False, "SENDER_ID_MISMATCH"),
            None,
        ),
        (
            fcm_response(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"),
            (False, False, False, "INVALID_ARGUMENT"),
            None,
        ),
        (fcm_response(400, "INVALID_ARGUMENT"), (False, False, False, "INVALID_ARGUMENT"), None),
        (
            fcm_response(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", **{"retry-after": "60"}),
            (False, False, True, "QUOTA_EXCEEDED"),
            60.0,
        ),
        (
            fcm_response(503, "UNAVAILABLE", "UNAVAILABLE"),
            (False, False, True, "UNAVAILABLE"),
            None,
        ),
        (fcm_response(500, "INTERNAL", "INTERNAL"), (False, False, True, "INTERNAL"), None),
        (httpx.Response(502, text="bad gateway"), (False, False, True, "HTTP 502"), None),
        (
            fcm_response(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR"),
            (False, False, False, "THIRD_PARTY_AUTH_ERROR"),
            None,
        ),
    ],
)
def test_fcm_answers_map_to_outcomes(
    response: httpx.Response, expected: tuple[Any, ...], retry_after: float | None
) -> None:
    recorder = Recorder(fcm_handler(response))
    [result] = fcm_provider(recorder).send(NOTE, [T1])
    assert one(result) == expected
    assert (result.status_code, result.retry_after) == (response.status_code, retry_after)
    assert len(sends(recorder)) == 1


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            httpx.Response(400, json={"error": "invalid_grant"}),
            "token exchange: HTTP 400 invalid_grant",
        ),
        (httpx.Response(503, text="down"), "token exchange: HTTP 503"),
        (httpx.ConnectTimeout("slow"), "token exchange: ConnectTimeout"),
        (httpx.Response(200, json={"no": "token"}), "token exchange: HTTP 200"),
    ],
)
def test_a_failed_token_exchange_makes_every_token_temporary(answer: Any, reason: str) -> None:
    recorder = Recorder(answers(answer))
    results = fcm_provider(recorder).send(NOTE, [T1, T2])
    assert [one(r) for r in results] == [(False, False, True, reason)] * 2
    assert len(recorder.requests) == 1


def test_an_fcm_service_account_that_cannot_sign_fails_permanently() -> None:
    recorder = Recorder(answers())
    broken = {**SERVICE_ACCOUNT, "private_key": "not a key"}
    results = FcmProvider(broken, "https://fcm.test", recorder.client).send(NOTE, [T1])
    assert one(results[0]) == (False, False, False, "InvalidServiceAccount: InvalidKeyError")
    no_email = {**SERVICE_ACCOUNT, "client_email": ""}
    results = FcmProvider(no_email, "https://fcm.test", recorder.client).send(NOTE, [T1])
    assert one(results[0]) == (False, False, False, "InvalidServiceAccount: no client_email")
    assert recorder.requests == []


def test_an_fcm_project_id_with_control_characters_cannot_forge_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A channel stored before project ids were checked may still carry one.
    recorder = Recorder(answers())
    broken = {**SERVICE_ACCOUNT, "private_key": "not a key"}
    provider = FcmProvider(
        broken, "https://fcm.test", recorder.client, project_id="p\nERROR forged line"
    )
    with caplog.at_level(logging.INFO, logger="gamify.notifications.push"):
        provider.send(NOTE, [T1])
    [record] = caplog.records
    assert "\n" not in record.getMessage()
    assert "'p\\nERROR forged line'" in record.getMessage()


# Expo


def expo_tickets(request: httpx.Request) -> httpx.Response:
    """Ok tickets, ids "t-<token>"."""
    messages = json.loads(request.content)
    return httpx.Response(
        200, json={"data": [{"status": "ok", "id": f"t-{m['to']}"} for m in messages]}
    )


def test_expo_sends_batches_of_100_and_keeps_the_order() -> None:
    recorder = Recorder(expo_tickets)
    tokens = [f"ExponentPushToken[{n}]" for n in range(250)]
    results = ExpoProvider("secret", "https://exp.test", recorder.client).send(NOTE, tokens)
    assert [r.token for r in results] == tokens
    assert [r.ticket_id for r in results] == [f"t-{t}" for t in tokens]
    assert [len(json.loads(r.content)) for r in recorder.requests] == [100, 100, 50]
    first = recorder.requests[0]
    assert (first.method, first.url.path) == ("POST", "/--/api/v2/push/send")
    assert first.headers["authorization"] == "Bearer secret"
    assert first.headers["accept"] == "application/json"
    assert json.loads(first.content)[0] == {
        "to": tokens[0],
        "title": "Well done",
        "body": "You reached 10 words",
        "data": {"k": "v", "url": "app://x"},
        "sound": "default",
    }


def test_expo_sends_no_authorization_without_an_access_token() -> None:
    recorder = Recorder(expo_tickets)
    ExpoProvider(None, "https://exp.test", recorder.client).send(NOTE, [E1])
    assert "authorization" not in recorder.requests[0].headers


def expo_error(error: str) -> dict[str, Any]:
    return {"status": "error", "message": f"{error}!", "details": {"error": error}}


def test_expo_tickets_map_to_outcomes() -> None:
    tickets = [
        {"status": "ok", "id": "t1"},
        expo_error("DeviceNotRegistered"),
        expo_error("MessageRateExceeded"),
        expo_error("MessageTooBig"),
        {"status": "error", "message": '"ExpoPushToken[4]" is odd'},
    ]
    recorder = Recorder(lambda request: httpx.Response(200, json={"data": tickets}))
    tokens = [f"ExpoPushToken[{n}]" for n in range(5)]
    results = ExpoProvider(None, "https://exp.test", recorder.client).send(NOTE, tokens)
    assert [one(r) for r in results] == [
        (True, False, False, ""),
        (False, True, False, "DeviceNotRegistered"),
        (False, False, True, "MessageRateExceeded"),
        (False, False, False, "MessageTooBig"),
        (False, False, False, f'"{token_hash("ExpoPushToken[4]")}" is odd'),  # no token
    ]
    assert results[0].ticket_id == "t1"


@pytest.mark.parametrize(
    ("response", "expected", "retry_after"),
    [
        (httpx.Response(429, headers={"retry-after": "7"}), (False, False, True, "HTTP 429"), 7.0),
        (httpx.Response(502, text="bad gateway"), (False, False, True, "HTTP 502"), None),
        (
            httpx.Response(400, json={"errors": [{"code": "VALIDATION_ERROR", "message": "no"}]}),
            (False, False, False, "VALIDATION_ERROR"),
            None,
        ),
        (httpx.Response(200, json={"data": [{"status": "ok", "id": "t"}]}), None, None),
    ],
)
def test_an_expo_request_refused_whole_fails_each_of_its_tokens(
    response: httpx.Response, expected: tuple[Any, ...] | None, retry_after: float | None
) -> None:
    recorder = Recorder(answers(response))
    results = ExpoProvider(None, "https://exp.test", recorder.client).send(NOTE, [E1, E2])
    # Two messages answered with one ticket cannot be matched up: not retried, not dead.
    unmatched = (False, False, False, "UnexpectedResponse")
    assert [one(r) for r in results] == [expected or unmatched] * 2
    assert [r.retry_after for r in results] == [retry_after] * 2


def test_expo_receipts_in_batches_of_1000_leave_out_those_not_ready() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        ids = json.loads(request.content)["ids"]
        data = {i: {"status": "ok"} for i in ids if i != "t-1"}
        data["t-2"] = expo_error("DeviceNotRegistered")
        data["t-3"] = expo_error("MessageTooBig")
        data.pop("t-4", None)
        return httpx.Response(200, json={"data": data})

    recorder = Recorder(handler)
    ids = [f"t-{n}" for n in range(2500)]
    receipts = ExpoProvider(None, "https://exp.test", recorder.client).receipts(ids)
    assert [len(json.loads(r.content)["ids"]) for r in recorder.requests] == [1000, 1000, 500]
    assert recorder.requests[0].url.path == "/--/api/v2/push/getReceipts"
    assert len(receipts) == 2498
    assert "t-1" not in receipts
    assert "t-4" not in receipts
    assert receipts["t-0"] == ExpoReceipt("t-0", ok=True)
    assert receipts["t-2"] == ExpoReceipt("t-2", False, "DeviceNotRegistered", dead=True)
    assert receipts["t-3"] == ExpoReceipt("t-3", False, "MessageTooBig", dead=False)


def test_expo_receipts_that_cannot_be_fetched_are_left_for_later() -> None:
    recorder = Recorder(answers(httpx.Response(503), httpx.ConnectError("refused")))
    provider = ExpoProvider(None, "https://exp.test", recorder.client)
    assert provider.receipts(["a"]) == {}
    assert provider.receipts(["a"]) == {}


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]", True),
        ("ExpoPushToken[xxxxxxxxxxxxxxxxxxxxxx]", True),
        ("ExponentPushToken[]", False),
        ("ExponentPushToken[a]b", False),
        ("a" * 64, False),
    ],
)
def test_expo_tokens_are_recognised(token: str, expected: bool) -> None:
    assert is_expo_token(token) is expected


# Factory and console


def test_the_factory_builds_each_provider_from_channel_settings(settings: Any) -> None:
    settings.PUSH_BACKEND = "providers"
    settings.PUSH_APNS_URL = "https://apns.prod"
    settings.PUSH_APNS_SANDBOX_URL = "https://apns.sandbox"
    settings.PUSH_FCM_URL = "https://fcm.test"
    settings.PUSH_EXPO_URL = "https://exp.test"
    settings.PUSH_FCM_TOKEN_URIS = [SERVICE_ACCOUNT["token_uri"]]
    recorder = Recorder(fcm_handler())
    apns_settings = {"teamId": "TEAM", "keyId": "KEY", "bundleId": "app"}
    for sandbox, host in [(True, "apns.sandbox"), (False, "apns.prod")]:
        provider = provider_for(
            "apns",
            {**apns_settings, "sandbox": sandbox},
            {"signingKey": EC_KEY},
            client=recorder.client,
        )
        assert (provider.kind, provider.send(NOTE, [T1])[0].ok) == ("apns", True)
        assert recorder.requests[-1].url.host == host
    provider = provider_for(
        "fcm", {"projectId": "proj"}, {"serviceAccount": SERVICE_ACCOUNT}, client=recorder.client
    )
    assert (provider.kind, provider.send(NOTE, [T1])[0].ok) == ("fcm", True)
    assert str(recorder.requests[-1].url) == "https://fcm.test/v1/projects/proj/messages:send"
    expo = Recorder(expo_tickets)
    provider = provider_for("expo", {}, {"accessToken": None}, client=expo.client)
    assert (provider.kind, provider.send(NOTE, [E1])[0].ok) == ("expo", True)
    assert str(expo.requests[-1].url) == "https://exp.test/--/api/v2/push/send"
    with pytest.raises(ValueError, match="unknown"):
        provider_for("sms", {}, {})
    with pytest.raises(ValueError, match="keyId"):
        provider_for("apns", {"teamId": "TEAM", "bundleId": "app"}, {"signingKey": EC_KEY})


def test_the_console_backend_logs_instead_of_sending(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.PUSH_BACKEND = "console"
    provider = provider_for("apns", {}, {})
    assert isinstance(provider, ConsoleProvider)
    assert provider.kind == "console"
    with caplog.at_level(logging.INFO, logger="gamify.notifications.push"):
        results = provider.send(NOTE, [T1, E1])
    assert [(r.token, r.ok) for r in results] == [(T1, True), (E1, True)]
    assert "You reached 10 words" in caplog.text
    assert T1 not in caplog.text
    assert E1 not in caplog.text


# Against the fake servers, over HTTP on 127.0.0.1


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(http2=True, timeout=httpx.Timeout(5.0), follow_redirects=False) as client:
        yield client


def test_apns_against_its_fake_server(http: httpx.Client) -> None:
    with FakeApns(public_key=EC_PUBLIC) as fake:
        fake.answer_for(T2, 410, {"reason": "Unregistered"})
        fake.enqueue(Answer(503, {"reason": "ServiceUnavailable"}, {"retry-after": "3"}))
        provider = ApnsProvider("TEAM", "KEY", "app", EC_KEY, fake.base_url, http)
        results = provider.send(NOTE, [T1, T2])
        assert [one(r) for r in results] == [
            (False, False, True, "ServiceUnavailable"),
            (False, True, False, "Unregistered"),
        ]
        assert results[0].retry_after == 3.0
        assert provider.send(NOTE, [T1])[0].ok
    assert fake.tokens_sent == [T1, T2, T1]
    assert fake.requests[0].headers["apns-topic"] == "app"
    assert fake.requests[0].json["aps"]["alert"]["title"] == "Well done"


def test_fcm_against_its_fake_server(http: httpx.Client) -> None:
    with FakeFcm() as fake:
        fake.answer_for(T2, *fcm_args(fcm_error(404, "NOT_FOUND", "UNREGISTERED")))
        provider = FcmProvider(fake.service_account(RSA_KEY), fake.base_url, http)
        assert [one(r) for r in provider.send(NOTE, [T1, T2])] == [
            (True, False, False, ""),
            (False, True, False, "UNREGISTERED"),
        ]
        fake.revoke_access_tokens()
        assert provider.send(NOTE, [T1])[0].ok  # renewed at the token endpoint
    assert fake.tokens_sent == [T1, T2, T1, T1]
    assert len(fake.access_tokens) == 2
    exchange = fake.requests[0]
    assert (exchange.path, exchange.form["grant_type"]) == (
        "/token",
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
    )
    assert jwt.decode(exchange.form["assertion"], RSA_PUBLIC, ["RS256"], audience=fake.token_uri)


def fcm_args(answer: Answer) -> tuple[int, Any]:
    return answer.status, answer.body


def test_expo_against_its_fake_server(http: httpx.Client) -> None:
    with FakeExpo() as fake:
        fake.ticket_for(E2, expo_error("DeviceNotRegistered"))
        fake.enqueue(Answer(429, headers={"retry-after": "1"}))
        provider = ExpoProvider("secret", fake.base_url, http)
        assert [one(r) for r in provider.send(NOTE, [E1, E2])] == [
            (False, False, True, "HTTP 429")
        ] * 2
        ok, dead = provider.send(NOTE, [E1, E2])
        assert (ok.ok, dead.dead) == (True, True)
        assert ok.ticket_id
        fake.receipt_for(E1, None)
        assert provider.receipts([ok.ticket_id]) == {}  # not ready yet
        fake.receipt_for(E1, expo_error("DeviceNotRegistered"))
        assert provider.receipts([ok.ticket_id]) == {
            ok.ticket_id: ExpoReceipt(ok.ticket_id, False, "DeviceNotRegistered", dead=True)
        }
    assert fake.tokens_sent == [E1, E2, E1, E2]
    assert fake.requests[0].headers["authorization"] == "Bearer secret"
