"""One structured log line per request, requests no view should see, and the dashboard's
middleware kept off the APIs' paths."""

import logging
import re
import time
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.deprecation import MiddlewareMixin

from apps.core import replicas
from apps.core.api.errors import error_body_render
from apps.core.shown_time import shown_locale_set

logger = logging.getLogger("gamify.request")


def client_ip(request: HttpRequest) -> str | None:
    """The client's address: the connection's peer, or with TRUST_PROXY_HEADERS the address our
    reverse proxy appended last to X-Forwarded-For (earlier entries are the client's own say)."""
    if settings.TRUST_PROXY_HEADERS:
        forwarded = request.headers.get("X-Forwarded-For", "")
        last = forwarded.rsplit(",", 1)[-1].strip()
        if last:
            return last
    address: str | None = request.META.get("REMOTE_ADDR")
    return address


class SyncAndAsyncMiddleware:
    """A middleware that serves WSGI and ASGI (the live streams) alike: `is_async` says which
    chain it is in; the subclass's `__call__` returns its `_acall(request)` coroutine then."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        raise NotImplementedError


class RequestLogMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.monotonic()
        response = self.get_response(request)
        if not logger.isEnabledFor(logging.INFO):
            return response  # LOG_LEVEL=WARNING: no line, so nothing to make safe for one
        elapsed_ms = (time.monotonic() - started) * 1000
        logger.info(
            "method=%s path=%s status=%s ms=%.1f tenant=%s",
            _loggable(request.method or "-"),
            _loggable(request.path),
            response.status_code,
            elapsed_ms,
            _loggable(request.headers.get("Tenant-ID", "-")),
        )
        return response


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _loggable(value: str) -> str:
    """What a client sent, safe in a log line: a decoded `%0a` in a URL must not start a line
    of its own (forged entries), so control characters are written as escapes."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


class NulByteMiddleware:
    """A NUL character in the path or the query string is refused here, once, for every
    route: PostgreSQL cannot store or even compare text containing it, so a lookup by such
    an id would fail with a database error instead of a clean answer."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.GET
        if "\x00" in request.path or any(
            "\x00" in key or any("\x00" in v for v in query.getlist(key)) for key in query
        ):
            return JsonResponse(
                error_body_render("NUL characters are not allowed in URLs"), status=400
            )
        return self.get_response(request)


# The paths of the application API (`/v1/`, and `/api/` for SDKs configured with it), of the
# admin API, and of their extensions (`/ext/v1/`, `/admin/ext/v1/`; gamify/urls.py). Their
# requests authenticate with X-API-KEY, never a cookie: no session, logged-in user or flash
# message is read or written for them. (CSRF stays in the chain as Django's own class, which
# `check --deploy` asks for by name; their views are CSRF-exempt: DRF's APIView, the JSON 404.)
API_PATH_PREFIXES = ("/v1/", "/api/", "/admin/v1/", "/ext/v1/", "/admin/ext/v1/")


class _DashboardOnly(MiddlewareMixin):
    """Runs the Django middleware it is mixed into for every path but the APIs': on an API
    path the request goes straight on. Subclasses, so the admin's system checks (which look
    for these classes or subclasses in MIDDLEWARE) still hold; the dashboard, its login and
    the end-user pages get them as before (ARCHITECTURE.md §4)."""

    def __call__(self, request: HttpRequest) -> Any:
        if request.path_info.startswith(API_PATH_PREFIXES):
            return self.get_response(request)
        return super().__call__(request)


class DashboardSessionMiddleware(_DashboardOnly, SessionMiddleware):
    pass


class DashboardAuthenticationMiddleware(_DashboardOnly, AuthenticationMiddleware):
    pass


class DashboardMessageMiddleware(_DashboardOnly, MessageMiddleware):
    pass


class DashboardLocaleMiddleware(_DashboardOnly):
    """The staff member's locale, from the browser's Accept-Language (or Django's language
    cookie), for the formats of the dates and times the dashboard writes
    (apps/core/shown_time.py). Only the formats: the dashboard's words stay English, which a
    translated half of the admin would not."""

    def process_request(self, request: HttpRequest) -> None:
        shown_locale_set(translation.get_language_from_request(request))

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        shown_locale_set(None)
        patch_vary_headers(response, ("Accept-Language",))
        return response


class ReplicaWorkMiddleware:
    """Lag-tolerant reads (apps/core/replicas.py): every request starts having written nothing;
    at its end, the users it wrote are marked again (their window runs from the commit), and a
    dashboard session whose request wrote reads the primary for the window (the page it is
    sent to next shows what it saved)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        replicas.work_begins()
        response = self.get_response(request)
        if replicas.has_written():
            # Set on the dashboard's paths only (DashboardAuthenticationMiddleware).
            staff = getattr(request, "user", None)
            if staff is not None and staff.is_authenticated:
                replicas.staff_wrote(staff.pk)
        replicas.work_ends()
        return response
