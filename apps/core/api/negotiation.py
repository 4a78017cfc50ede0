"""Content negotiation without parsing the common Accept headers.

Both APIs answer JSON only (one renderer), and clients send no Accept, `*/*` or
`application/json`. DRF's negotiation parsed and ranked the header on every request, about 5 %
of a one-row read; for those three values it picks what DRF would pick (the JSON renderer, as
`application/json`), and every other header (`text/html`, parameters, a `?format=`) still goes
through DRF's negotiation, which answers 406 when nothing fits.
"""

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

# No header at all (DRF reads it as */*; an empty one is refused, so it is not here).
_PLAIN = frozenset({None, "*/*", "application/json"})


class JSONNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: Any = None
    ) -> tuple[BaseRenderer, str]:
        if (
            isinstance(renderers, list)
            and len(renderers) == 1
            and renderers[0].media_type == "application/json"
            and format_suffix is None
            and request.META.get("HTTP_ACCEPT") in _PLAIN
            and self.settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return renderers[0], "application/json"
        return super().select_renderer(request, renderers, format_suffix)
