"""A local webhook receiver for tests: real HTTP/1.1 on 127.0.0.1 at a free port, every request
recorded, answers scripted.

    with Receiver() as receiver:                    # or receiver = Receiver().start(); .stop()
        receiver.respond(503, b"busy", {"Retry-After": "30"})    # the next request
        receiver.respond(200)                                    # the one after
        ... deliver to receiver.url (allowed_networks=["127.0.0.0/8"], allow_http=True) ...
        assert receiver.requests[0].headers["webhook-id"] == ...

Queued answers are used once each, in order; then every request gets `default` (200, empty).
`delay` (for every request) or `respond(..., delay=)` holds the answer back, for timeouts; the
wait ends early when the receiver stops, so a test never lingers on a sleeping handler.
Plain http by default; `Receiver(ssl_context=server)` with `tls_contexts(host)` serves https
under a throwaway CA and records the SNI names clients sent (`server_names`).
"""

import datetime as dt
import json
import ssl
import tempfile
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the answer is sent


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes  # raw, as received: signatures are checked against these bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    timeout = 5  # an idle keep-alive connection does not outlive a test by much
    server: "_Server"

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=self.rfile.read(length),
        )
        receiver = self.server.receiver
        answer = receiver._record(request)
        delay = max(answer.delay, receiver.delay)
        if delay and receiver._stopping.wait(delay):
            return  # stopping: drop the connection unanswered
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)

    do_POST = do_GET = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    receiver: "Receiver"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that time out and hang up are the point of some tests


class Receiver:
    def __init__(
        self,
        *,
        path: str = "/hook",
        default: Answer | None = None,
        delay: float = 0.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.path = path
        self.default = default or Answer()
        self.delay = delay
        self.requests: list[RecordedRequest] = []
        self.server_names: list[str | None] = []  # TLS SNI, in handshake order
        self._answers: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.receiver = self
        if ssl_context is not None:
            ssl_context.sni_callback = self._record_sni
            self._server.socket = ssl_context.wrap_socket(self._server.socket, server_side=True)
        # A short poll interval: stop() waits up to one interval, paid by every test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        scheme = "https" if isinstance(self._server.socket, ssl.SSLSocket) else "http"
        return f"{scheme}://127.0.0.1:{self.port}{self.path}"

    def respond(
        self,
        status: int = 200,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        *,
        delay: float = 0.0,
    ) -> Self:
        with self._lock:
            self._answers.append(Answer(status, body, headers or {}, delay))
        return self

    def wait_for(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """The requests once at least `count` have arrived (for deliveries sent by another
        thread); raises AssertionError after `timeout` seconds."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self.requests) >= count, timeout):
                raise AssertionError(f"expected {count} requests, got {len(self.requests)}")
            return list(self.requests)

    def _record(self, request: RecordedRequest) -> Answer:
        with self._arrived:
            self.requests.append(request)
            self._arrived.notify_all()
            return self._answers.popleft() if self._answers else self.default

    def _record_sni(self, sock: Any, name: str | None, context: Any) -> None:
        self.server_names.append(name)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def tls_contexts(host: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context holding a certificate for `host` only, issued by a CA made on the
    spot, and a client context that trusts that CA and nothing else."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("test CA", ca_key, "test CA", ca_key, x509.BasicConstraints(True, None))
    leaf = _certificate(
        host, leaf_key, "test CA", ca_key, x509.SubjectAlternativeName([x509.DNSName(host)])
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as directory:  # load_cert_chain reads files only
        cert_file, key_file = Path(directory, "cert.pem"), Path(directory, "key.pem")
        cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(
            leaf_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    return server, client


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: str,
    issuer_key: ec.EllipticCurvePrivateKey,
    extension: x509.ExtensionType,
) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(extension, critical=isinstance(extension, x509.BasicConstraints))
        .sign(issuer_key, hashes.SHA256())
    )
