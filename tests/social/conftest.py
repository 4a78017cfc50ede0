# The logged-in superuser of the dashboard tests.
from tests.dashboard.conftest import staff_client  # noqa: F401 - a fixture, used by name
