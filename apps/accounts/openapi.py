"""OpenAPI documentation of accounts (documentation only): the X-API-KEY security scheme and the
Tenant-ID header. The response shapes of tenants, application keys, environments and settings
render and document themselves (apps/accounts/serializers.py).

Imported by AccountsConfig.ready() so the authentication extension is registered before any
schema is generated.
"""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension

SECURITY_SCHEME = "ApiKeyAuth"


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "apps.accounts.auth.ApiKeyAuthentication"
    name = SECURITY_SCHEME

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "X-API-KEY",
            "description": (
                "An admin API key (both APIs) or an application API key (application API only, "
                "for its own user's data), as `prefix.secret`."
            ),
        }


TENANT_ID_HEADER = {
    "name": "Tenant-ID",
    "in": "header",
    "required": False,
    "schema": {"type": "string"},
    "description": (
        "The customer id of the tenant to act on (multi-tenancy). Admin keys: omitted means the "
        "default tenant; a customer id with no active tenant is 404. Application keys are bound "
        "to one tenant: naming another is 403."
    ),
}


def tenant_id_header(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: every operation authenticated by X-API-KEY accepts Tenant-ID."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            schemes = {name for item in operation.get("security", []) for name in item}
            if SECURITY_SCHEME not in schemes:
                continue
            parameters = operation.setdefault("parameters", [])
            if not any(
                p.get("name") == "Tenant-ID" and p.get("in") == "header" for p in parameters
            ):
                parameters.append(dict(TENANT_ID_HEADER))
    return result
