"""Fake APNs, FCM and Expo servers for integration tests: real HTTP/1.1 on 127.0.0.1, a free
port, every request recorded, answers scripted.

    with FakeApns() as apns:                        # or apns = FakeApns().start(); apns.stop()
        apns.answer_for(token, 410, {"reason": "Unregistered"})   # every request for `token`
        apns.enqueue(Answer(503), Answer(200))      # the next send requests, whatever token
        ... point PUSH_APNS_URL at apns.base_url ...
        assert apns.tokens_sent == [...]

One-off answers in the queue come first, then per-token answers, then the provider's default
success. Expo scripts tickets and receipts per token instead (`ticket_for`, `receipt_for`).
httpx clients built with http2=True speak HTTP/1.1 to these plain-http URLs.
"""

import itertools
import json
import re
import threading
import traceback
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl

import jwt


@dataclass
class Answer:
    status: int = 200
    body: Any = None  # JSON-encoded unless bytes; None for an empty body
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.body.decode()))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the provider clients expect
    disable_nagle_algorithm = True  # headers and body go out in two writes
    timeout = 5  # idle keep-alive connections do not outlive a test run by much
    server: "_Server"

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=self.rfile.read(length),
        )
        answer = self.server.fake.handle(request)
        payload = answer.body
        if payload is not None and not isinstance(payload, bytes):
            payload = json.dumps(payload).encode()
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if payload:
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload or b"")))
        self.end_headers()
        self.wfile.write(payload or b"")

    do_GET = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet test output; the requests are in `fake.requests`


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: "FakeServer"


class FakeServer:
    """Lifecycle, recording and the queue of one-off answers. Subclasses implement `respond`."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0

    @property
    def base_url(self) -> str:
        """Still answers after stop(), for assertions made after the `with` block."""
        assert self._port, "start the fake server first"
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> Self:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._port = self._server.server_address[1]
        # A short poll interval keeps stop() quick: shutdown() waits for the next poll.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def enqueue(self, *answers: Answer) -> None:
        """Answers for the next send requests, in order, whatever their tokens."""
        with self._lock:
            self._queue.extend(answers)

    def handle(self, request: RecordedRequest) -> Answer:
        with self._lock:
            self.requests.append(request)
            try:
                return self.respond(request)
            except Exception:  # a bug in the fake: show it to the client rather than hang up
                return Answer(500, {"fake_error": traceback.format_exc()})

    def respond(self, request: RecordedRequest) -> Answer:
        """Each provider's fake answers its own paths; this bare server knows none."""
        return Answer(404, {"error": "no such endpoint"})

    def _queued(self) -> Answer | None:
        return self._queue.popleft() if self._queue else None


class _PerTokenServer(FakeServer):
    def __init__(self) -> None:
        super().__init__()
        self._per_token: dict[str, Answer] = {}

    def answer_for(
        self, token: str, status: int, body: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        """Answer every send request for `token` so (after the queued one-off answers)."""
        with self._lock:
            self._per_token[token] = Answer(status, body, dict(headers or {}))

    def _scripted(self, token: str) -> Answer | None:
        return self._queued() or self._per_token.get(token)


_APNS_PATH = re.compile(r"/3/device/(?P<token>[^/?]+)")


class FakeApns(_PerTokenServer):
    """APNs: 200 with an apns-id header by default. With `public_key` (PEM of the signing key's
    public half), provider tokens are verified as APNs does: ES256, `kid` and `iss` present."""

    def __init__(self, public_key: str | bytes | None = None) -> None:
        super().__init__()
        self.public_key = public_key

    @property
    def tokens_sent(self) -> list[str]:
        matches = (_APNS_PATH.fullmatch(r.path) for r in self.requests)
        return [m["token"] for m in matches if m]

    def respond(self, request: RecordedRequest) -> Answer:
        match = _APNS_PATH.fullmatch(request.path)
        if request.method != "POST" or not match:
            return Answer(404, {"reason": "BadPath"})
        refusal = self._auth_refusal(request.headers.get("authorization", ""))
        answer = refusal or self._scripted(match["token"]) or Answer(200)
        return Answer(answer.status, answer.body, {"apns-id": str(uuid.uuid4()), **answer.headers})

    def _auth_refusal(self, authorization: str) -> Answer | None:
        if not authorization.startswith("bearer "):
            return Answer(403, {"reason": "MissingProviderToken"})
        if self.public_key is None:
            return None
        bearer = authorization.removeprefix("bearer ")
        try:
            header = jwt.get_unverified_header(bearer)
            claims = jwt.decode(bearer, self.public_key, algorithms=["ES256"])
        except jwt.PyJWTError:
            return Answer(403, {"reason": "InvalidProviderToken"})
        if not header.get("kid") or not claims.get("iss"):
            return Answer(403, {"reason": "InvalidProviderToken"})
        return None


def fcm_error(http_status: int, status: str, error_code: str | None = None) -> Answer:
    """An FCM v1 error answer, e.g. fcm_error(404, "NOT_FOUND", "UNREGISTERED")."""
    error: dict[str, Any] = {"code": http_status, "status": status, "message": status.lower()}
    if error_code:
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
                "errorCode": error_code,
            }
        ]
    return Answer(http_status, {"error": error})


