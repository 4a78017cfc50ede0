"""The admin API's bulk conventions, written once (reference §2.2).

A collection (metrics, attributes, tenants, ...) declares its serializers and a handful of
service calls; `CollectionApi` and `CollectionItemApi` turn that into

    GET    /<coll>?limit=&skip=      bare JSON array
    POST   /<coll>   [items]         {"created": [...], "issues": [...]}  201 if any, else 200
    PATCH  /<coll>   [items with id] {"updated": [...], "issues": [...]}
    DELETE /<coll>?ids=a&ids=b       {"deleted": [{"id"}], "issues": [...]}
    GET    /<coll>/{id}              object or 404

A guarded collection's DELETE (metrics, achievements, leaderboards, points systems) also reads
`confirm` (the keys or ids of objects whose users lose data: apps/core/guards.py) and
`deactivateDependants` (the points systems' live leaderboards and leagues): `DeleteAsked`.

Per-item problems become issues, never HTTP errors. Each item runs in its own savepoint, so a
failed item leaves nothing half-written and does not undo the items before it.
"""

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from django.db import IntegrityError, transaction
from django.db.models import ProtectedError, RestrictedError
from django.urls import URLPattern, path
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.errors import validation_message
from apps.core.api.fields import StrictSerializer
from apps.core.api.naming import wire_namer
from apps.core.api.params import is_uuid, query_bool, query_ids, query_limit_skip, query_list
from apps.core.api.views import AdminApi
from apps.core.errors import ApplicationError, NotFoundError, ValidationError
from apps.core.openapi import collection_schema
from apps.core.scope import Scope

MAX_BULK_ITEMS = 100


@dataclass
class Issues:
    """Collects AdminIssue objects: {id?|index?|userId?, severity, message, level, reason}.

    Each issue says its severity and message twice: as `severity` and `message`, Trophy's
    AdminIssue that the Python SDK (1.27.0) reads, and as `level` and `reason`, the older names
    of the newest Node SDK on npm (1.0.42, `BulkInsertIssue`), which refuses an answer without
    them (reference §2.3). `level` and `reason` are documented as deprecated aliases."""

    items: list[dict[str, Any]] = field(default_factory=list)

    def error(self, message: str, **where: Any) -> None:
        self._add("error", message, where)

    def warning(self, message: str, **where: Any) -> None:
        self._add("warning", message, where)

    def _add(self, severity: str, message: str, where: dict[str, Any]) -> None:
        self.items.append(
            {
                **where,
                "severity": severity,
                "message": message,
                "level": severity,
                "reason": message,
            }
        )


def bulk_items(data: Any, maximum: int = MAX_BULK_ITEMS, name: str = "body") -> list[Any]:
    if not isinstance(data, list):
        raise ValidationError(f"{name} must be a JSON array of objects")
    if not 1 <= len(data) <= maximum:
        raise ValidationError(f"{name} must hold between 1 and {maximum} items")
    return data


def run_item(
    issues: Issues,
    where: dict[str, Any],
    work: Callable[[], Any],
    serializer_class: type[serializers.Serializer] | None = None,
) -> Any | None:
    """Run one item's work in a savepoint; record its failure as an issue and return None. A
    service's refusal names its fields as `serializer_class`, which read the item, does."""
    try:
        with transaction.atomic():
            return work()
    except serializers.ValidationError as exc:
        issues.error(validation_message(exc.detail), **where)
    except ApplicationError as exc:
        issues.error(exc.worded(wire_namer(serializer_class)), **where)
    except (ProtectedError, RestrictedError) as exc:
        # RestrictedError is an IntegrityError: caught first.
        held = exc.protected_objects if isinstance(exc, ProtectedError) else exc.restricted_objects
        used_by = sorted({str(obj) for obj in held})[:5]
        issues.error(f"Still in use by other configuration: {', '.join(used_by)}", **where)
    except IntegrityError:
        # A concurrent request won a unique constraint between our check and our write.
        issues.error("Conflicts with an existing record; retry the item", **where)
    return None


def validated(serializer_class: type[serializers.Serializer], item: Any, **context: Any) -> Any:
    if not isinstance(item, dict):
        raise ValidationError("Item must be a JSON object")
    serializer = serializer_class(data=item, context=context)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


