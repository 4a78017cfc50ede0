"""One structured log line per request."""

import logging
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

logger = logging.getLogger("gamify.request")


class RequestLogMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.monotonic()
        response = self.get_response(request)
        elapsed_ms = (time.monotonic() - started) * 1000
        logger.info(
            "method=%s path=%s status=%s ms=%.1f tenant=%s",
            request.method,
            request.path,
            response.status_code,
            elapsed_ms,
            request.headers.get("Tenant-ID", "-"),
        )
        return response
