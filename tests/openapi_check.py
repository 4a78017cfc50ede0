"""Every API response a test receives is checked against the OpenAPI document the server serves
(as Zulip's test client does): the documents are a contract for generated clients, and this is
what keeps them true.

A response to a request under /v1/, /api/ (the legacy mount of the application API),
/admin/v1/, or the extensions' /ext/v1/ and /admin/ext/v1/ (documents of their own) must match
a documented operation (path and method), answer one of its documented status codes, have a
documented media type, and a JSON body must validate against that response's schema. Objects
are closed: a property the schema does not list fails, unless the schema explicitly allows
additional properties. OpenAPI 3.0's `nullable: true`, which JSON
Schema does not know, is translated to "or null", and the declared formats (date, date-time,
uuid, decimal, int64 ...) are checked.

The documents are generated once per test process, through the same views that serve them;
validators are compiled once per operation, status and media type.

Two hooks feed the checker: the Django test client (every client class derives from it, so
`api_client`, a bare `APIClient()` and `django.test.Client()` are all covered), where a
mismatch raises `ResponseNotDocumented` at the request; and the live server the contract
tests drive with the SDK, where a mismatch is recorded and fails the test at teardown.

A test that deliberately sends a request no document can describe (an unknown route, a method
the route does not have) wraps that request in `undocumented("why")`.
"""

import contextlib
import datetime as dt
import json
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft4Validator, FormatChecker
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

# URL prefix -> the document describing the routes under it (whose server URL is the prefix).
MOUNTS = (
    ("/admin/ext/v1/", "/admin/ext/v1/openapi"),
    ("/ext/v1/", "/ext/v1/openapi"),
    ("/admin/v1/", "/admin/v1/openapi"),
    ("/v1/", "/v1/openapi"),
    ("/api/", "/v1/openapi"),
)
# The documents and their pages are not operations of the documents.
NOT_OPERATIONS = frozenset(
    {
        f"{mount}{page}"
        for mount in ("/v1/", "/admin/v1/", "/ext/v1/", "/admin/ext/v1/")
        for page in ("openapi", "docs")
    }
)
METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


class ResponseNotDocumented(AssertionError):
    """A response the served OpenAPI document does not describe."""


# --- opting out ---------------------------------------------------------------------------

_unchecked: ContextVar[str | None] = ContextVar("openapi_unchecked", default=None)


@contextlib.contextmanager
def undocumented(reason: str) -> Iterator[None]:
    """Requests made inside are not checked. Only for requests that no document can describe by
    design (an unknown route, a method a route does not have); say why at the call."""
    assert reason.strip(), "say why these responses are outside the documents"
    token = _unchecked.set(reason)
    try:
        yield
    finally:
        _unchecked.reset(token)


# --- translating OpenAPI 3.0 schemas to JSON Schema draft 4 --------------------------------


