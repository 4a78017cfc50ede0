"""The live streams (apps/streams), driven as a client drives them: an SSE response read
chunk by chunk through Django's ASGI handler, events sent through the API meanwhile."""

import asyncio
import contextlib
import datetime as dt
import json
import uuid
from typing import Any

import pytest
import time_machine
from asgiref.sync import async_to_sync, sync_to_async
from django.db import transaction
from django.test import AsyncClient, TestCase
from django.utils import timezone

from apps.streams import views
from tests.conftest import RANKS_REDIS, Client, redis_answers
from tests.factories import MetricFactory, OrganizationWithKey, bump

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not redis_answers(), reason="needs Redis on 127.0.0.1:6379"),
]


@pytest.fixture(autouse=True)
def streams_on(settings: Any, monkeypatch: Any) -> None:
    settings.STREAMS_REDIS_URL = RANKS_REDIS
    settings.STREAMS_PREFIX = f"gamify-test-streams-{uuid.uuid4().hex[:8]}:"
    settings.STREAMS_HEARTBEAT_SECONDS = 1
    # The views' reads in this thread, where the test transaction lives.
    monkeypatch.setattr(views, "IN_REQUEST_THREAD", True)


@pytest.fixture
def org() -> OrganizationWithKey:
    org = OrganizationWithKey("Streams")
    metric = MetricFactory(tenant=org.tenant, key="words")
    bump(org.tenant)
    client = admin(org)
    achievement = {
        "name": "First",
        "trigger": "metric",
        "metricId": str(metric.public_id),
        "metricValue": 1,
        "status": "active",
    }
    response = client.post("/admin/v1/achievements", [achievement])
    assert response.status_code == 201, response.content
    system = client.post("/admin/v1/points", [{"name": "XP", "key": "xp"}]).json()["created"][0]
    trigger = {"type": "metric", "points": 10, "metricThreshold": 1, "status": "active"}
    response = client.post(
        f"/admin/v1/points/{system['id']}/triggers", [trigger | {"metricId": str(metric.public_id)}]
    )
    assert response.status_code == 201, response.content
    board = {
        "name": "Top",
        "key": "top",
        "rankBy": "metric",
        "metricId": str(metric.public_id),
        "status": "active",
    }
    assert client.post("/admin/v1/leaderboards", [board]).status_code == 201
    return org


def admin(org: OrganizationWithKey) -> Client:
    client = Client()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    return client


def parse(chunk: bytes) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for line in chunk.decode().splitlines():
        name, _, value = line.partition(": ")
        fields[name] = value
    if "data" in fields:
        fields["data"] = json.loads(fields["data"])
    return fields


class Reader:
    """An open stream, read as a client reads it: a task takes its chunks as they come;
    `next` gives its messages one by one (heartbeats skipped unless asked for); `close`
    disconnects, which the server sees as ASGI servers show it, a cancellation."""

    def __init__(self, response: Any) -> None:
        self.response = response
        self.chunks: asyncio.Queue[bytes] = asyncio.Queue()
        self.pump = asyncio.get_running_loop().create_task(self._pump())

    async def _pump(self) -> None:
        async for chunk in self.response.streaming_content:
            await self.chunks.put(chunk)

    async def chunk(self, timeout: float) -> bytes:
        return await asyncio.wait_for(self.chunks.get(), max(timeout, 0.001))

    async def next(self, timeout: float = 5, heartbeats: bool = False) -> dict[str, Any]:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            chunk = await self.chunk(deadline - asyncio.get_running_loop().time())
            if chunk.startswith(b"retry:"):
                continue
            if chunk.startswith(b":") and not heartbeats:
                continue
            return parse(chunk) if not chunk.startswith(b":") else {"comment": chunk.decode()}

    async def close(self) -> None:
        self.pump.cancel()
        # Waited for a while, not for ever: a pump cancelled inside a thread-sensitive read can
        # be left waiting for that thread (the suite hung here once under xdist).
        await asyncio.wait({self.pump}, timeout=2)


async def open_stream(path: str, **headers: str) -> Reader:
    response = await asyncio.wait_for(AsyncClient().get(path, headers=headers), 10)
    assert response.status_code == 200, response.content if not response.streaming else path
    assert response["Content-Type"] == "text/event-stream"
    reader = Reader(response)
    # The first chunk (retry:) comes once the stream listens.
    first = await reader.chunk(5)
    assert first.startswith(b"retry:")
    return reader


def post_event(org: OrganizationWithKey, user: str, value: int = 1) -> None:
    body = {"user": {"id": user}, "value": value}
    response = admin(org).post("/v1/metrics/words/event", body)
    assert response.status_code == 201, response.content


