"""Rate limits per organization and tier (reference §4.10): 429 with Retry-After."""

from typing import Any

import pytest

from apps.core.api import ratelimit
from tests.factories import OrganizationWithKey, event_body


@pytest.fixture(autouse=True)
def fresh_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every request of a test falls in the same one-second window.
    monkeypatch.setattr(ratelimit.time, "time", lambda: 1_700_000_000.25)
    ratelimit._local_counts.clear()


def event(client: Any, user: str = "alice") -> Any:
    return client.post("/v1/metrics/words/event", event_body(user))


def test_tier_1_is_limited_per_organization_with_retry_after(
    settings: Any, api_client: Any, metric: Any, db: Any
) -> None:
    settings.RATE_LIMIT_TIER1 = 3
    assert [event(api_client).status_code for _ in range(3)] == [201, 201, 201]
    limited = event(api_client)
    assert limited.status_code == 429
    assert "tier 1 allows 3 requests per second" in limited.json()["error"]
    assert limited["Retry-After"] == "1"
    assert limited["Retry-After-Ms"] == "750"
    # The admin API is tier 1 too, and shares the organization's window.
    assert api_client.get("/admin/v1/metrics").status_code == 429
    # Tier 2 has its own limit.
    assert api_client.get("/v1/users/alice").status_code == 200

    other = OrganizationWithKey("Other")
    api_client.credentials(HTTP_X_API_KEY=other.admin_key)
    assert api_client.get("/admin/v1/metrics").status_code == 200  # another organization


def test_tier_2_limit(settings: Any, api_client: Any, metric: Any) -> None:
    settings.RATE_LIMIT_TIER2 = 2
    event(api_client)
    codes = [api_client.get("/v1/users/alice").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    assert event(api_client).status_code == 201  # tier 1 unaffected


def test_zero_disables_the_limit(settings: Any, api_client: Any, metric: Any) -> None:
    settings.RATE_LIMIT_TIER1 = 0
    assert {event(api_client).status_code for _ in range(20)} == {201}


def test_unauthenticated_requests_are_401_not_counted(settings: Any, client: Any, db: Any) -> None:
    settings.RATE_LIMIT_TIER2 = 1
    assert {client.get("/v1/users/alice").status_code for _ in range(3)} == {401}


def test_windows_are_shared_through_redis_when_configured(settings: Any) -> None:
    """With REDIS_URL the count lives in Redis: two processes share it (here: the counting
    function called with the Redis backend, as another process would)."""
    from django.core.cache.backends.redis import RedisCache

    backend = RedisCache("redis://127.0.0.1:6379/15", {})
    try:
        backend.clear()
    except Exception:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    name = "rate:test:1"
    assert [ratelimit._count_redis(backend, name) for _ in range(3)] == [1, 2, 3]
    client = backend._cache.get_client(backend.make_key(name))
    assert 0 < client.ttl(backend.make_key(name)) <= 2
    backend.clear()
