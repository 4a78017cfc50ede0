"""The request whose configuration writes the change history attributes (apps/accounts/history.py):
the staff member of a dashboard request, the key of an API request."""

from collections.abc import Awaitable
from typing import Any

from django.http import HttpRequest, HttpResponse

from apps.accounts import history
from apps.core.middleware import SyncAndAsyncMiddleware


class HistoryRequestMiddleware(SyncAndAsyncMiddleware):
    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        with history.request_serving(request):
            return self.get_response(request)

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        # The live streams write no configuration: nothing to attribute.
        response: Awaitable[HttpResponse] = self.get_response(request)
        return await response
