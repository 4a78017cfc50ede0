"""OpenAPI documentation shared by both APIs (documentation only: nothing here runs on a request).

- `errors()` and `read_errors()`: an operation's error responses; every error leaves as
  {"error": "<message>"}, the `ErrorBody` shape of apps.core.api.errors.
- `Badge`: the image shape ({url}) of branding logos and of achievement and points badges.
- `AdminIssue` and the envelopes of the admin bulk conventions (apps.core.bulk).
- `collection_schema()`: documents the routes `collection_urls` builds for one Collection.
- `exclude_api_alias`: a preprocessing hook dropping the legacy /api/ mount of the application
  API, which would otherwise document every application operation twice (same operationIds)
  when a schema is generated from the root urlconf (as `manage.py check --deploy` does).
"""

import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.views import APIView

from apps.core.api.errors import ErrorBody
from apps.core.api.params import DEFAULT_NEIGHBOURS, MAX_NEIGHBOURS

if TYPE_CHECKING:
    from apps.core.bulk import Collection

# --- errors -------------------------------------------------------------------------------


ERROR_DESCRIPTIONS = {
    400: "Malformed request: the body is not valid UTF-8 JSON.",
    401: "Missing or invalid X-API-KEY.",
    403: (
        "Forbidden: an application API key used for another user's data, or a Tenant-ID that "
        "is not the application key's tenant."
    ),
    404: "Not found, or the Tenant-ID header names no active tenant.",
    413: "Request body too large.",
    422: "Validation failed.",
}
ADMIN_FORBIDDEN = "Forbidden: this endpoint requires an admin API key."


def errors(*codes: int | tuple[int, str]) -> dict[int, OpenApiResponse]:
    """Error responses for `extend_schema(responses=...)`; a (code, text) pair overrides the
    default description of that code."""
    responses: dict[int, OpenApiResponse] = {}
    for entry in codes:
        code, description = entry if isinstance(entry, tuple) else (entry, None)
        responses[code] = OpenApiResponse(
            response=ErrorBody, description=description or ERROR_DESCRIPTIONS[code]
        )
    return responses


def read_errors(
    not_found: str | None = None, invalid: str | None = None
) -> dict[int, OpenApiResponse]:
    """The errors of an application-API read: 401, 403, a 404 when `not_found` (what may be
    missing, "User not found") or the Tenant-ID names no tenant, and a 422 when `invalid`
    (what the parameters broke)."""
    missing = f"{not_found}, or unknown Tenant-ID." if not_found else "Unknown Tenant-ID."
    return errors(401, 403, (404, missing), *([(422, invalid)] if invalid else []))


# --- admin bulk conventions ---------------------------------------------------------------


ISSUE_SEVERITIES = ["error", "warning"]


class Deprecated:
    """A field documented as deprecated: written for older clients, not to be relied on
    (DeprecatedFieldExtension below marks it)."""


class DeprecatedCharField(Deprecated, serializers.CharField):
    pass


class DeprecatedChoiceField(Deprecated, serializers.ChoiceField):
    pass


class AdminIssue(serializers.Serializer):
    """A per-item problem of an admin bulk request. Exactly one locator is set: `index` (the
    0-based position of a create item), `id` (update/delete) or `userId`. `level` and `reason`
    repeat `severity` and `message` for the Node SDK 1.0.42 (apps.core.bulk.Issues)."""

    id = serializers.CharField(required=False, help_text="Resource id (update and delete).")
    index = serializers.IntegerField(
        required=False, help_text="0-based position of the item in a create request."
    )
    userId = serializers.CharField(required=False, help_text="User id (user-keyed operations).")
    severity = serializers.ChoiceField(choices=ISSUE_SEVERITIES)
    message = serializers.CharField()
    # The older spelling of the same two values, which the Node SDK 1.0.42 still requires.
    level = DeprecatedChoiceField(
        choices=ISSUE_SEVERITIES, help_text="Deprecated alias of severity: the same value."
    )
    reason = DeprecatedCharField(help_text="Deprecated alias of message: the same text.")


class AdminDeletedItem(serializers.Serializer):
    id = serializers.UUIDField()


