"""Rate limits per organization and tier (reference §4.10): 429 with Retry-After."""

import multiprocessing
import socket
import uuid
from typing import Any

import pytest

from apps.core.api import ratelimit
from tests.factories import OrganizationWithKey, event_body

REDIS = "redis://127.0.0.1:6379/3"


@pytest.fixture(autouse=True)
def fresh_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every request of a test falls in the same one-second window.
    monkeypatch.setattr(ratelimit.time, "time", lambda: 1_700_000_000.25)
    monkeypatch.setattr(ratelimit, "_redis_failed_at", None)
    ratelimit._local_counts.clear()


@pytest.fixture
def redis_cache(settings: Any) -> None:
    """REDIS_URL as production sets it (gamify/settings.py), on the tests' Redis database."""
    import redis

    try:
        redis.Redis.from_url(REDIS, socket_connect_timeout=0.5).ping()
    except redis.RedisError:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }


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


def _worker(subject: str, sends: Any) -> None:
    sends.send([ratelimit.rate_take(subject, 5) is None for _ in range(5)])


def test_with_redis_every_process_counts_in_one_window(redis_cache: None) -> None:
    """The issue's measurement: a limit of 5/s let 20/s through 4 workers. Four processes now
    take 5 requests each in one second, and 5 of the 20 are let through."""
    subject = f"test:{uuid.uuid4()}"
    context = multiprocessing.get_context("fork")
    pipes = [context.Pipe(duplex=False) for _ in range(4)]
    workers = [context.Process(target=_worker, args=(subject, sends)) for _, sends in pipes]
    for worker in workers:
        worker.start()
    allowed = [sum(received.recv()) for received, _ in pipes]
    for worker in workers:
        worker.join(timeout=10)
    assert sum(allowed) == 5
    # The window is a key in Redis, gone after the second that follows.
    import redis

    client = redis.Redis.from_url(REDIS)
    [key] = client.keys(f"*rate:{subject}:*")
    assert int(client.get(key)) == 20
    assert 0 < client.ttl(key) <= 2


def test_an_unreachable_redis_leaves_the_limit_to_each_process(
    settings: Any, api_client: Any, metric: Any
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/3",
        }
    }
    settings.RATE_LIMIT_TIER1 = 2
    assert [event(api_client).status_code for _ in range(3)] == [201, 201, 429]
