"""Webhook delivery over HTTP, safe against server-side request forgery.

A webhook URL is chosen by a customer, so without care a delivery could reach this server's own
network: the database, a cloud metadata service (169.254.169.254), an admin port on localhost.
Hence:

- only https (http when the operator allows it, e.g. for local development);
- the host is resolved once and EVERY address must be public, unless it lies in one of the
  operator's `allowed_networks` (a host with one public and one private address could be
  steered to the private one);
- the connection goes to the address that was checked, never to a second lookup, which a
  rebinding DNS server could answer differently: the request URL carries the checked IP, the
  `Host` header and the TLS SNI carry the real host name, and the certificate is verified
  against that name (httpcore passes `sni_hostname` as `server_hostname` to the TLS layer,
  which then checks the certificate against it);
- redirects are not followed (a 3xx is an ordinary failed answer), no proxy from the
  environment is used (it would resolve the name itself), and only the first 4 KB of an
  answer are read.

`deliver` never raises for a bad URL or a network problem: both come back as a result with
`error` set and `status_code=None`, because a stored URL can become unacceptable (its DNS
changes) and the outbox must record that like any failed attempt. Refusals have errors starting
with "refused: ". Only an invalid `allowed_networks` entry, a configuration error, raises
ValueError (from `parse_networks`).
"""

import contextlib
import email.utils
import functools
import ipaddress
import re
import socket
import ssl
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import certifi
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_TIMEOUT = 30.0
EXCERPT_BYTES = 4096
REFUSED = "refused: "
# Addresses tried in turn when connecting fails outright (say, an AAAA record while this server
# has no IPv6 route); bounded so that a name with dozens of records cannot stretch one attempt.
MAX_ADDRESSES = 3

_HOST_NAME = re.compile(r"[A-Za-z0-9_.-]{1,253}")  # after IDNA encoding by httpx
_DELTA_SECONDS = re.compile(r"[0-9]+")
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # RFC 6598 carrier-grade NAT
# RFC 6890: protocol assignments, not hosts; Python 3.11 marks only parts of it non-global.
_IETF_PROTOCOL = ipaddress.ip_network("192.0.0.0/24")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052: the low 32 bits are an IPv4 address
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d form


@dataclass(frozen=True)
class DeliveryResult:
    status_code: int | None  # None when no HTTP answer arrived
    duration_ms: int
    response_excerpt: str  # the first 4 KB of the answer's body
    error: str  # empty when an HTTP answer arrived, whatever its status
    retry_after: float | None  # seconds, from the answer's Retry-After
    connected: bool  # a TCP connection to the receiver was established

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


@dataclass(frozen=True)
class _Target:
    url: httpx.URL
    host: str  # ASCII (IDNA-encoded) host name, or an IP literal
    is_ip: bool
    addresses: tuple[IPAddress, ...]  # all checked; connect to these only


def parse_networks(values: list[str]) -> list[IPNetwork]:
    """CIDR strings to networks; raises ValueError naming the first invalid entry. Host bits
    must be zero ("10.0.0.0/8", not "10.0.0.1/8"), which catches most typos."""
    networks: list[IPNetwork] = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=True))
        except ValueError as exc:
            raise ValueError(f"invalid network {value!r} in allowed networks: {exc}") from exc
    return networks


def check_url(url: str, *, allow_http: bool, allowed_networks: list[str]) -> str | None:
    """Why `url` may not receive webhooks, or None when it may. Resolves the host like
    `deliver`, so a name that does not resolve (yet) is refused too."""
    target = _target(url, allow_http=allow_http, networks=parse_networks(allowed_networks))
    return target if isinstance(target, str) else None


