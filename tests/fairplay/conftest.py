# The webhook receiver on 127.0.0.1 that the webhooks' own tests use.
from tests.webhooks.test_webhooks import receiver  # noqa: F401 - a fixture, used by name
