from collections.abc import Iterator

import pytest

from apps.notifications.push.providers import apns, fcm


@pytest.fixture(autouse=True)
def _fresh_provider_tokens() -> Iterator[None]:
    # Provider tokens are cached per process; each test talks to a fresh fake provider.
    apns.reset_caches()
    fcm.reset_caches()
    yield
    apns.reset_caches()
    fcm.reset_caches()
