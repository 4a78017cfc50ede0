"""The Redis Cluster of the rank-store tests (tests/leaderboards/redis_cluster.py)."""

from collections.abc import Iterator

import pytest

from tests.leaderboards import redis_cluster


@pytest.fixture(scope="session")
def redis_cluster_session() -> Iterator[redis_cluster.Cluster]:
    if not redis_cluster.available():
        pytest.skip("needs redis-server and redis-cli (or TEST_REDIS_CLUSTER_URL)")
    yield from redis_cluster.started()