def deliver(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    allow_http: bool,
    allowed_networks: list[str],
) -> DeliveryResult:
    """POST `body` to `url` once; see the module docstring for what is refused."""
    started = time.monotonic()
    target = _target(url, allow_http=allow_http, networks=parse_networks(allowed_networks))
    if isinstance(target, str):
        return _failure(started, REFUSED + target, connected=False)
    deadline = started + timeout
    result = _failure(started, "no address to connect to", connected=False)
    for address in target.addresses[:MAX_ADDRESSES]:
        if time.monotonic() >= deadline:
            break
        result, try_next = _post(target, address, body, headers, started, deadline)
        if not try_next:
            break
    return result


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110 section 10.2.3); a date
    in the past is 0, anything unparseable is None."""
    if value is None:
        return None
    value = value.strip()
    if _DELTA_SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000" parses naive; HTTP dates are always GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


# --- checking --------------------------------------------------------------------------------


def _target(url: str, *, allow_http: bool, networks: list[IPNetwork]) -> _Target | str:
    """The checked destination, or why there is none."""
    parsed = _parse(url, allow_http=allow_http)
    if isinstance(parsed, str):
        return parsed
    host = parsed.raw_host.decode("ascii")
    addresses = _resolve(host, parsed.port or (443 if parsed.scheme == "https" else 80))
    if isinstance(addresses, str):
        return addresses
    for address in addresses:
        if any(address in network for network in networks):
            continue
        kind = _non_public_kind(address)
        if kind is not None:
            return f"{address} is not a public address ({kind})"
    is_ip = _ip_or_none(host) is not None
    return _Target(url=parsed, host=host, is_ip=is_ip, addresses=addresses)


def _parse(url: str, *, allow_http: bool) -> httpx.URL | str:
    # httpx's own parser, so that the URL checked is the URL requested (two parsers that
    # disagree on odd URLs are a classic way around SSRF checks).
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        return f"the URL is malformed ({exc})"
    allowed = ("https", "http") if allow_http else ("https",)
    if parsed.scheme not in allowed:
        return "the URL must use " + " or ".join(allowed)
    if parsed.userinfo:
        # Credentials in a URL end up in logs and on the dashboard; receivers check signatures.
        return "the URL must not contain a user name or password"
    host = parsed.raw_host.decode("ascii")
    if not host:
        return "the URL has no host"
    if _ip_or_none(host) is None and not _HOST_NAME.fullmatch(host):
        return "the URL's host name is invalid"
    if parsed.port is not None and not 0 < parsed.port < 65536:
        return "the URL's port is out of range"
    return parsed


def _resolve(host: str, port: int) -> tuple[IPAddress, ...] | str:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:  # socket.gaierror is an OSError
        return f"the host {host} does not resolve ({exc})"
    addresses: dict[IPAddress, None] = {}  # ordered set: keep the resolver's preference
    for info in infos:
        address = _ip_or_none(str(info[4][0]))
        if address is None:
            return f"the host {host} resolves to an unusable address {info[4][0]!r}"
        addresses[address] = None
    if not addresses:
        return f"the host {host} does not resolve"
    return tuple(addresses)


def _ip_or_none(text: str) -> IPAddress | None:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    # ::ffff:a.b.c.d is the IPv4 host a.b.c.d seen through an IPv6 socket: judge (and connect
    # to) the IPv4 address, so that ::ffff:127.0.0.1 is loopback and ::ffff:8.8.8.8 public.
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _non_public_kind(address: IPAddress) -> str | None:
    """What kind of non-public address this is, or None for a public one. `is_global` alone
    misses multicast and, depending on the Python version, some special ranges."""
    checks = (
        (address.is_unspecified, "unspecified"),
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local"),
        (address in _SHARED, "shared address space"),
        (address in _IETF_PROTOCOL, "special-purpose"),
        (address.is_multicast, "multicast"),
        (address.is_reserved, "reserved"),
        (address.is_private, "private"),
        (isinstance(address, ipaddress.IPv6Address) and address.is_site_local, "site-local"),
        (not address.is_global, "not globally routable"),
    )
    for matches, kind in checks:
        if matches:
            return kind
    if isinstance(address, ipaddress.IPv6Address):
        for embedded in _embedded_ipv4(address):
            embedded_kind = _non_public_kind(embedded)
            if embedded_kind is not None:
                return f"embeds the {embedded_kind} address {embedded}"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses that 6to4, Teredo, NAT64 or the IPv4-compatible form route to."""
    found = []
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.append(address.teredo[1])  # the client; [0] is the public Teredo server
    if address in _NAT64 or address in _IPV4_COMPATIBLE:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF))
    return found


