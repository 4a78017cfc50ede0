"""Fixtures of the contract suite: a live server, and official `trophy` SDK clients aimed at it.

Every test here talks HTTP to a real server thread through the SDK, so a response the SDK's
models cannot parse fails the test: if the SDK cannot parse a response, the response is wrong.
"""

import threading
from collections.abc import Iterator

import httpx
import pytest
from django.test.testcases import QuietWSGIRequestHandler
from pytest_django.live_server_helper import LiveServer
from trophy import TrophyApi, TrophyApiEnvironment
from trophy.types import CreatedMetric

from tests.contract.helpers import MakeClient, create_metric
from tests.factories import OrganizationWithKey


def _join_request_threads() -> None:
    """Wait until the live server has finished every request.

    A request thread runs Django's request_finished handlers after the client has its response,
    and keeps its keep-alive connection open until the client closes it. Left running, it would
    touch the shared in-memory database after the test has flushed it and re-blocked access (or
    after the server has stopped sharing the connection), so each test waits for them after
    closing its clients.
    """
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and "process_request_thread" in thread.name:
            thread.join(timeout=5)


@pytest.fixture(scope="session")
def server(live_server: LiveServer) -> Iterator[LiveServer]:
    # wsgiref writes a response's headers and body separately; with Nagle's algorithm on, the
    # body then waits for the client's delayed ACK (~40 ms) on every keep-alive request.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(QuietWSGIRequestHandler, "disable_nagle_algorithm", True)
        yield live_server
        _join_request_threads()


@pytest.fixture
def make_client(server: LiveServer, transactional_db: None) -> Iterator[MakeClient]:
    """Builds SDK clients. Their connections are closed, and the server's requests finished,
    before the database is flushed (this fixture depends on it, so it is torn down first)."""
    transports: list[httpx.Client] = []

    def make(api_key: str, *, tenant_id: str | None = None, api_prefix: str = "/v1") -> TrophyApi:
        http = httpx.Client(timeout=10)
        transports.append(http)
        return TrophyApi(
            api_key=api_key,
            tenant_id=tenant_id,
            environment=TrophyApiEnvironment(
                api=server.url + api_prefix, admin=server.url + "/admin/v1"
            ),
            max_retries=0,
            httpx_client=http,
        )

    yield make
    for http in transports:
        http.close()
    _join_request_threads()


@pytest.fixture
def client(make_client: MakeClient, org: OrganizationWithKey) -> TrophyApi:
    """The organization's admin key, default tenant."""
    return make_client(org.admin_key)


@pytest.fixture
def words(client: TrophyApi) -> CreatedMetric:
    """A metric created through the admin API."""
    return create_metric(client, "words", "Words")
