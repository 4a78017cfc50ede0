"""OpenAPI documentation of accounts (documentation only): the X-API-KEY security scheme, the
Tenant-ID header, and the admin models of tenants, application keys, environments and settings.

Imported by AccountsConfig.ready() so the authentication extension is registered before any
schema is generated.
"""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import serializers

from apps.accounts.choices import AggregationPeriod, FontFamily, TenantStatus
from apps.core.openapi import Badge

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


class AdminTenant(serializers.Serializer):
    id = serializers.UUIDField()
    customerId = serializers.CharField(
        help_text="Your identifier of the tenant, unique in the environment; the value of the "
        "Tenant-ID header."
    )
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=TenantStatus.choices)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class CreatedApplicationKey(serializers.Serializer):
    id = serializers.UUIDField(help_text="The key's id, for deletion.")
    userId = serializers.CharField(help_text="The user the key is bound to.")
    key = serializers.CharField(help_text="The full key. Returned only once, at creation.")
    prefix = serializers.CharField()


class AdminEnvironment(serializers.Serializer):
    name = serializers.CharField()
    key = serializers.CharField()
    priority = serializers.IntegerField(help_text="Lower wins; production is 1.")


class AdminSettingsBranding(serializers.Serializer):
    appName = serializers.CharField()
    appUrl = serializers.CharField(help_text='A URL, or "" when unset.')
    brandColor = serializers.CharField(help_text="#RGB, #RRGGBB, rgb() or rgba().")
    font = serializers.ChoiceField(choices=FontFamily.choices)
    logo = Badge(allow_null=True, help_text="Shown in emails.")
    appIcon = Badge(allow_null=True, help_text="Shown in push notification previews.")


class AdminSettingsExperimentation(serializers.Serializer):
    controlRatio = serializers.IntegerField(
        help_text="Percentage of new users put in the control group."
    )
    userActivationWindow = serializers.IntegerField(
        help_text="Days after a user's first event used for retention and early engagement."
    )


class AdminSettings(serializers.Serializer):
    branding = AdminSettingsBranding()
    experimentation = AdminSettingsExperimentation()
    aggregationPeriod = serializers.ChoiceField(choices=AggregationPeriod.choices)