def send_event(org: OrganizationWithKey, user: str, value: int = 1) -> None:
    """An event through the API. The suite's test transaction never commits: the event's
    after-commit callbacks run as its commit would run them."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        post_event(org, user, value)


def run(scenario: Any) -> Any:
    return async_to_sync(scenario)()


def test_a_users_stream_carries_their_changes_as_the_webhooks_describe_them(org):
    async def scenario() -> None:
        reader = await open_stream("/ext/v1/users/ann/stream", X_API_KEY=org.admin_key)
        await sync_to_async(send_event)(org, "ann")
        messages = [await reader.next() for _ in range(3)]
        assert [m["event"] for m in messages] == [
            "achievement.completed",
            "points.changed",
            "leaderboard.rank_changed",
        ]
        assert {m["data"]["user"]["id"] for m in messages} == {"ann"}
        assert messages[0]["data"]["achievement"]["name"] == "First"
        assert messages[1]["data"]["points"]["total"] == 10
        assert messages[2]["data"]["leaderboard"]["rank"] == 1
        ids = [m["id"] for m in messages]
        assert ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-"))))
        # Unthrottled: a second event's points come at once (a webhook would wait 15 min).
        await sync_to_async(send_event)(org, "ann", 2)
        message = await reader.next()
        assert (message["event"], message["data"]["points"]["total"]) == ("points.changed", 30)
        await reader.close()

    run(scenario)


def test_a_user_stream_shows_nothing_of_other_users_or_tenants(org):
    other = OrganizationWithKey("Other")
    MetricFactory(tenant=other.tenant, key="words")
    bump(other.tenant)

    async def scenario() -> None:
        reader = await open_stream("/ext/v1/users/ann/stream", X_API_KEY=org.admin_key)
        await sync_to_async(send_event)(org, "bob")
        await sync_to_async(send_event)(other, "ann")
        with pytest.raises(TimeoutError):
            await reader.next(timeout=1.5)
        await reader.close()

    run(scenario)


def test_a_reconnecting_client_gets_what_it_missed_and_nothing_twice(org):
    async def scenario() -> None:
        reader = await open_stream("/ext/v1/users/ann/stream", X_API_KEY=org.admin_key)
        await sync_to_async(send_event)(org, "ann")
        first = await reader.next()
        await reader.close()  # the client is away; the topic stays watched meanwhile
        await sync_to_async(send_event)(org, "ann", 3)
        again = await open_stream(
            "/ext/v1/users/ann/stream", X_API_KEY=org.admin_key, LAST_EVENT_ID=first["id"]
        )
        replayed = [await again.next() for _ in range(3)]
        assert [m["event"] for m in replayed] == [
            "points.changed",
            "leaderboard.rank_changed",
            "points.changed",  # the event sent while away (ann's rank stayed 1)
        ]
        assert replayed[2]["data"]["points"]["total"] == 40
        with pytest.raises(TimeoutError):
            await again.next(timeout=1)
        await again.close()

    run(scenario)


def test_a_last_event_id_older_than_the_retention_says_reset(org):
    async def scenario() -> None:
        old = f"{int((timezone.now() - dt.timedelta(hours=2)).timestamp() * 1000)}-0"
        reader = await open_stream(
            "/ext/v1/users/ann/stream", X_API_KEY=org.admin_key, LAST_EVENT_ID=old
        )
        message = await reader.next()
        assert message["event"] == "stream.reset"
        assert message["data"] == {"lastEventId": old}
        await reader.close()

    run(scenario)


def test_heartbeats_keep_an_idle_stream_open(org):
    async def scenario() -> None:
        reader = await open_stream("/ext/v1/users/ann/stream", X_API_KEY=org.admin_key)
        assert await reader.next(timeout=3, heartbeats=True) == {"comment": ": heartbeat\n\n"}
        await reader.close()

    run(scenario)


def test_a_rolled_back_event_publishes_nothing(org):
    async def scenario() -> None:
        reader = await open_stream("/ext/v1/users/ann/stream", X_API_KEY=org.admin_key)

        def send_then_roll_back() -> None:
            with (
                TestCase.captureOnCommitCallbacks(execute=True) as callbacks,
                contextlib.suppress(RuntimeError),
                transaction.atomic(),
            ):
                post_event(org, "ann")
                raise RuntimeError("the transaction the event ran in rolls back")
            assert callbacks == []

        await sync_to_async(send_then_roll_back)()
        with pytest.raises(TimeoutError):
            await reader.next(timeout=1.5)
        await reader.close()

    run(scenario)


def status_of(path: str, **headers: str) -> tuple[int, Any]:
    async def scenario() -> tuple[int, Any]:
        response = await asyncio.wait_for(AsyncClient().get(path, headers=headers), 10)
        if response.streaming:
            await response.streaming_content.aclose()  # type: ignore[attr-defined]
            return response.status_code, None
        return response.status_code, json.loads(response.content)

    return run(scenario)


def mint(org: OrganizationWithKey, **body: Any) -> Any:
    return admin(org).post("/admin/ext/v1/streams/tokens", body)


def test_who_may_open_which_stream(org):
    other = OrganizationWithKey("Other")
    ann_key = org.application_key("ann")
    assert status_of("/ext/v1/users/ann/stream", X_API_KEY=ann_key)[0] == 200
    assert status_of("/ext/v1/users/bob/stream", X_API_KEY=ann_key) == (
        403,
        {"error": "This application API key may only access its own user"},
    )
    assert status_of("/ext/v1/leaderboards/top/stream", X_API_KEY=ann_key)[0] == 200
    assert status_of("/admin/ext/v1/stream", X_API_KEY=ann_key)[0] == 403
    assert status_of("/admin/ext/v1/stream", X_API_KEY=org.admin_key)[0] == 200
    assert status_of("/ext/v1/users/ann/stream")[0] == 401
    assert status_of("/ext/v1/users/ann/stream", X_API_KEY="nope.nope")[0] == 401
    # Another tenant's key sees its own tenant: no board "top" there.
    assert status_of("/ext/v1/leaderboards/top/stream", X_API_KEY=other.admin_key)[0] == 404
    # An API key never goes in a URL.
    status, body = status_of(f"/ext/v1/users/ann/stream?apiKey={org.admin_key}")
    assert status == 400
    assert "never accepted in a URL" in body["error"]


def test_a_stream_token_opens_its_stream_only_until_it_expires(org):
    response = mint(org, stream="user", userId="ann", expiresIn=60)
    assert response.status_code == 201, response.content
    token = response.json()["token"]
    assert response.json()["url"] == f"/ext/v1/users/ann/stream?token={token}"
    assert status_of(response.json()["url"])[0] == 200
    assert status_of(f"/ext/v1/users/bob/stream?token={token}")[0] == 403
    assert status_of(f"/admin/ext/v1/stream?token={token}")[0] == 403
    assert status_of(f"/ext/v1/users/ann/stream?token={token[:-2]}xx")[0] == 401
    with time_machine.travel(timezone.now() + dt.timedelta(seconds=61)):
        assert status_of(f"/ext/v1/users/ann/stream?token={token}") == (
            401,
            {"error": "Invalid or expired stream token"},
        )
    # Another tenant's token opens nothing of this one, nor the other way round.
    other = OrganizationWithKey("Other")
    foreign = mint(other, stream="tenant").json()["token"]
    assert status_of(f"/admin/ext/v1/stream?token={foreign}")[0] == 200  # its own tenant's
    board = mint(org, stream="leaderboard", leaderboardKey="top").json()
    assert status_of(board["url"])[0] == 200


def test_minting_a_token_is_validated(org):
    missing = mint(org, stream="user")
    assert missing.status_code == 422
    assert "userId" in missing.json()["error"]
    assert mint(org, stream="user", userId="ann", leaderboardKey="top").status_code == 422
    assert mint(org, stream="leaderboard", leaderboardKey="nope").status_code == 404
    assert mint(org, stream="tenant", expiresIn=86401).status_code == 422
    assert mint(org, stream="planet").status_code == 422
    assert mint(org, stream="tenant", extra=1).status_code == 422
    app = Client()
    app.credentials(HTTP_X_API_KEY=org.application_key("ann"))
    assert app.post("/admin/ext/v1/streams/tokens", {"stream": "tenant"}).status_code == 403


def test_the_tenant_stream_carries_every_users_events(org):
    async def scenario() -> None:
        reader = await open_stream("/admin/ext/v1/stream", X_API_KEY=org.admin_key)
        await sync_to_async(send_event)(org, "ann")
        await sync_to_async(send_event)(org, "bob")
        seen = [await reader.next() for _ in range(6)]
        users = [(m["event"], m["data"]["user"]["id"]) for m in seen]
        assert ("achievement.completed", "ann") in users
        assert ("achievement.completed", "bob") in users
        assert users.index(("achievement.completed", "ann")) < users.index(
            ("achievement.completed", "bob")
        )
        await reader.close()

    run(scenario)


def test_a_boards_stream_sends_its_top_at_once_then_on_change_at_most_once_a_second(org):
    async def scenario() -> None:
        await sync_to_async(send_event)(org, "ann", 5)
        reader = await open_stream("/ext/v1/leaderboards/top/stream?top=2", X_API_KEY=org.admin_key)
        first = await reader.next()
        assert first["event"] == "leaderboard.top"
        rankings = first["data"]["leaderboard"]["rankings"]
        assert [(r["userId"], r["value"]) for r in rankings] == [("ann", 5)]
        # Three changes within a second: one message, with the last of them.
        started = asyncio.get_running_loop().time()
        for user, value in (("bob", 7), ("cy", 9), ("dee", 1)):
            await sync_to_async(send_event)(org, user, value)
        second = await reader.next()
        assert asyncio.get_running_loop().time() - started >= 0.9
        rankings = second["data"]["leaderboard"]["rankings"]
        assert [(r["userId"], r["value"]) for r in rankings] == [("cy", 9), ("bob", 7)]
        # A change below the top 2 does not change what the stream shows: no message.
        await sync_to_async(send_event)(org, "dee", 1)
        with pytest.raises(TimeoutError):
            await reader.next(timeout=2)
        await reader.close()

    run(scenario)


def test_bad_stream_requests_are_refused_with_reasons(org):
    key = org.admin_key
    assert status_of("/ext/v1/leaderboards/top/stream?top=101", X_API_KEY=key)[0] == 400
    assert status_of("/ext/v1/leaderboards/top/stream?top=x", X_API_KEY=key)[0] == 400
    assert status_of("/ext/v1/leaderboards/nope/stream", X_API_KEY=key)[0] == 404
    assert status_of("/ext/v1/users/ann/stream", X_API_KEY=key, LAST_EVENT_ID="x")[0] == 400
    too_long = "u" * 300
    assert status_of(f"/ext/v1/users/{too_long}/stream", X_API_KEY=key)[0] == 400


def test_without_redis_the_streams_say_so(org, settings):
    settings.STREAMS_REDIS_URL = ""
    status, body = status_of("/ext/v1/users/ann/stream", X_API_KEY=org.admin_key)
    assert status == 503
    assert "STREAMS_REDIS_URL" in body["error"]


def test_the_extension_documents_describe_the_streams(anon_client):
    app = json.loads(anon_client.get("/ext/v1/openapi").content)
    stream = app["paths"]["/users/{user_id}/stream"]["get"]
    assert stream["operationId"] == "ext_users_stream"
    assert "text/event-stream" in stream["responses"]["200"]["description"]
    assert {p["name"] for p in stream["parameters"]} >= {"user_id", "token", "Last-Event-ID"}
    board = app["paths"]["/leaderboards/{key}/stream"]["get"]
    assert {p["name"] for p in board["parameters"]} >= {"key", "top", "userAttributes"}
    admin_doc = json.loads(anon_client.get("/admin/ext/v1/openapi").content)
    assert admin_doc["paths"]["/stream"]["get"]["operationId"] == "ext_admin_stream"
    for trophy in ("/v1/openapi", "/admin/v1/openapi"):
        document = json.loads(anon_client.get(trophy).content)
        assert not [path for path in document["paths"] if "stream" in path]
    mint_op = admin_doc["paths"]["/streams/tokens"]["post"]
    assert set(mint_op["responses"]) >= {"201", "401", "403", "422"}


def test_streams_cost_an_event_no_statement(org, settings, django_assert_num_queries):
    """Publishing is one Redis call after commit: the event's statements are the same with the
    streams on, watched or not, as with them off."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    send_event(org, "ann")  # the user exists; their next events take the same path

    def statements() -> int:
        with CaptureQueriesContext(connection) as queries:
            send_event(org, "ann")
        return len(queries)

    settings.STREAMS_REDIS_URL = ""
    off = statements()
    settings.STREAMS_REDIS_URL = RANKS_REDIS
    unwatched = statements()

    async def watched() -> int:
        reader = await open_stream("/ext/v1/users/ann/stream", X_API_KEY=org.admin_key)
        count = await sync_to_async(statements)()
        assert (await reader.next())["event"] == "points.changed"
        await reader.close()
        return count

    assert off == unwatched == run(watched)


def test_under_wsgi_a_stream_is_refused_at_once_not_held_forever(org):
    response = admin(org).get("/ext/v1/users/ann/stream")
    assert response.status_code == 503
    assert "ASGI" in response.json()["error"]
