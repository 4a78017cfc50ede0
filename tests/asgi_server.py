"""A live ASGI server for the tests that need one: the live streams are async views, which the
WSGI live server of pytest-django cannot serve. uvicorn serves gamify.asgi in a thread of the
test process, against the test database, as `manage.py serve` serves it.

The synchronous part of every request (the views, middleware, the stream views' reads) runs in
one thread, asgiref's single-thread executor, instead of a thread per request: on SQLite the
test database lives in memory, shared between threads, where a reader and a writer in two
connections lock each other out ("database table is locked") instead of waiting. One thread
also makes the server's statements happen one at a time, as the browser tests read them."""

import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any
from unittest import mock

import uvicorn
from asgiref.sync import SyncToAsync
from django.db import connections


@contextlib.asynccontextmanager
async def _one_thread() -> AsyncIterator[None]:
    yield


@contextlib.contextmanager
def asgi_server() -> Iterator[str]:
    """Serves gamify on 127.0.0.1 at a free port while the context is open; yields its URL.
    Close the clients' streams first: the server waits a second for open connections."""
    from gamify.asgi import application

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    config = uvicorn.Config(
        application, lifespan="off", log_level="warning", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    with mock.patch("django.core.handlers.asgi.ThreadSensitiveContext", _one_thread):
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [listener]}, daemon=True, name="asgi-server"
        )
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the ASGI test server did not start")
            time.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            # Streams the clients closed end when the server reads their disconnect.
            deadline = time.monotonic() + 5
            while server.server_state.tasks and time.monotonic() < deadline:
                time.sleep(0.05)
            server.should_exit = True
            thread.join(timeout=10)
            # The executor thread's connection would outlive the test database (PostgreSQL
            # refuses to drop a database with a connection open).
            _executor_run(connections.close_all)
            listener.close()


def _executor_run(function: Any) -> None:
    SyncToAsync.single_thread_executor.submit(function).result(timeout=10)
