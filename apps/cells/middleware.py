"""Every request runs in its organization's cell (docs/architecture.md §8).

Early in MIDDLEWARE, before anything reads a cell: an API request's cell comes from its key's
prefix (X-API-KEY) through the directory; a dashboard request's from the organization of the
tenant the staff member picked (the session, apps/accounts/staff.py). The rest of the request,
sync or async (the live streams), runs inside `using_cell`. With a single cell there is
nothing to route and the middleware does nothing.

While a move switches an organization to another cell, the organization is read-only: an API
write (any method but GET, HEAD and OPTIONS) answers 503 with Retry-After and the house's error
body, which the SDKs and well-behaved clients retry; reads go on.
"""

import uuid
from collections.abc import Awaitable
from typing import Any

from django.contrib.auth import SESSION_KEY as AUTH_SESSION_KEY
from django.http import HttpRequest, HttpResponse, JsonResponse

from apps.cells.directory import Route, key_route, organization_route
from apps.core.api.errors import error_body_render
from apps.core.cells import DEFAULT_CELL, cells_configured, using_cell
from apps.core.middleware import SyncAndAsyncMiddleware
from apps.core.stream_tokens import stream_token_cell

# The organization of the dashboard's selected tenant (written by apps/accounts/staff.py).
SESSION_ORGANIZATION = "dashboard_organization"
READ_ONLY_RETRY_AFTER = 5
READ_ONLY_MESSAGE = (
    "This organization is moving to another database cell and accepts no writes for a few "
    "seconds; retry after Retry-After seconds"
)
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def request_route(request: HttpRequest) -> Route | None:
    """The route of the request's organization; None when it names none (the default cell)."""
    raw = request.headers.get("X-API-KEY")
    if raw:
        prefix, sep, _ = raw.strip().partition(".")
        return key_route(prefix) if sep and prefix and len(prefix) <= 32 else None
    token = request.GET.get("token")
    if token:  # a live stream opened with a stream token (apps/streams)
        cell = stream_token_cell(token)
        return Route(cell) if cell is not None else None
    session = getattr(request, "session", None)
    if session is not None:
        chosen = session.get(SESSION_ORGANIZATION)
        if chosen:
            try:
                return organization_route(uuid.UUID(chosen))
            except ValueError:
                return None
    return None


_mirrored: set[tuple[str, str]] = set()


def _staff_mirror(request: HttpRequest, cell: str) -> None:
    """A staff member working in a cell other than "default" has a copy of their user row
    there (with an unusable password: they log in against the control database), which the
    cell's rows that name them (the change history, organization staff) refer to."""
    session = getattr(request, "session", None)
    user_pk = session.get(AUTH_SESSION_KEY) if session is not None else None
    if cell == DEFAULT_CELL or user_pk is None or (cell, str(user_pk)) in _mirrored:
        return
    from apps.cells.move import staff_mirrored

    with using_cell(cell):
        staff_mirrored([user_pk])
    _mirrored.add((cell, str(user_pk)))


def read_only_response() -> HttpResponse:
    response = JsonResponse(error_body_render(READ_ONLY_MESSAGE), status=503)
    response["Retry-After"] = str(READ_ONLY_RETRY_AFTER)
    return response


class CellMiddleware(SyncAndAsyncMiddleware):
    def _route(self, request: HttpRequest) -> Route | HttpResponse | None:
        if not cells_configured():
            return None
        route = request_route(request)
        if route is None:
            return None
        if route.read_only_since is not None and request.method not in _SAFE_METHODS:
            return read_only_response()
        if not request.headers.get("X-API-KEY"):
            _staff_mirror(request, route.cell)
        return route

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        route = self._route(request)
        if isinstance(route, HttpResponse):
            return route
        if route is None:
            return self.get_response(request)
        with using_cell(route.cell):
            return _streamed_in(self.get_response(request), route.cell)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        # The directory is read in the request's own thread: a cached answer costs nothing.
        from asgiref.sync import sync_to_async

        if not cells_configured():  # one cell: no thread hop for nothing
            return await self.get_response(request)
        route = await sync_to_async(self._route)(request)
        if isinstance(route, HttpResponse):
            return route
        response: Awaitable[HttpResponse]
        if route is None:
            response = self.get_response(request)
            return await response
        with using_cell(route.cell):
            response = self.get_response(request)
            return _streamed_in(await response, route.cell)


def _streamed_in(response: Any, cell: str) -> Any:
    """A streamed body is produced after the middleware has returned (the live streams' board
    reads): its iteration enters the cell again."""
    if not getattr(response, "streaming", False):
        return response
    content = response.streaming_content
    if response.is_async:

        async def cell_content() -> Any:
            with using_cell(cell):
                async for chunk in content:
                    yield chunk

        response.streaming_content = cell_content()
    else:

        def cell_content_sync() -> Any:
            with using_cell(cell):
                yield from content

        response.streaming_content = cell_content_sync()
    return response
