"""Admin API of the configuration's history, file, diff, promote and environments, under
/admin/ext/v1/ (README "Configuration you can trust"). An admin key writes only its own
environment: it may read another environment of its organization (the source of a diff or a
promote, or of a clone), and promote into its own tenant."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.models import ConfigChange, Environment, Tenant
from apps.accounts.selectors import environments_list, tenant_resolve
from apps.changes import files, selectors, serializers, services
from apps.changes.schema import document_schema
from apps.core.api.params import is_uuid, query_bool, query_limit_skip
from apps.core.api.parsers import StrictJSONParser, body_read
from apps.core.api.views import AdminApi
from apps.core.bulk import validated
from apps.core.errors import NotFoundError
from apps.core.openapi import ADMIN_FORBIDDEN, ADMIN_READ_ERRORS, ADMIN_WRITE_ERRORS, errors

TAGS = ["configuration"]
# Reads with parameters: a parameter out of its range is a 422, as everywhere.
READ_ERRORS = errors(401, (403, ADMIN_FORBIDDEN), 404, 422)

CHANGE_ID = OpenApiParameter(
    "change_id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The change's id."
)
KIND = OpenApiParameter(
    "kind", str, OpenApiParameter.QUERY, description="Only changes of this kind (metric, ...)."
)
KEY = OpenApiParameter(
    "key", str, OpenApiParameter.QUERY, description="Only changes of the object of this key."
)
LIMIT = OpenApiParameter(
    "limit",
    {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
    OpenApiParameter.QUERY,
    description="Changes per page, newest first (1 to 100).",
)
SKIP = OpenApiParameter(
    "skip", {"type": "integer", "minimum": 0, "default": 0}, OpenApiParameter.QUERY
)
DRY_RUN = OpenApiParameter(
    "dryRun",
    {"type": "boolean", "default": False},
    OpenApiParameter.QUERY,
    description="Return the plan and write nothing.",
)
FROM_ENVIRONMENT = OpenApiParameter(
    "fromEnvironment",
    str,
    OpenApiParameter.QUERY,
    description="The key of an environment of your organization (default: the key's own).",
)
FROM_TENANT = OpenApiParameter(
    "fromTenant",
    str,
    OpenApiParameter.QUERY,
    description="A tenant's customer id in it (default: its default tenant).",
)


class YAMLParser(BaseParser):
    """A configuration file sent as it is written (`Content-Type: application/yaml`)."""

    media_type = "application/yaml"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return files.loads(body_read(stream))


def _source(scope: Any, environment_key: str | None, customer_id: str | None) -> Tenant:
    """A tenant of the key's organization: the named environment's (default: the key's own)
    tenant of that customer id (default: its default tenant)."""
    environment: Environment = scope.environment
    if environment_key and environment_key != environment.key:
        found = Environment.objects.filter(
            organization_id=environment.organization_id, key=environment_key
        ).first()
        if found is None:
            raise NotFoundError("Environment not found by key")
        environment = found
    tenant = tenant_resolve(environment, customer_id or None)
    tenant.environment = environment
    return tenant


class HistoryApi(AdminApi):
    @extend_schema(
        operation_id="ext_admin_history_list",
        summary="List configuration changes",
        description="Every configuration write of the tenant, newest first: who, when, how, and "
        "each object's state before and after.",
        tags=TAGS,
        parameters=[KIND, KEY, LIMIT, SKIP],
        responses={200: serializers.ConfigChangeShape(many=True), **READ_ERRORS},
    )
    def get(self, request: Request) -> Response:
        scope = self.scope(request)
        limit, skip = query_limit_skip(request.query_params)
        changes = selectors.changes_list(
            scope.tenant,
            kind=request.query_params.get("kind") or None,
            key=request.query_params.get("key") or None,
            limit=limit,
            skip=skip,
        )
        return Response([serializers.config_change_render(change) for change in changes])


def _change(scope: Any, change_id: str) -> ConfigChange:
    change = selectors.change_get(scope.tenant, change_id) if is_uuid(change_id) else None
    if change is None:
        raise NotFoundError("Change not found by ID")
    return change


class ChangeApi(AdminApi):
    @extend_schema(
        operation_id="ext_admin_history_get",
        summary="Get a configuration change",
        tags=TAGS,
        parameters=[CHANGE_ID],
        responses={200: serializers.ConfigChangeShape, **ADMIN_READ_ERRORS},
    )
    def get(self, request: Request, change_id: str) -> Response:
        return Response(serializers.config_change_render(_change(self.scope(request), change_id)))


class ChangeRevertApi(AdminApi):
    @extend_schema(
        operation_id="ext_admin_history_revert",
        summary="Revert a configuration change",
        description="Puts the object back in its state before the change, through the same "
        "validation as the admin API. Refused (422) when the object changed since (revert the "
        "later change first), when later changes depend on an object the revert would remove, "
        "or when the change was reverted already.",
        tags=TAGS,
        parameters=[CHANGE_ID],
        request=None,
        responses={200: serializers.RevertResult, **ADMIN_WRITE_ERRORS},
    )
    def post(self, request: Request, change_id: str) -> Response:
        change = _change(self.scope(request), change_id)
        applied = services.change_revert(change)
        change.refresh_from_db()
        return Response(serializers.revert_result_render(change, applied.changes))


class ConfigApi(AdminApi):
    @extend_schema(
        operation_id="ext_admin_config_export",
        summary="Export the configuration",
        description="The tenant's whole configuration as the configuration file has it "
        "(JSON here; `manage.py config export` writes YAML). Objects are named by key, never "
        "by id. The file's JSON Schema is at /admin/ext/v1/config/schema.",
        tags=TAGS,
        responses={200: OpenApiTypes.OBJECT, **ADMIN_READ_ERRORS},
    )
    def get(self, request: Request) -> Response:
        return Response(services.config_document(self.scope(request).tenant))


class ConfigSchemaApi(AdminApi):
    @extend_schema(
        operation_id="ext_admin_config_schema",
        summary="The configuration file's JSON Schema",
        tags=TAGS,
        responses={200: OpenApiTypes.OBJECT, **ADMIN_READ_ERRORS},
    )
    def get(self, request: Request) -> Response:
        return Response(document_schema())


class ConfigApplyApi(AdminApi):
    parser_classes = [StrictJSONParser, YAMLParser]

    @extend_schema(
        operation_id="ext_admin_config_apply",
        summary="Apply a configuration file",
        description="Makes the tenant's configuration what the file says, for the sections it "
        "has: objects are created or changed, and those of a section the file leaves out are "
        "archived (or deleted, where their kind has no archive). All or nothing; the same file "
        "again changes nothing. The body is the file, as JSON or as YAML "
        "(`Content-Type: application/yaml`); it is checked against the JSON Schema first.",
        tags=TAGS,
        parameters=[DRY_RUN],
        request={"application/json": OpenApiTypes.OBJECT, "application/yaml": OpenApiTypes.STR},
        responses={200: serializers.ApplyResult, **ADMIN_WRITE_ERRORS},
    )
    def post(self, request: Request) -> Response:
        dry_run = query_bool(request.query_params, "dryRun")
        applied = services.config_apply(self.scope(request).tenant, request.data, dry_run=dry_run)
        return Response(serializers.apply_result_render(dry_run, applied.steps, applied.changes))


class DiffApi(AdminApi):
    @extend_schema(
        operation_id="ext_admin_config_diff",
        summary="Diff another environment or tenant against this one",
        description="What a promote from the other tenant would change in this one (the "
        "request's tenant), per object matched by kind and key: created, changed field by "
        "field, or removed.",
        tags=TAGS,
        parameters=[FROM_ENVIRONMENT, FROM_TENANT],
        responses={200: serializers.DiffResult, **READ_ERRORS},
    )
    def get(self, request: Request) -> Response:
        scope = self.scope(request)
        params = request.query_params  # a name no environment or tenant has is a 404
        source = _source(scope, params.get("fromEnvironment"), params.get("fromTenant"))
        steps = services.diff(source, scope.tenant)
        return Response(serializers.diff_result_render(source, scope.tenant, steps))


class PromoteApi(AdminApi):
    @extend_schema(
        operation_id="ext_admin_config_promote",
        summary="Promote changes from another environment or tenant",
        description="Applies the diff from the other tenant to this one (all of it, or the "
        "steps named in `changes`), atomically, through the admin API's validation; recorded "
        "in the history with source promote.",
        tags=TAGS,
        request=serializers.PromoteSerializer,
        responses={200: serializers.ApplyResult, **ADMIN_WRITE_ERRORS},
    )
    def post(self, request: Request) -> Response:
        scope = self.scope(request)
        data = validated(serializers.PromoteSerializer, request.data)
        source = _source(scope, data.get("fromEnvironment"), data.get("fromTenant"))
        applied = services.promote(source, scope.tenant, data.get("changes"))
        return Response(serializers.apply_result_render(False, applied.steps, applied.changes))


class EnvironmentsApi(AdminApi):
    @extend_schema(
        operation_id="ext_admin_environments_list",
        summary="List your organization's environments",
        tags=TAGS,
        responses={200: serializers.EnvironmentShape(many=True), **ADMIN_READ_ERRORS},
    )
    def get(self, request: Request) -> Response:
        found = environments_list(self.scope(request).environment)
        return Response([serializers.environment_render(each) for each in found])

    @extend_schema(
        operation_id="ext_admin_environments_clone",
        summary="Create an environment as a clone of another",
        description="A new environment of your organization whose default tenant starts with "
        "the configuration of `fromEnvironment` (default: the key's own) and its `fromTenant`. "
        "The answer carries the new environment's admin key, shown once.",
        tags=TAGS,
        request=serializers.CloneSerializer,
        responses={201: serializers.CloneResult, **ADMIN_WRITE_ERRORS},
    )
    def post(self, request: Request) -> Response:
        scope = self.scope(request)
        data = validated(serializers.CloneSerializer, request.data)
        source = _source(scope, data.get("fromEnvironment"), data.get("fromTenant"))
        cloned = services.environment_clone(
            source, name=data["name"], key=data["key"], priority=data["priority"]
        )
        body = serializers.clone_result_render(
            cloned.environment, cloned.admin_key, len(cloned.applied.changes)
        )
        return Response(body, status=201)
