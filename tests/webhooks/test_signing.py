import base64
import re
import time

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from apps.webhooks.signing import (
    new_secret,
    signature_headers,
    standard_signature,
    trophy_signature,
)

# The Standard Webhooks spec's own example inputs, so the expected v1 signature below is the one
# published with the spec's reference libraries.
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = b'{"test": 2432232314}'


def test_trophy_signature_is_base64_hmac_sha256_keyed_with_the_secret_string() -> None:
    # Cross-checked with: printf '%s' '{"test": 2432232314}'
    #   | openssl dgst -sha256 -hmac 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' -binary | base64
    assert trophy_signature(SECRET, BODY) == "gOyKic480iEzoQZsrstNBP6nRnZXyFFNcX7ELDilyUw="


def test_trophy_signature_covers_the_raw_body_byte_for_byte() -> None:
    assert trophy_signature(SECRET, BODY) != trophy_signature(SECRET, BODY + b" ")
    assert trophy_signature(SECRET, BODY) != trophy_signature(SECRET + "x", BODY)


def test_standard_signature_matches_the_spec_test_vector() -> None:
    assert (
        standard_signature(SECRET, MSG_ID, TIMESTAMP, BODY)
        == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    )


def test_standard_signature_tolerates_a_secret_without_base64_padding() -> None:
    padded = "whsec_" + base64.b64encode(b"0123456789abcdef0").decode()
    assert padded.endswith("=")
    assert standard_signature(padded.rstrip("="), MSG_ID, TIMESTAMP, BODY) == standard_signature(
        padded, MSG_ID, TIMESTAMP, BODY
    )


@pytest.mark.parametrize("secret", ["whsec_not*base64!", "whsec_", ""])
def test_standard_signature_rejects_a_malformed_secret(secret: str) -> None:
    with pytest.raises(ValueError):
        standard_signature(secret, MSG_ID, TIMESTAMP, BODY)


def test_headers_carry_both_signatures_and_the_tenant() -> None:
    headers = signature_headers([SECRET], MSG_ID, TIMESTAMP, BODY, "customer-a")
    assert headers == {
        "Content-Type": "application/json",
        "X-Trophy-Signature": "gOyKic480iEzoQZsrstNBP6nRnZXyFFNcX7ELDilyUw=",
        "webhook-id": MSG_ID,
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
        "webhook-tenant": "customer-a",
    }


def test_headers_leave_out_the_tenant_when_there_is_none() -> None:
    assert "webhook-tenant" not in signature_headers([SECRET], MSG_ID, TIMESTAMP, BODY, None)


def test_headers_need_a_secret() -> None:
    with pytest.raises(ValueError):
        signature_headers([], MSG_ID, TIMESTAMP, BODY, None)


def test_headers_verify_with_the_independent_standard_webhooks_library() -> None:
    secret = new_secret()
    body = b'{"type":"points.changed","points":{"total":120}}'
    headers = signature_headers([secret], "msg_1", int(time.time()), body, None)
    assert Webhook(secret).verify(body, headers) == {
        "type": "points.changed",
        "points": {"total": 120},
    }


def test_standard_webhooks_library_rejects_a_tampered_body() -> None:
    secret = new_secret()
    body = b'{"total":120}'
    headers = signature_headers([secret], "msg_1", int(time.time()), body, None)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(b'{"total":121}', headers)


def test_during_a_rotation_receivers_with_either_secret_verify() -> None:
    new, old, unrelated = new_secret(), new_secret(), new_secret()
    body = b'{"type":"streak.extended"}'
    headers = signature_headers([new, old], "msg_2", int(time.time()), body, None)

    assert len(headers["webhook-signature"].split(" ")) == 2
    Webhook(new).verify(body, headers)
    Webhook(old).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(unrelated).verify(body, headers)
    # Trophy's header has room for one signature: the current secret's.
    assert headers["X-Trophy-Signature"] == trophy_signature(new, body)


def test_new_secret_is_whsec_and_32_random_bytes() -> None:
    secret = new_secret()
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{43}=", secret)
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert new_secret() != secret
