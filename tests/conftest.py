"""The small cast of fixtures: an organization (`org`), its default `tenant`, an
`other_tenant` in the same environment, and API clients carrying keys."""

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_create
from apps.core.config_cache import tenant_cache_clear
from apps.metrics.models import Metric
from tests import openapi_check
from tests.factories import MetricFactory, OrganizationWithKey, bump

# Property tests check rules, not speed: on a busy machine an example may take longer than
# hypothesis's default deadline of 200 ms (seen once on tests/streaks/test_domain.py), which
# would fail the run for nothing.
hypothesis_settings.register_profile("gamify", deadline=None)
hypothesis_settings.load_profile("gamify")


_DB_FIXTURES = {"db", "transactional_db", "live_server", "django_db_reset_sequences"}


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """With DATABASE_REPLICA_URLS (CI's topology), the replica aliases mirror the default
    database (gamify/settings.py, Django's TEST MIRROR), and lag-tolerant reads go to them
    (apps/core/replicas.py): a test that may use the default database may use its mirrors."""
    from django.conf import settings

    mirrors = [alias for aliases in settings.DATABASE_REPLICAS.values() for alias in aliases]
    if not mirrors:
        return
    for item in items:
        marker = item.get_closest_marker("django_db")
        if marker is None and not _DB_FIXTURES & set(getattr(item, "fixturenames", ())):
            continue
        kwargs = dict(marker.kwargs) if marker else {}
        if kwargs.get("databases") == "__all__":
            continue
        named = list(kwargs.get("databases") or ["default"])
        kwargs["databases"] = [*named, *(m for m in mirrors if m not in named)]
        # Before the test's own marker, so that it is the closest.
        marker = pytest.mark.django_db(*(marker.args if marker else ()), **kwargs)
        item.add_marker(marker, append=False)


@pytest.fixture(autouse=True, scope="session")
def _replica_mirrors_in_every_thread(request: Any) -> None:
    # Django's TEST MIRROR points the mirror's connection at the test database in the thread
    # that set the databases up only; a live server's threads would open the replica's own
    # database. Every thread's connection is made from these settings.
    from django.conf import settings
    from django.db import connections

    mirrors = [alias for aliases in settings.DATABASE_REPLICAS.values() for alias in aliases]
    if not mirrors:
        return
    request.getfixturevalue("django_db_setup")
    for alias in mirrors:
        mirrored = {**connections.settings["default"], "TEST": connections.settings[alias]["TEST"]}
        connections.settings[alias] = mirrored


@pytest.fixture(autouse=True, scope="session")
def _responses_match_the_documents() -> Iterator[None]:
    # Every API response a test receives is checked against the served OpenAPI documents
    # (tests/openapi_check.py; docs/style.md, "Tests").
    with openapi_check.installed():
        yield


@pytest.fixture(autouse=True)
def _live_server_responses_match_the_documents() -> Iterator[None]:
    # The live server's request threads record their mismatches; they fail the test here, after
    # the contract fixtures have waited for those threads.
    openapi_check.live_mismatches.clear()
    yield
    mismatches = list(openapi_check.live_mismatches)
    openapi_check.live_mismatches.clear()
    if mismatches:
        pytest.fail("\n\n".join(mismatches), pytrace=False)


@pytest.fixture(autouse=True)
def _one_cell_unless_marked(request: Any) -> Iterator[None]:
    # With CELL_DATABASE_URLS set (CI's topology run), only the tests marked `cells`
    # (tests/cells) see several cells; every other test runs as a single-cell install does,
    # its database checks and periodic jobs unchanged (apps/core/cells.py reads the setting
    # on each call).
    from django.conf import settings as django_settings
    from django.test import override_settings

    if not getattr(django_settings, "CELL_DATABASES", None) or request.node.get_closest_marker(
        "cells"
    ):
        yield
        return
    with override_settings(CELL_DATABASES={}):
        yield


@pytest.fixture(autouse=True)
def _fresh_config_cache() -> Iterator[None]:
    # The snapshot cache is per process and keyed by tenant pk + version; test databases reuse
    # pks, so start each test with an empty cache.
    tenant_cache_clear()
    yield
    tenant_cache_clear()


@pytest.fixture(autouse=True)
def _stale_rank_sets() -> None:
    # Rank sets in Redis (when configured) outlive each test's database rows.
    from apps.leaderboards import ranks

    ranks.reset()


@pytest.fixture(autouse=True)
def _broker_presumed_up() -> None:
    # A test that takes the broker down leaves its process resting from sends (apps/core/outbox.py).
    from apps.core.outbox import outbox_sends_resume

    outbox_sends_resume()


@pytest.fixture(autouse=True, scope="session")
def _rank_sets_removed() -> Iterator[None]:
    yield
    # Whatever this process wrote under its prefix, including with Redis switched on by a
    # test (`rank_store`) in a run without REDIS_URL.
    if redis_answers():
        from django.test import override_settings

        from apps.leaderboards import ranks

        with override_settings(LEADERBOARD_RANKS_REDIS_URL=RANKS_REDIS):
            ranks.forget_all()


# The Redis of the rank-store tests: REDIS_URL when set (each checkout its own database number).
RANKS_REDIS = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


def redis_answers(url: str = RANKS_REDIS) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=0.5).ping())
    except redis.RedisError:
        return False


@pytest.fixture(params=["postgres", "redis"])
def rank_store(request: Any, settings: Any) -> str:
    """Run a test with ranks counted by PostgreSQL, then with ranks in Redis (skipped when no
    Redis answers on 127.0.0.1:6379)."""
    from apps.leaderboards import ranks

    if request.param == "redis":
        if not redis_answers():
            pytest.skip("needs Redis on 127.0.0.1:6379")
        settings.LEADERBOARD_RANKS_REDIS_URL = RANKS_REDIS
        ranks.reset()
    else:
        settings.LEADERBOARD_RANKS_REDIS_URL = ""
    return str(request.param)


@pytest.fixture
def org(db: Any) -> OrganizationWithKey:
    return OrganizationWithKey("Acme")


@pytest.fixture
def tenant(org: OrganizationWithKey) -> Tenant:
    return org.tenant


@pytest.fixture
def other_tenant(org: OrganizationWithKey) -> Tenant:
    return tenant_create(org.environment, customer_id="customer-b", name="Customer B")


class Client(APIClient):
    """An APIClient that sends JSON by default."""

    def post(self, path: str, data: Any = None, format: str = "json", **kw: Any) -> Any:
        return super().post(path, data, format=format, **kw)

    def put(self, path: str, data: Any = None, format: str = "json", **kw: Any) -> Any:
        return super().put(path, data, format=format, **kw)

    def patch(self, path: str, data: Any = None, format: str = "json", **kw: Any) -> Any:
        return super().patch(path, data, format=format, **kw)


@pytest.fixture
def anon_client() -> Client:
    return Client()


@pytest.fixture
def api_client(org: OrganizationWithKey) -> Client:
    """Carries the organization's admin key; scoped to the default tenant."""
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    return client


@pytest.fixture
def other_tenant_client(org: OrganizationWithKey, other_tenant: Tenant) -> Client:
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key, HTTP_TENANT_ID=other_tenant.customer_id)
    return client


@pytest.fixture
def metric(tenant: Tenant) -> Metric:
    metric = MetricFactory(tenant=tenant, key="words", name="Words")
    bump(tenant)
    return metric
