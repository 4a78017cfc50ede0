"""Fixtures of the analytics tests: a staff member's dashboard client."""

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client


@pytest.fixture
def staff_client(db: Any) -> Client:
    user = get_user_model().objects.create_superuser(username="staff", password="unused-here")
    client = Client()
    client.force_login(user)
    return client
