"""Brute-force protection of the dashboard login (django-axes)."""

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client, override_settings

LOGIN = "/dashboard/login/?next=/dashboard/"
PASSWORD = "the-right-password"


@pytest.fixture
def admin_user(db: Any) -> Any:
    return get_user_model().objects.create_superuser("admin", "a@example.com", PASSWORD)


def attempt(
    client: Client, password: str, username: str = "admin", address: str = "10.0.0.1"
) -> Any:
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


def test_the_right_password_logs_in(admin_user: Any) -> None:
    response = attempt(Client(), PASSWORD)
    assert response.status_code == 302
    assert response["Location"] == "/dashboard/"


def test_repeated_failures_lock_the_username_out_from_that_address(
    settings: Any, admin_user: Any
) -> None:
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert attempt(client, "wrong").status_code == 200  # the form, with its error
    locked = attempt(client, "wrong")
    assert locked.status_code == 429
    assert "Too many failed login attempts" in locked.content.decode()
    assert "axes_reset_username" in locked.content.decode()
    assert int(locked["Retry-After"]) == 15 * 60

    # The right password no longer works from this address.
    assert attempt(client, PASSWORD).status_code == 429

    # The documented unlock command lifts the block.
    call_command("axes_reset_username", "admin")
    assert attempt(Client(), PASSWORD).status_code == 302


def test_failures_from_one_address_do_not_lock_the_username_out_of_another(
    settings: Any, admin_user: Any
) -> None:
    # Anyone could otherwise keep any staff member locked out by failing with their username.
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        attempt(Client(), "wrong", address="203.0.113.66")
    assert attempt(Client(), PASSWORD, address="203.0.113.66").status_code == 429
    assert attempt(Client(), PASSWORD, address="10.0.0.2").status_code == 302


def test_one_address_trying_many_usernames_is_locked_out(settings: Any, admin_user: Any) -> None:
    client = Client()
    for i in range(settings.AXES_FAILURE_LIMIT):
        attempt(client, "wrong", username=f"guess{i}")
    assert attempt(client, PASSWORD).status_code == 429
    # Another address is not affected.
    assert attempt(Client(), PASSWORD, address="10.0.0.9").status_code == 302


@override_settings(TRUST_PROXY_HEADERS=True)
def test_behind_a_trusted_proxy_the_forwarded_address_counts(
    settings: Any, admin_user: Any
) -> None:
    client = Client()
    for i in range(settings.AXES_FAILURE_LIMIT):
        client.post(
            LOGIN,
            {"username": f"guess{i}", "password": "wrong"},
            REMOTE_ADDR="127.0.0.1",
            HTTP_X_FORWARDED_FOR="spoofed, 203.0.113.7",
        )
    blocked = client.post(
        LOGIN,
        {"username": "admin", "password": PASSWORD},
        REMOTE_ADDR="127.0.0.1",
        HTTP_X_FORWARDED_FOR="203.0.113.7",
    )
    assert blocked.status_code == 429
    other = Client().post(
        LOGIN,
        {"username": "admin", "password": PASSWORD},
        REMOTE_ADDR="127.0.0.1",
        HTTP_X_FORWARDED_FOR="203.0.113.8",
    )
    assert other.status_code == 302