# An image: a branding logo or app icon, an achievement or points badge.
class Badge(serializers.Serializer):
    url = serializers.URLField()


LIMIT = OpenApiParameter(
    "limit",
    {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
    OpenApiParameter.QUERY,
    description="Page size, 1 to 100 (default 10).",
)
SKIP = OpenApiParameter(
    "skip",
    {"type": "integer", "minimum": 0, "maximum": 2**31 - 1, "default": 0},
    OpenApiParameter.QUERY,
    description="Number of items to skip (default 0).",
)


def ids_parameter(description: str) -> OpenApiParameter:
    """The `ids` query list of UUIDs (query_list parses it), described for its route."""
    return OpenApiParameter(
        "ids",
        {"type": "array", "items": {"type": "string", "format": "uuid"}},
        OpenApiParameter.QUERY,
        required=True,
        style="form",
        explode=True,
        description=description,
    )


NEIGHBOURS_K = OpenApiParameter(
    "k",
    {"type": "integer", "minimum": 1, "maximum": MAX_NEIGHBOURS, "default": DEFAULT_NEIGHBOURS},
    OpenApiParameter.QUERY,
    description=f"Places shown above and below the user: 1 to {MAX_NEIGHBOURS} (default "
    f"{DEFAULT_NEIGHBOURS}).",
)
CONFIRM = OpenApiParameter(
    "confirm",
    {"type": "array", "items": {"type": "string"}},
    OpenApiParameter.QUERY,
    style="form",
    explode=True,
    description=(
        "Keys (or ids) of the objects whose deletion takes data from users, confirming it "
        "(an extension of gamify's, like the dashboard's typed key). Without it such an "
        "object is not deleted: its issue says what users would lose. Repeated keys "
        "(?confirm=a&confirm=b) or comma-separated."
    ),
)
DEACTIVATE_DEPENDANTS = OpenApiParameter(
    "deactivateDependants",
    OpenApiTypes.BOOL,
    OpenApiParameter.QUERY,
    description=(
        "true: deactivate, in the same step, the live leaderboards that rank by an archived "
        "system and archive the leagues that score by it (an extension of gamify's). Without "
        "it, a system they depend on is not archived: its issue names them."
    ),
)
IDS = ids_parameter("1 to 100 ids, as repeated keys (?ids=a&ids=b) or comma-separated (?ids=a,b).")
OBJECT_ID = OpenApiParameter(
    "object_id",
    OpenApiTypes.UUID,
    OpenApiParameter.PATH,
    description="The resource's id (a UUID; anything else is 404).",
)

ADMIN_READ_ERRORS = errors((403, ADMIN_FORBIDDEN), 401, 404)
ADMIN_WRITE_ERRORS = errors(400, 401, (403, ADMIN_FORBIDDEN), 404, 413, 422)


def _words(prefix: str) -> list[str]:
    """URL prefix -> words: "application-api-keys" -> [application, api, keys];
    "points/<str:system_id>/levels" -> [points, levels]."""
    return [word for word in re.split(r"[/\-_]+", re.sub(r"<[^>]*>", "", prefix)) if word]


def collection_schema(
    list_view: type[APIView], item_view: type[APIView] | None, collection: "Collection", prefix: str
) -> None:
    """Annotate the views `collection_urls` built for one collection.

    OperationIds are admin_<prefix words>_<list|create|update|delete|get> (admin_metrics_list,
    admin_application_api_keys_create ...); envelope components are named
    Create<Prefix>Response / Update<Prefix>Response / Delete<Prefix>Response. The objects come
    from `collection.output_schema` (a serializer class used for documentation only).
    """
    words = _words(collection.schema_prefix or prefix)
    op = "admin_" + "_".join(words)
    plural = "".join(word.capitalize() for word in words)
    noun = collection.noun
    output: Any = collection.output_schema
    one: Any = output if output is not None else OpenApiTypes.OBJECT
    many: Any = (
        output(many=True)
        if output is not None
        else {"type": "array", "items": {"type": "object", "additionalProperties": {}}}
    )

    def envelope(verb: str, key: str, items: Any) -> Any:
        return inline_serializer(
            name=f"{verb}{plural}Response",
            fields={key: items, "issues": AdminIssue(many=True)},
        )

    bulk_note = (
        " The body is a JSON array of 1 to 100 items. Each item succeeds or fails on its own: "
        "a failed item is reported in `issues` (with its position or id), never as an HTTP error."
    )
    allowed = set(list_view.http_method_names)
    annotations: dict[str, Any] = {}
    if "get" in allowed:
        annotations["get"] = extend_schema(
            operation_id=f"{op}_list",
            summary=f"List {noun.lower()}s",
            description="A bare JSON array, oldest first.",
            parameters=[LIMIT, SKIP],
            responses={
                200: many,
                **ADMIN_READ_ERRORS,
                **errors((422, "limit or skip out of range.")),
            },
        )
    if "post" in allowed:
        created_items = output(many=True) if output is not None else serializers.ListField()
        created = envelope("Create", "created", created_items)
        annotations["post"] = extend_schema(
            operation_id=f"{op}_create",
            summary=f"Create {noun.lower()}s",
            description=f"Creates each item.{bulk_note}",
            request=collection.create_serializer(many=True),  # type: ignore[misc]
            responses={
                201: OpenApiResponse(created, description="At least one item was created."),
                200: OpenApiResponse(created, description="No item was created; see issues."),
                **ADMIN_WRITE_ERRORS,
            },
        )
    if "patch" in allowed:
        updated_items = output(many=True) if output is not None else serializers.ListField()
        annotations["patch"] = extend_schema(
            operation_id=f"{op}_update",
            summary=f"Update {noun.lower()}s",
            description=(
                f"Updates the supplied fields of each item, found by its `id`.{bulk_note}"
            ),
            request=collection.update_serializer(many=True),  # type: ignore[misc]
            responses={
                200: envelope("Update", "updated", updated_items),
                **ADMIN_WRITE_ERRORS,
            },
        )
    if "delete" in allowed:
        annotations["delete"] = extend_schema(
            operation_id=f"{op}_delete",
            summary=f"Delete {noun.lower()}s",
            description=(
                "Deletes each id. An unknown or malformed id is reported in `issues`, "
                "never as an HTTP error."
                + (
                    " An object whose deletion would take data from users or leave a feature "
                    "unusable is not deleted either: its issue says why (see the parameters)."
                    if collection.delete_parameters
                    else ""
                )
            ),
            parameters=[IDS, *collection.delete_parameters],
            responses={
                200: envelope("Delete", "deleted", AdminDeletedItem(many=True)),
                **ADMIN_READ_ERRORS,
                **errors((422, "ids missing or more than 100.")),
            },
        )
    extend_schema_view(**annotations)(list_view)
    if item_view is not None:
        extend_schema_view(
            get=extend_schema(
                operation_id=f"{op}_get",
                summary=f"Get a {noun.lower()}",
                description="The object with that id.",
                parameters=[OBJECT_ID],
                responses={200: one, **ADMIN_READ_ERRORS},
            )
        )(item_view)


# --- hooks (SPECTACULAR_SETTINGS) ---------------------------------------------------------


def exclude_api_alias(endpoints: list[tuple[Any, ...]], **kwargs: Any) -> list[tuple[Any, ...]]:
    """/api/ mounts the application API a second time (legacy base URL); document it once.

    The served documents use their own urlconfs and never see /api/; this matters only when a
    schema is generated from the root urlconf (the deploy check)."""
    return [endpoint for endpoint in endpoints if not endpoint[0].startswith("/api/")]


# What StrictSerializer enforces (apps/core/api/fields.py), as JSON Schema patterns (ECMAScript
# regular expressions): no control characters; free text may hold tabs and line breaks.
_NO_CONTROL = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$"
# Django's EmailValidator, in the ASCII subset a generated client can rely on.
_ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL = f"^{_ATOM}(\\.{_ATOM})*@({_LABEL}\\.)+[A-Za-z]{{2,63}}$"
_FREE_TEXT = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$"


# Answers any operation may give, whatever its own declarations: a NUL character anywhere in
# the URL (NulByteMiddleware) and the organization's rate limit.
_EVERY_OPERATION = {
    "400": "Malformed request: a NUL character in the URL, or a body that is not UTF-8 JSON.",
    "429": "Rate limit of the organization's tier exceeded; retry after Retry-After seconds.",
}


# Answered by every write while the organization moves between database cells (apps/cells).
_WRITES = frozenset({"post", "put", "patch", "delete"})
_READ_ONLY = (
    "The organization is moving to another database cell and is read-only for a few seconds; "
    "retry after Retry-After seconds."
)


# Answered by every operation with a {user_id} in its path whose id breaks the rule of a user id
# (ScopedApi.initial, apps.core.api.views).
_BAD_USER_ID = "the user id in the path is longer than 255 characters or holds control characters."


# Answered by every operation that reads a body, when the body is not JSON (the parsers accept
# application/json only; apps.core.api.errors).
_NOT_JSON = "The body is not application/json (Content-Type)."


# Answered by gunicorn, before the application, to a request line over 8 KB (gunicorn_conf).
_URI_TOO_LONG = {
    "description": "Request line (method, path and query) over 8,190 bytes.",
    "content": {"text/html": {"schema": {"type": "string"}}},
}


class DeprecatedFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "apps.core.openapi.Deprecated"
    match_subclasses = True

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer_field(
            self.target, direction, bypass_extensions=True
        )
        return {**schema, "deprecated": True}


class PositiveDecimalFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "apps.core.api.fields.PositiveDecimalField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer_field(
            self.target, direction, bypass_extensions=True
        )
        places = self.target.decimal_places
        # The smallest value that does not round to 0; below a double's exact integers.
        schema.update(minimum=float(Decimal(1).scaleb(-places)), maximum=1e15)
        schema.pop("exclusiveMaximum", None)
        schema.pop("exclusiveMinimum", None)
        schema["description"] = f"Greater than 0; rounded to {places} decimal places."
        return schema