def _translate(schema: Any, base: str) -> Any:
    """A copy of an OpenAPI 3.0 schema as draft-4 JSON Schema: `nullable` becomes "or null",
    objects without an `additionalProperties` declaration are closed, and local `$ref`s point
    into the registered document (`base`). Values (enum, default, example) are left as they are."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in ("properties", "patternProperties"):
        if isinstance(schema.get(key), dict):
            out[key] = {name: _translate(sub, base) for name, sub in schema[key].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(key), dict):
            out[key] = _translate(schema[key], base)
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            out[key] = [_translate(sub, base) for sub in schema[key]]
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        out["$ref"] = base + ref
    if _is_object_schema(out) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    if out.pop("nullable", False) is True:
        out = _or_null(out)
    return out


def _is_object_schema(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" or (
        "properties" in schema and isinstance(schema["properties"], dict)
    )


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and "$ref" not in schema and not _has_composition(schema):
        # A type list keeps the error messages plain ("1 is not of type 'string', 'null'").
        schema["type"] = [kind, "null"]
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    return {"anyOf": [{"type": "null"}, schema]}


def _has_composition(schema: dict[str, Any]) -> bool:
    return any(key in schema for key in ("allOf", "anyOf", "oneOf", "not"))


# --- formats --------------------------------------------------------------------------------

FORMATS = FormatChecker(formats=())
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})")
_TIME = re.compile(r"\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
_DECIMAL = re.compile(r"-?\d+(\.\d+)?")
_INT64 = range(-(2**63), 2**63)


def _string_format(name: str) -> Callable[[Callable[[str], Any]], Callable[[object], bool]]:
    """Registers a check of strings (a format says nothing about other types, by JSON
    Schema's rules); the check fails by returning a false value or raising ValueError."""

    def register(check: Callable[[str], Any]) -> Callable[[object], bool]:
        @FORMATS.checks(name, raises=ValueError)
        def checked(value: object) -> bool:
            return not isinstance(value, str) or bool(check(value))

        return checked

    return register


@_string_format("date")
def _is_date(value: str) -> bool:
    return bool(_DATE.fullmatch(value)) and bool(dt.date.fromisoformat(value))


@_string_format("date-time")
def _is_date_time(value: str) -> bool:
    return bool(_DATE_TIME.fullmatch(value)) and bool(dt.datetime.fromisoformat(value))


@_string_format("time")
def _is_time(value: str) -> bool:
    return bool(_TIME.fullmatch(value)) and bool(dt.time.fromisoformat(value))


@_string_format("uuid")
def _is_uuid(value: str) -> bool:
    return bool(_UUID.fullmatch(value)) and bool(uuid.UUID(value))


@_string_format("email")
def _is_email(value: str) -> bool:
    return bool(_EMAIL.fullmatch(value))


@_string_format("uri")
def _is_uri(value: str) -> bool:
    parts = urlsplit(value)
    return bool(parts.scheme and parts.netloc)


@_string_format("decimal")
def _is_decimal(value: str) -> bool:
    try:
        return bool(_DECIMAL.fullmatch(value)) and Decimal(value).is_finite()
    except InvalidOperation:
        return False


@FORMATS.checks("int64")
def _is_int64(value: object) -> bool:
    return not isinstance(value, int) or value in _INT64


# --- one document ---------------------------------------------------------------------------


class Document:
    """One served OpenAPI document: its operations by path and method, and a validator per
    operation, status and media type (compiled on first use)."""

    def __init__(self, served_at: str, document: dict[str, Any]) -> None:
        self.served_at = served_at
        self.uri = f"urn:gamify-openapi:{served_at}"
        self.paths: dict[str, dict[str, Any]] = document["paths"]
        # What `$ref`s point at: the components, translated once.
        schemas = document.get("components", {}).get("schemas", {})
        self.components = {
            "components": {"schemas": {n: _translate(s, self.uri) for n, s in schemas.items()}}
        }
        self.routes: list[tuple[re.Pattern[str], int, str]] = []
        for template in self.paths:
            params = re.findall(r"\{[^}/]+\}", template)
            literal = "".join(
                "[^/]+" if re.fullmatch(r"\{[^}/]+\}", part) else re.escape(part)
                for part in re.split(r"(\{[^}/]+\})", template)
            )
            self.routes.append((re.compile(literal), len(params), template))
        # Where two templates match (/metrics/events and /metrics/{id}), the literal one wins,
        # as the URL patterns are ordered.
        self.routes.sort(key=lambda route: route[1])
        self._validators: dict[tuple[str, ...], Draft4Validator] = {}
        self._lock = threading.Lock()

    @cached_property
    def registry(self) -> Registry[Any]:
        resource = Resource.from_contents(self.components, default_specification=DRAFT4)
        return Registry().with_resource(self.uri, resource)

    def operation(self, method: str, relative: str) -> tuple[str, dict[str, Any] | None] | None:
        """The template matching `relative` and its operation for `method` (None when the
        template does not document the method); None when no template matches."""
        for pattern, _, template in self.routes:
            if pattern.fullmatch(relative):
                operations = self.paths[template]
                if method == "HEAD" and "head" not in operations:
                    # Django answers HEAD with the GET view, without the body.
                    return template, operations.get("get")
                return template, operations.get(method.lower())
        return None

    def validator(self, key: tuple[str, ...], schema: dict[str, Any]) -> Draft4Validator:
        """The validator of a response schema of the document, compiled on first use."""
        validator = self._validators.get(key)
        if validator is None:
            validator = Draft4Validator(
                _translate(schema, self.uri), registry=self.registry, format_checker=FORMATS
            )
            with self._lock:
                self._validators[key] = validator
        return validator

    def check(self, answer: "Answer") -> None:
        found = self.operation(answer.method, answer.relative)
        if found is None or found[1] is None:
            self._check_refusal(answer, found[0] if found else None)
            return
        template, operation = found
        name = f"{operation.get('operationId', '?')} ({answer.method} {template}, {self.served_at})"
        responses = operation["responses"]
        status = str(answer.status)
        documented = next(
            (code for code in (status, f"{status[0]}XX", "default") if code in responses), None
        )
        if documented is None:
            raise ResponseNotDocumented(
                f"{name}: status {status} is not documented (documented: "
                f"{', '.join(sorted(responses))})\nbody: {answer.body[:500]!r}"
            )
        content = responses[documented].get("content", {})
        if not answer.body or answer.method == "HEAD":
            if content and answer.method != "HEAD":
                raise ResponseNotDocumented(f"{name}: {status} has an empty body")
            return
        if answer.media not in content:
            raise ResponseNotDocumented(
                f"{name}: {status} answered {answer.media or 'no Content-Type'}; documented: "
                f"{', '.join(content) or 'no body'}"
            )
        if answer.media == "application/json":
            key = (template, answer.method, documented, answer.media)
            schema = content[answer.media]["schema"]
            self._validate(name, status, self.validator(key, schema), answer.body)

    def _check_refusal(self, answer: "Answer", template: str | None) -> None:
        """A request for a route the document does not have, or with a method it does not list
        for the route, must be refused as the document implies: 405 for a method of a
        documented route, 404 for a path that no URL pattern routes either; with the error
        body."""
        refused = (answer.status == 405 and template is not None) or (
            answer.status == 404 and not _routed(answer.path)
        )
        if not refused:
            if template is None:
                raise ResponseNotDocumented(
                    f"{answer.method} {answer.path}: no operation of {self.served_at} matches "
                    f"(answered {answer.status})"
                )
            documented = sorted(
                method.upper() for method in self.paths[template] if method in METHODS
            )
            raise ResponseNotDocumented(
                f"{answer.method} {answer.path}: {self.served_at} documents {template} only for "
                f"{', '.join(documented)} (answered {answer.status})"
            )
        name = f"{answer.method} {answer.path} (not in {self.served_at})"
        if answer.media != "application/json":
            raise ResponseNotDocumented(f"{name}: {answer.status} answered {answer.media!r}")
        schema = {"$ref": "#/components/schemas/ErrorBody"}
        self._validate(
            name, str(answer.status), self.validator(("ErrorBody",), schema), answer.body
        )

    @staticmethod
    def _validate(name: str, status: str, validator: Draft4Validator, body: bytes) -> None:
        try:
            instance = json.loads(body, parse_float=Decimal)
        except ValueError as error:
            raise ResponseNotDocumented(f"{name}: {status} body is not JSON ({error})") from None
        errors = list(validator.iter_errors(instance))
        if errors:
            where = str(validator.schema.get("$ref", "")).rpartition("/")[2]
            raise ResponseNotDocumented(
                f"{name}: {status} body does not match the document\n"
                + "\n".join(_describe(error, where) for error in errors[:10])
                + (f"\n... and {len(errors) - 10} more" if len(errors) > 10 else "")
            )


class Answer:
    """What the checker needs of a request and its response."""

    def __init__(self, method: str, path: str, relative: str, response: Any) -> None:
        self.method = method.upper()
        self.path = path
        self.relative = relative
        self.status = int(response.status_code)
        self.media = response.get("Content-Type", "").split(";")[0].strip().lower()
        self.body: bytes = b"" if response.streaming else response.content


def _describe(error: ValidationError, where: str) -> str:
    deepest = best_match([error, *error.context]) if error.context else error
    value = json.dumps(deepest.instance, default=str)
    if len(value) > 200:
        value = value[:200] + "..."
    return (
        f"  at {deepest.json_path}: {deepest.message}\n"
        f"    value: {value}\n"
        f"    schema: {where}{'/' if where else ''}"
        f"{'/'.join(map(str, deepest.absolute_schema_path))}"
    )


# --- the served documents -------------------------------------------------------------------

_documents: dict[str, Document] = {}
_documents_lock = threading.Lock()


def served_document(served_at: str) -> Document:
    """The document served at `served_at`, generated once per process by the view that serves
    it (the same urlconf, settings and hooks as in production)."""
    document = _documents.get(served_at)
    if document is None:
        from django.test import RequestFactory
        from django.urls import resolve

        request = RequestFactory().get(served_at)
        response = resolve(served_at).func(request)
        response.render()
        assert response.status_code == 200, f"{served_at} answered {response.status_code}"
        with _documents_lock:
            document = _documents.setdefault(
                served_at, Document(served_at, json.loads(response.content))
            )
    return document


def document_for(path: str) -> tuple[Document, str] | None:
    """The document that describes `path` and the path relative to its server URL, or None
    when the path is not under an API mount."""
    if path in NOT_OPERATIONS:
        return None
    for mount, served_at in MOUNTS:
        if path.startswith(mount):
            return served_document(served_at), path[len(mount) - 1 :]
    return None


def check_response(method: str, path: str, response: Any) -> None:
    """Raises ResponseNotDocumented when `response` (a Django response) to `method path` is not
    what the document describing `path` says; nothing for paths outside the API mounts."""
    if _unchecked.get() is not None:
        return
    found = document_for(path)
    if found is None:
        return
    document, relative = found
    document.check(Answer(method, path, relative, response))


def _routed(path: str) -> bool:
    """Whether a view of the URL patterns serves `path` (rather than the catch-all 404 of the
    API mounts)."""
    from django.urls import Resolver404, resolve

    from apps.core.api.errors import json_not_found

    try:
        view = resolve(path).func
    except Resolver404:
        return False
    return getattr(view, "__wrapped__", view) is not json_not_found


# --- the hooks ------------------------------------------------------------------------------

# Mismatches in responses of the live server (its request threads cannot fail the test).
live_mismatches: list[str] = []


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """Checks every response of the Django test client (raising at the request) and of the
    live server's WSGI handler (recorded in `live_mismatches`) while the context is open."""
    from django.core.handlers.base import BaseHandler
    from django.core.handlers.wsgi import WSGIHandler
    from django.test.client import Client

    client_request = Client.request
    handler_get_response = BaseHandler.get_response

    def checked_request(self: Client, **request: Any) -> Any:
        response = client_request(self, **request)
        check_response(response.wsgi_request.method, response.wsgi_request.path_info, response)
        return response

    def checked_get_response(self: WSGIHandler, request: Any) -> Any:
        response = handler_get_response(self, request)
        try:
            check_response(request.method, request.path_info, response)
        except ResponseNotDocumented as mismatch:
            live_mismatches.append(str(mismatch))
        return response

    Client.request = checked_request  # type: ignore[method-assign]
    WSGIHandler.get_response = checked_get_response  # type: ignore[method-assign]
    try:
        yield
    finally:
        Client.request = client_request  # type: ignore[method-assign]
        del WSGIHandler.get_response
