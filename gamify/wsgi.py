import io
import os
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gamify.settings")


class ChunkedBodies:
    """Django reads CONTENT_LENGTH bytes of a request body, and a body sent with
    `Transfer-Encoding: chunked` has no length: it was read as empty (a valid event answered
    422). gunicorn ends `wsgi.input` where such a body ends (`wsgi.input_terminated`), so it is
    read here, up to one byte over the limit, and handed on with its length; a body over the
    limit is then answered 413 like any other."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not environ.get("CONTENT_LENGTH") and environ.get("wsgi.input_terminated"):
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            body = environ["wsgi.input"].read(-1 if limit is None else limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)


application = ChunkedBodies(get_wsgi_application())