_FCM_SEND_PATH = re.compile(r"/v1/projects/(?P<project>[^/]+)/messages:send")


class FakeFcm(_PerTokenServer):
    """FCM with its OAuth2 token endpoint at /token. Access tokens it issued are accepted until
    `revoke_access_tokens()`; anything else gets 401 UNAUTHENTICATED, as from Google."""

    def __init__(self) -> None:
        super().__init__()
        self.access_tokens: list[str] = []  # issued, in order
        self.token_answers: deque[Answer] = deque()  # one-off answers of the token endpoint
        self._revoked: set[str] = set()
        self._counter = itertools.count(1)

    @property
    def token_uri(self) -> str:
        return f"{self.base_url}/token"

    def service_account(self, private_key_pem: str, project_id: str = "p") -> dict[str, str]:
        return {
            "type": "service_account",
            "project_id": project_id,
            "private_key_id": "fake-key-id",
            "private_key": private_key_pem,
            "client_email": f"push@{project_id}.iam.gserviceaccount.com",
            "token_uri": self.token_uri,
        }

    @property
    def tokens_sent(self) -> list[str]:
        sends = (r for r in self.requests if _FCM_SEND_PATH.fullmatch(r.path))
        return [r.json["message"]["token"] for r in sends]

    def revoke_access_tokens(self) -> None:
        with self._lock:
            self._revoked.update(self.access_tokens)

    def respond(self, request: RecordedRequest) -> Answer:
        if request.method == "POST" and request.path == "/token":
            return self._token_answer(request)
        match = _FCM_SEND_PATH.fullmatch(request.path)
        if request.method != "POST" or not match:
            return fcm_error(404, "NOT_FOUND")
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        if bearer not in self.access_tokens or bearer in self._revoked:
            return fcm_error(401, "UNAUTHENTICATED")
        token = request.json["message"]["token"]
        default = Answer(
            200, {"name": f"projects/{match['project']}/messages/{next(self._counter)}"}
        )
        return self._scripted(token) or default

    def _token_answer(self, request: RecordedRequest) -> Answer:
        if self.token_answers:
            return self.token_answers.popleft()
        form = request.form
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" or not form.get(
            "assertion"
        ):
            return Answer(400, {"error": "invalid_grant"})
        access_token = f"fake-access-token-{next(self._counter)}"
        self.access_tokens.append(access_token)
        return Answer(
            200, {"access_token": access_token, "expires_in": 3600, "token_type": "Bearer"}
        )


class FakeExpo(FakeServer):
    """Expo: each message gets an ok ticket with a fresh id unless `ticket_for` scripted its
    token; each ticket's receipt is ok unless `receipt_for` scripted its token (None: not
    ready, left out of the answer). Queued answers replace a whole send request's answer."""

    SEND = "/--/api/v2/push/send"
    RECEIPTS = "/--/api/v2/push/getReceipts"

    def __init__(self) -> None:
        super().__init__()
        self.tickets: dict[str, str] = {}  # ticket id -> token
        self._tickets_for: dict[str, dict[str, Any]] = {}
        self._receipts_for: dict[str, dict[str, Any] | None] = {}

    def ticket_for(self, token: str, ticket: dict[str, Any]) -> None:
        with self._lock:
            self._tickets_for[token] = ticket

    def receipt_for(self, token: str, receipt: dict[str, Any] | None) -> None:
        with self._lock:
            self._receipts_for[token] = receipt

    @property
    def tokens_sent(self) -> list[str]:
        sends = (r for r in self.requests if r.path == self.SEND)
        return [message["to"] for r in sends for message in r.json]

    def respond(self, request: RecordedRequest) -> Answer:
        if request.method == "POST" and request.path == self.SEND:
            return self._queued() or Answer(200, {"data": [self._ticket(m) for m in request.json]})
        if request.method == "POST" and request.path == self.RECEIPTS:
            return Answer(200, {"data": self._receipts(request.json["ids"])})
        return Answer(404, {"errors": [{"code": "NOT_FOUND", "message": "no such endpoint"}]})

    def _ticket(self, message: dict[str, Any]) -> dict[str, Any]:
        token = message["to"]
        if token in self._tickets_for:
            return self._tickets_for[token]
        ticket_id = str(uuid.uuid4())
        self.tickets[ticket_id] = token
        return {"status": "ok", "id": ticket_id}

    def _receipts(self, ids: list[str]) -> dict[str, Any]:
        receipts: dict[str, Any] = {}
        for ticket_id in ids:
            token = self.tickets.get(ticket_id)
            if token is None:
                continue  # unknown ids are left out, as Expo does for receipts not ready
            receipt = self._receipts_for.get(token, {"status": "ok"})
            if receipt is not None:
                receipts[ticket_id] = receipt
        return receipts