def _user_id_limits(operation: dict[str, Any], error: dict[str, Any]) -> None:
    from apps.core.api.fields import MAX_USER_ID

    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "path" and parameter.get("name") == "user_id":
            parameter["schema"].update(maxLength=MAX_USER_ID, pattern=_NO_CONTROL)
            invalid = operation["responses"].get("422")
            if invalid is None:
                operation["responses"]["422"] = {
                    "description": _BAD_USER_ID.capitalize(),
                    "content": error,
                }
            else:
                invalid["description"] += f" Also when {_BAD_USER_ID}"


def request_limits(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: request bodies say what the server refuses, so that a request valid
    by the document is accepted: unknown fields (`additionalProperties: false`) and control
    characters in strings (a pattern on every plain string property); and every operation lists
    the answers any request may get (400 for a NUL in the URL, 414 for an overlong URL, 429;
    503 for a write while the organization moves between cells;
    415 for a body that is not JSON where the operation takes one; 422 for an invalid user id
    where the path holds one, whose parameter states the rule)."""
    from apps.core.api.fields import FREE_TEXT_FIELDS

    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for code, description in _EVERY_OPERATION.items():
                operation["responses"].setdefault(
                    code, {"description": description, "content": error}
                )
            if method in _WRITES:
                operation["responses"].setdefault(
                    "503", {"description": _READ_ONLY, "content": error}
                )
            operation["responses"].setdefault("414", _URI_TOO_LONG)
            if "requestBody" in operation:
                operation["responses"].setdefault(
                    "415", {"description": _NOT_JSON, "content": error}
                )
            _user_id_limits(operation, error)

    for name, schema in result.get("components", {}).get("schemas", {}).items():
        if not name.endswith("Request") or schema.get("type") != "object":
            continue
        schema.setdefault("additionalProperties", False)
        for field, prop in schema.get("properties", {}).items():
            if prop.get("type") != "string" or "enum" in prop or "pattern" in prop:
                continue
            if prop.get("format") not in (None, "email", "uri"):
                continue
            if prop.get("format") == "email":
                prop["pattern"] = _EMAIL
            else:
                prop["pattern"] = _FREE_TEXT if field in FREE_TEXT_FIELDS else _NO_CONTROL
    return result
