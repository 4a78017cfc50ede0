"""gunicorn settings for gamify: `gunicorn -c python:gamify.gunicorn_conf gamify.wsgi ...`.

Command-line options still apply on top (bind, workers, threads).
"""

import os
import tempfile
from typing import Any

from gamify.env import env_bool

# The same limit as Django's (settings.DATA_UPLOAD_MAX_MEMORY_SIZE), read the same way.
MAX_REQUEST_BYTES = int(os.environ.get("MAX_REQUEST_BYTES", 5 * 1024 * 1024))

# Every instance its own control socket (gunicorn's default is one path per user, so a second
# gunicorn on the host, e.g. `make bench` beside a running server, would take over the first's).
# The master loads this file, so its pid names the socket; GUNICORN_CONTROL_SOCKET sets a path.
control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET") or os.path.join(
    os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir(), f"gamify-gunicorn-{os.getpid()}.ctl"
)

# gunicorn itself believes X-Forwarded-Proto, X-Forwarded-Ssl and X-Forwarded-Protocol (its
# secure_scheme_headers) from these addresses, loopback by default. It follows the same setting
# as Django (gamify/settings.py): without TRUST_PROXY_HEADERS nobody's, or any client on the host,
# or a proxy that passes the header on, would be taken for HTTPS.
forwarded_allow_ips = (
    os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
    if env_bool("TRUST_PROXY_HEADERS", default=False)
    else ""
)

# Threaded workers: each serves `threads` requests at once and keeps its clients' connections
# alive between requests, where a sync worker (gunicorn's default) closes the connection after
# every response, so each request of an SDK or a keep-alive proxy pays a TCP accept and close:
# 2.9-3.0 ms of gunicorn CPU per event against 2.1-2.4 ms, p99 135-414 ms against 80-104 ms
# (bench/README.md, "Serving and the request path"). `--worker-class`, `--threads` override.
worker_class = "gthread"
threads = 4

# A request line up to 8 KB (gunicorn's most; its default is 4 KB): GET /v1/streaks may name 100
# users in its query. Longer lines get gunicorn's 414, documented on every operation.
limit_request_line = 8190


def pre_request(worker: Any, req: Any) -> None:
    """A body over MAX_REQUEST_BYTES is refused (413) without being read; the connection is then
    closed, and the response says so (`Connection: close`), rather than left with the unread
    body on it, where the client's next request would fail. A chunked body's size is not known
    before it is read (gamify/wsgi.py reads at most one byte past the limit), so a connection
    that sent one is always closed after the answer: gunicorn would otherwise read the rest of
    an oversized body, however long, to reach the next request. SDKs send a Content-Length."""
    for name, value in req.headers:
        if name == "CONTENT-LENGTH":
            if value.isdigit() and int(value) > MAX_REQUEST_BYTES:
                req.must_close = True
        elif name == "TRANSFER-ENCODING" and "chunked" in value.lower():
            req.must_close = True
