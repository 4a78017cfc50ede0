"""SSRF-safe delivery. Name resolution is faked (`dns`) so that any address can be tried
without a network; tests of refusals also replace the connection layer with a tripwire
(`no_connection`), so a refusal that came too late fails the test instead of sending traffic."""

import datetime as dt
import ipaddress
import socket
from typing import Any

import httpx
import pytest

from apps.webhooks import transport
from apps.webhooks.transport import (
    DeliveryResult,
    check_url,
    deliver,
    parse_networks,
    parse_retry_after,
)
from tests.webhooks.receiver import Receiver, tls_contexts

LOCAL = ["127.0.0.0/8"]
BODY = b'{"type":"points.changed"}'
HEADERS = {"Content-Type": "application/json", "webhook-id": "msg_1"}
_real_getaddrinfo = socket.getaddrinfo


class FakeDns:
    def __init__(self) -> None:
        self.records: dict[str, list[str]] = {}
        self.lookups: list[str] = []

    def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name in self.records:
            self.lookups.append(name)
            return [_addrinfo(address, int(port)) for address in self.records[name]]
        try:
            ipaddress.ip_address(name)
        except ValueError:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None
        return _real_getaddrinfo(host, port, *args, **kwargs)  # a literal: no lookup


def _addrinfo(address: str, port: int) -> Any:
    if ":" in address:
        return (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))
    return (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDns:
    fake = FakeDns()
    monkeypatch.setattr(socket, "getaddrinfo", fake.getaddrinfo)
    return fake


@pytest.fixture
def no_connection(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Fails the test at the first request handed to httpx's transport or the first socket
    connection, and records what it was aimed at."""
    attempts: list[object] = []

    def trip(target: object) -> Any:
        attempts.append(target)
        raise AssertionError(f"a connection was attempted: {target}")

    def send(transport: httpx.HTTPTransport, request: httpx.Request) -> Any:
        return trip(str(request.url))

    def connect(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
        return trip(address)

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", send)
    monkeypatch.setattr(socket, "create_connection", connect)
    return attempts


@pytest.fixture
def receiver() -> Any:
    with Receiver() as running:
        yield running


def post(url: str, **options: Any) -> DeliveryResult:
    options.setdefault("timeout", 5.0)
    options.setdefault("allow_http", True)
    options.setdefault("allowed_networks", [])
    return deliver(url, BODY, HEADERS, **options)


def assert_refused(result: DeliveryResult, attempts: list[object]) -> None:
    assert result.status_code is None
    assert result.error.startswith("refused: ")
    assert not result.connected
    assert attempts == []


# --- schemes and malformed URLs --------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hook.test/",
        "file:///etc/passwd",
        "gopher://hook.test:70/_GET",
        "javascript:alert(1)",
        "hook.test/path",
        "//hook.test/path",
        "https://",
        "https://user:password@hook.test/",
        "https://exa mple.test/",
        "https://hook.test:99999/",
        "http://[::1",
    ],
)
def test_refuses_urls_that_are_not_plain_web_urls(
    url: str, dns: FakeDns, no_connection: list[object]
) -> None:
    dns.records["hook.test"] = ["93.184.216.34"]
    assert_refused(post(url), no_connection)
    assert check_url(url, allow_http=True, allowed_networks=[]) is not None


def test_refuses_http_unless_allowed(dns: FakeDns, no_connection: list[object]) -> None:
    dns.records["hook.test"] = ["93.184.216.34"]
    result = post("http://hook.test/hook", allow_http=False)
    assert_refused(result, no_connection)
    assert "https" in result.error
    assert check_url("http://hook.test/", allow_http=False, allowed_networks=[]) is not None
    assert check_url("http://hook.test/", allow_http=True, allowed_networks=[]) is None
    assert check_url("https://hook.test/", allow_http=False, allowed_networks=[]) is None


def test_refuses_a_host_that_does_not_resolve(dns: FakeDns, no_connection: list[object]) -> None:
    result = post("https://nowhere.test/hook")
    assert_refused(result, no_connection)
    assert "does not resolve" in result.error


# --- addresses -------------------------------------------------------------------------------

NON_PUBLIC = [
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("::1", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.5.4", "private"),
    ("172.31.255.255", "private"),
    ("192.168.1.1", "private"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("169.254.169.254", "link-local"),  # cloud metadata
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("100.64.0.1", "shared address space"),
    ("100.127.255.254", "shared address space"),
    ("0.0.0.0", "unspecified"),  # noqa: S104 - an address under test, not a bind
    ("::", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("192.0.0.8", "special-purpose"),
    ("192.0.2.1", "private"),  # documentation
    ("198.18.0.1", "private"),  # benchmarking
    ("0.1.2.3", "private"),  # "this network"
    ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
    ("::ffff:10.0.0.1", "private"),
    ("::ffff:169.254.169.254", "link-local"),
    ("::127.0.0.1", "reserved"),  # IPv4-compatible
    ("2002:7f00:1::1", "embeds the loopback address 127.0.0.1"),  # 6to4
    ("2002:a9fe:a9fe::1", "embeds the link-local address 169.254.169.254"),
    ("2002:a00:1::1", "embeds the private address 10.0.0.1"),
    ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"),  # Teredo, client 10.0.0.1
    ("64:ff9b::a00:1", "reserved"),  # NAT64 of 10.0.0.1
]


@pytest.mark.parametrize(("address", "kind"), NON_PUBLIC)
def test_refuses_a_non_public_address_before_connecting(
    address: str, kind: str, dns: FakeDns, no_connection: list[object]
) -> None:
    dns.records["hook.test"] = [address]
    result = post("https://hook.test/hook")
    assert_refused(result, no_connection)
    assert f"({kind})" in result.error
    assert check_url("https://hook.test/", allow_http=False, allowed_networks=[]) is not None


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.1", "169.254.169.254", "::1"])
def test_refuses_an_ip_literal_url(address: str, no_connection: list[object]) -> None:
    host = f"[{address}]" if ":" in address else address
    assert_refused(post(f"http://{host}:8080/hook"), no_connection)


@pytest.mark.parametrize(
    "records",
    [["93.184.216.34", "10.0.0.5"], ["10.0.0.5", "93.184.216.34"], ["8.8.8.8", "::1"]],
)
def test_refuses_a_host_with_any_non_public_address(
    records: list[str], dns: FakeDns, no_connection: list[object]
) -> None:
    dns.records["mixed.test"] = records
    assert_refused(post("https://mixed.test/hook"), no_connection)


@pytest.mark.parametrize(
    "records",
    [["93.184.216.34"], ["8.8.8.8", "2606:4700:4700::1111"], ["::ffff:8.8.8.8"]],
)
def test_accepts_public_addresses(records: list[str], dns: FakeDns) -> None:
    dns.records["hook.test"] = records
    assert check_url("https://hook.test/hook", allow_http=False, allowed_networks=[]) is None


def test_refuses_the_local_receiver_without_an_allowed_network(receiver: Receiver) -> None:
    result = post(receiver.url)
    assert result.error.startswith("refused: ")
    assert receiver.requests == []


def test_invalid_allowed_networks_raise() -> None:
    assert parse_networks(["10.0.0.0/8", " fd00::/8 "]) == [
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("fd00::/8"),
    ]
    for invalid in (["10.0.0.1/8"], ["not-a-network"], ["10.0.0.0/33"]):
        with pytest.raises(ValueError):
            parse_networks(invalid)
    with pytest.raises(ValueError):
        check_url("https://hook.test/", allow_http=False, allowed_networks=["nope"])


# --- delivery --------------------------------------------------------------------------------


def test_an_allowed_network_lets_a_request_through(receiver: Receiver) -> None:
    receiver.respond(202, b"queued")
    result = post(receiver.url, allowed_networks=LOCAL)

    assert result == DeliveryResult(
        status_code=202,
        duration_ms=result.duration_ms,
        response_excerpt="queued",
        error="",
        retry_after=None,
        connected=True,
    )
    assert result.ok
    (request,) = receiver.requests
    assert (request.method, request.path, request.body) == ("POST", "/hook", BODY)
    assert request.headers["webhook-id"] == "msg_1"
    assert request.headers["content-type"] == "application/json"


def test_connects_to_the_checked_address_without_a_second_lookup(
    dns: FakeDns, receiver: Receiver
) -> None:
    dns.records["hook.test"] = ["127.0.0.1"]
    url = f"http://hook.test:{receiver.port}/hook?x=1"
    assert check_url(url, allow_http=True, allowed_networks=LOCAL) is None
    assert dns.lookups == ["hook.test"]
    dns.lookups.clear()

    result = post(url, allowed_networks=LOCAL)

    assert result.status_code == 200
    # One lookup: a rebinding DNS server gets no chance to answer differently at connect time.
    assert dns.lookups == ["hook.test"]
    (request,) = receiver.requests
    assert request.headers["host"] == f"hook.test:{receiver.port}"
    assert request.path == "/hook?x=1"


def test_tries_the_next_address_when_one_refuses_connections(
    dns: FakeDns, receiver: Receiver
) -> None:
    # The receiver listens on 127.0.0.1 only, so 127.0.0.2 refuses the connection.
    dns.records["hook.test"] = ["127.0.0.2", "127.0.0.1"]
    result = post(f"http://hook.test:{receiver.port}/hook", allowed_networks=LOCAL)
    assert result.status_code == 200
    assert len(receiver.requests) == 1


def test_does_not_follow_redirects(receiver: Receiver) -> None:
    receiver.respond(302, b"", {"Location": receiver.url + "/elsewhere"})
    result = post(receiver.url, allowed_networks=LOCAL)
    assert result.status_code == 302
    assert result.error == ""
    assert not result.ok
    assert [request.path for request in receiver.requests] == ["/hook"]


def test_a_timeout_is_a_result_not_an_exception() -> None:
    with Receiver(delay=10) as slow:
        result = post(slow.url, allowed_networks=LOCAL, timeout=0.3)
    assert result.status_code is None
    assert "timed out" in result.error
    assert result.connected
    assert 250 <= result.duration_ms < 3000


def test_a_refused_connection_is_a_result_not_an_exception() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = post(f"http://127.0.0.1:{port}/hook", allowed_networks=LOCAL)
    assert result.status_code is None
    assert result.error.startswith("connection failed")
    assert not result.connected


def test_keeps_only_the_first_4_kb_of_the_answer(receiver: Receiver) -> None:
    receiver.respond(500, b"x" + "é".encode() * 3000)  # 6001 bytes; byte 4096 splits an "é"
    result = post(receiver.url, allowed_networks=LOCAL)
    assert result.status_code == 500
    assert result.response_excerpt == "x" + "é" * 2047 + "\ufffd"


def test_reports_retry_after_from_the_answer(receiver: Receiver) -> None:
    receiver.respond(429, b"slow down", {"Retry-After": "120"})
    result = post(receiver.url, allowed_networks=LOCAL)
    assert (result.status_code, result.retry_after) == (429, 120.0)


NOW = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120.0),
        (" 0 ", 0.0),
        ("Sun, 01 Mar 2026 12:01:30 GMT", 90.0),
        ("Sun, 01 Mar 2026 12:01:30 -0000", 90.0),
        ("Sun, 01 Mar 2026 11:00:00 GMT", 0.0),  # in the past: retry now
        ("-5", None),
        ("1.5", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_parses_retry_after(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == seconds


# --- TLS -------------------------------------------------------------------------------------


@pytest.fixture
def tls_receiver(monkeypatch: pytest.MonkeyPatch) -> Any:
    server, client = tls_contexts("hook.test")
    monkeypatch.setattr(transport, "_tls_context", lambda: client)
    with Receiver(ssl_context=server) as running:
        yield running


def test_tls_goes_to_the_checked_address_but_verifies_the_host_name(
    dns: FakeDns, tls_receiver: Receiver
) -> None:
    dns.records["hook.test"] = ["127.0.0.1"]
    result = post(f"https://hook.test:{tls_receiver.port}/hook", allowed_networks=LOCAL)

    assert result.status_code == 200, result.error
    assert tls_receiver.server_names == ["hook.test"]
    assert tls_receiver.requests[0].headers["host"] == f"hook.test:{tls_receiver.port}"


def test_tls_refuses_a_certificate_for_another_name(dns: FakeDns, tls_receiver: Receiver) -> None:
    # Same address, other name: the certificate (for hook.test) must not satisfy it.
    dns.records["other.test"] = ["127.0.0.1"]
    result = post(f"https://other.test:{tls_receiver.port}/hook", allowed_networks=LOCAL)

    assert result.status_code is None
    assert result.error.startswith("TLS handshake failed")
    assert "certificate" in result.error.lower()
    assert result.connected
    assert tls_receiver.requests == []


def test_the_tripwire_catches_a_connection_attempt(
    dns: FakeDns, no_connection: list[object]
) -> None:
    # Guards the refusal tests above against passing vacuously: an allowed private address
    # does reach the connection layer, where the tripwire stops it before any packet leaves.
    dns.records["hook.test"] = ["10.0.0.1"]
    with pytest.raises(AssertionError, match="a connection was attempted"):
        post("https://hook.test/hook", allowed_networks=["10.0.0.0/8"])
    assert no_connection == ["https://10.0.0.1/hook"]