# --- sending ---------------------------------------------------------------------------------


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # Built once and shared (SSLContext is thread-safe): loading the CA bundle for every
    # delivery would cost milliseconds each. Hostname checking is on by default.
    return ssl.create_default_context(cafile=certifi.where())


def _post(
    target: _Target,
    address: IPAddress,
    body: bytes,
    headers: dict[str, str],
    started: float,
    deadline: float,
) -> tuple[DeliveryResult, bool]:
    """One attempt at one address, and whether the next address is worth a try: only when the
    connection was refused or unreachable, which is quick, unlike a timeout."""
    connected = False

    def trace(event: str, info: dict[str, Any]) -> None:
        nonlocal connected
        if event == "connection.connect_tcp.complete":
            connected = True

    url, request_headers, extensions = _pinned(target, address, headers)
    client = httpx.Client(
        verify=_tls_context(),
        timeout=httpx.Timeout(deadline - time.monotonic()),
        follow_redirects=False,
        trust_env=False,  # an environment proxy would resolve the host itself
    )
    try:
        with (
            client,
            client.stream(
                "POST",
                url,
                content=body,
                headers=request_headers,
                extensions={**extensions, "trace": trace},
            ) as response,
        ):
            excerpt = _read_excerpt(response, deadline)
    except httpx.TimeoutException as exc:
        error = f"timed out after {time.monotonic() - started:.1f} s ({_describe(exc)})"
        return _failure(started, error, connected), False
    except httpx.ConnectError as exc:
        stage = "TLS handshake failed" if connected else "connection failed"
        return _failure(started, f"{stage}: {_describe(exc)}", connected), not connected
    except httpx.TransportError as exc:
        error = f"{type(exc).__name__}: {_describe(exc)}"
        return _failure(started, error, connected), False
    answered = DeliveryResult(
        status_code=response.status_code,
        duration_ms=_elapsed_ms(started),
        response_excerpt=excerpt,
        error="",
        retry_after=parse_retry_after(response.headers.get("retry-after")),
        connected=True,
    )
    return answered, False


def _pinned(
    target: _Target, address: IPAddress, headers: dict[str, str]
) -> tuple[httpx.URL, httpx.Headers, dict[str, Any]]:
    """The request aimed at `address` while speaking to `target.host`."""
    request_headers = httpx.Headers(headers)
    # The body is only read for diagnostics; a compressed one could expand enormously.
    request_headers["Accept-Encoding"] = "identity"
    if target.is_ip:
        return target.url, request_headers, {}
    port = target.url.port
    request_headers["Host"] = target.host if port is None else f"{target.host}:{port}"
    extensions: dict[str, Any] = {}
    if target.url.scheme == "https":
        extensions["sni_hostname"] = target.host.rstrip(".")
    return target.url.copy_with(host=str(address)), request_headers, extensions


def _read_excerpt(response: httpx.Response, deadline: float) -> str:
    """The first EXCERPT_BYTES of the body, raw. The status has arrived, so the attempt counts
    as answered even if the body stalls or breaks: it is kept for diagnostics only."""
    received = bytearray()
    with contextlib.suppress(httpx.TransportError):
        for chunk in response.iter_raw():
            received += chunk
            if len(received) >= EXCERPT_BYTES or time.monotonic() > deadline:
                break
    return bytes(received[:EXCERPT_BYTES]).decode(errors="replace")


def _failure(started: float, error: str, connected: bool) -> DeliveryResult:
    return DeliveryResult(
        status_code=None,
        duration_ms=_elapsed_ms(started),
        response_excerpt="",
        error=error,
        retry_after=None,
        connected=connected,
    )


def _describe(exc: Exception) -> str:
    return str(exc) or type(exc).__name__


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
