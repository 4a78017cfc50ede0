"""Fixtures of the analytics tests: the dashboard tests' logged-in superuser."""

from tests.dashboard.conftest import staff_client

__all__ = ["staff_client"]
