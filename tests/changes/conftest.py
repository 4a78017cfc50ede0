"""The dashboard tests' staff member, for the configuration pages."""

from tests.dashboard.conftest import staff_client  # noqa: F401 - a fixture