@dataclass(frozen=True)
class DeleteAsked:
    """What a DELETE request asks beyond its ids (guarded collections, apps/core/guards.py):
    the keys or ids it confirms, and whether dependants may be deactivated in the same step."""

    confirm: frozenset[str] = frozenset()
    deactivate_dependants: bool = False

    def confirmation(self, *names: str) -> str:
        """The one of `names` (an object's key, its id) the request confirms, or ""."""
        return next((name for name in names if name in self.confirm), "")


class Collection(ABC):
    """One admin collection. Subclasses set the serializers and implement the calls they need;
    create and update are routed only when the matching serializer is set."""

    noun: ClassVar[str] = "Resource"
    # Input shapes; `service_kwargs` maps what they validated to the service's arguments.
    create_serializer: ClassVar[type[StrictSerializer] | None] = None
    update_serializer: ClassVar[type[StrictSerializer] | None] = None
    # Names operationIds and envelope components when the URL prefix alone would not
    # ("points" -> "points-systems": CreatePointsSystemsResponse, as Trophy names it).
    schema_prefix: ClassVar[str | None] = None
    # Documentation only: the serializer describing what render() returns (OpenAPI schema).
    output_schema: ClassVar[type[serializers.Serializer] | None] = None

    def parent(self, scope: Scope, kwargs: dict[str, Any]) -> Any:
        """For nested collections (levels of a points system): load the parent or raise 404."""
        return None

    @abstractmethod
    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Any]: ...

    @abstractmethod
    def get(self, scope: Scope, parent: Any, object_id: str) -> Any | None: ...

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Any:
        raise ValidationError(f"{self.noun} cannot be created through this endpoint")

    def update(self, scope: Scope, parent: Any, obj: Any, data: dict[str, Any]) -> Any:
        raise ValidationError(f"{self.noun} cannot be updated through this endpoint")

    @abstractmethod
    def delete(self, scope: Scope, parent: Any, obj: Any) -> None: ...

    # The DELETE's query parameters beyond `ids` (documentation: OpenApiParameters), for a
    # collection that overrides delete_asked.
    delete_parameters: ClassVar[Sequence[Any]] = ()

    def delete_asked(self, scope: Scope, parent: Any, obj: Any, asked: DeleteAsked) -> None:
        """Delete with what the request asked (DeleteAsked); by default the plain delete."""
        self.delete(scope, parent, obj)

    @abstractmethod
    def render(self, obj: Any) -> dict[str, Any]: ...

    def not_found_message(self) -> str:
        return f"{self.noun} not found by ID"

    def get_or_404(self, scope: Scope, parent: Any, object_id: str) -> Any:
        obj = self.get(scope, parent, object_id) if is_uuid(object_id) else None
        if obj is None:
            raise NotFoundError(self.not_found_message())
        return obj


class CollectionApi(AdminApi):
    collection: ClassVar[Collection]

    def get(self, request: Request, **kwargs: Any) -> Response:
        scope = self.scope(request)
        parent = self.collection.parent(scope, kwargs)
        limit, skip = query_limit_skip(request.query_params)
        objects = self.collection.list(scope, parent, limit, skip)
        return Response([self.collection.render(obj) for obj in objects])

    @staticmethod
    def _run(
        units: Iterator[tuple[dict[str, Any], Callable[[], Any]]],
        serializer_class: type[serializers.Serializer] | None = None,
    ) -> tuple[list[Any], Issues]:
        """Run each item's work in its own savepoint, inside one transaction for the request."""
        issues = Issues()
        results: list[Any] = []
        with transaction.atomic():
            for where, work in units:
                result = run_item(issues, where, work, serializer_class)
                if result is not None:
                    results.append(result)
        return results, issues

    def post(self, request: Request, **kwargs: Any) -> Response:
        coll = self.collection
        scope = self.scope(request)
        parent = coll.parent(scope, kwargs)
        items = bulk_items(request.data)
        assert coll.create_serializer is not None  # noqa: S101 - POST is routed only when set
        serializer_class = coll.create_serializer

        def units() -> Iterator[tuple[dict[str, Any], Callable[[], Any]]]:
            for index, item in enumerate(items):

                def work(item: Any = item) -> Any:
                    data = validated(serializer_class, item, scope=scope, parent=parent)
                    return coll.render(coll.create(scope, parent, data))

                yield {"index": index}, work

        created, issues = self._run(units(), serializer_class)
        status = 201 if created else 200
        return Response({"created": created, "issues": issues.items}, status=status)

    def patch(self, request: Request, **kwargs: Any) -> Response:
        coll = self.collection
        scope = self.scope(request)
        parent = coll.parent(scope, kwargs)
        items = bulk_items(request.data)
        assert coll.update_serializer is not None  # noqa: S101 - PATCH is routed only when set
        serializer_class = coll.update_serializer

        def units() -> Iterator[tuple[dict[str, Any], Callable[[], Any]]]:
            for index, item in enumerate(items):
                object_id = item.get("id") if isinstance(item, dict) else None
                if not isinstance(object_id, str) or not is_uuid(object_id):
                    yield {"index": index}, _fail("id must be a valid UUID")
                    continue

                def work(item: Any = item, object_id: str = object_id) -> Any:
                    obj = coll.get_or_404(scope, parent, object_id)
                    data = validated(
                        serializer_class, item, scope=scope, parent=parent, instance=obj
                    )
                    return coll.render(coll.update(scope, parent, obj, data))

                yield {"id": object_id}, work

        updated, issues = self._run(units(), serializer_class)
        return Response({"updated": updated, "issues": issues.items})

    def delete(self, request: Request, **kwargs: Any) -> Response:
        coll = self.collection
        scope = self.scope(request)
        parent = coll.parent(scope, kwargs)
        ids = query_ids(request.query_params)
        asked = DeleteAsked(
            confirm=frozenset(query_list(request.query_params, "confirm")),
            deactivate_dependants=query_bool(request.query_params, "deactivateDependants"),
        )

        def units() -> Iterator[tuple[dict[str, Any], Callable[[], Any]]]:
            for object_id in ids:
                if not is_uuid(object_id):
                    yield {"id": object_id}, _fail("id must be a valid UUID")
                    continue

                def work(object_id: str = object_id) -> dict[str, str]:
                    obj = coll.get_or_404(scope, parent, object_id)
                    coll.delete_asked(scope, parent, obj, asked)
                    return {"id": object_id}

                yield {"id": object_id}, work

        deleted, issues = self._run(units())
        return Response({"deleted": deleted, "issues": issues.items})


def _fail(message: str) -> Callable[[], Any]:
    def work() -> Any:
        raise ValidationError(message)

    return work


class CollectionItemApi(AdminApi):
    collection: ClassVar[Collection]

    def get(self, request: Request, object_id: str, **kwargs: Any) -> Response:
        scope = self.scope(request)
        parent = self.collection.parent(scope, kwargs)
        return Response(
            self.collection.render(self.collection.get_or_404(scope, parent, object_id))
        )


def collection_urls(
    prefix: str, collection: Collection, name: str, *, readable: bool = True, deletable: bool = True
) -> list[URLPattern]:
    """Routes for one collection; `prefix` may contain converters such as <str:system_id>.

    `readable=False` drops the list and item reads (application API keys are write-only)."""
    methods = [
        m
        for m, on in (
            ("get", readable),
            ("delete", deletable),
            ("post", collection.create_serializer is not None),
            ("patch", collection.update_serializer is not None),
        )
        if on
    ]
    list_view: type[CollectionApi] = type(
        f"{name}CollectionApi",
        (CollectionApi,),
        {"collection": collection, "http_method_names": [*methods, "options"]},
    )
    item_view: type[CollectionItemApi] | None = (
        type(f"{name}ItemApi", (CollectionItemApi,), {"collection": collection})
        if readable
        else None
    )
    collection_schema(list_view, item_view, collection, prefix)
    urls = [path(prefix, list_view.as_view(), name=f"admin-{name}-list")]
    if item_view is not None:
        urls.append(
            path(f"{prefix}/<str:object_id>", item_view.as_view(), name=f"admin-{name}-item")
        )
    return urls
