"""Wire shapes of the accounts admin endpoints: input serializers, and the response shapes
(apps/core/api/shapes.py), each documenting its body, with the typed function that renders it
(`@renders`) below it."""

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.accounts import domain
from apps.accounts.choices import AggregationPeriod, FontFamily, TenantStatus
from apps.accounts.models import ApiKey, Environment, Tenant
from apps.core.api.fields import StrictSerializer, snake_case
from apps.core.api.shapes import Shape, renders
from apps.core.openapi import Badge


class TenantCreateSerializer(StrictSerializer):
    customerId = serializers.CharField(max_length=255)
    name = serializers.CharField(max_length=255)


class TenantUpdateSerializer(StrictSerializer):
    id = serializers.UUIDField()
    customerId = serializers.CharField(max_length=255, required=False)
    name = serializers.CharField(max_length=255, required=False)


class ApplicationKeyCreateSerializer(StrictSerializer):
    userId = serializers.CharField(max_length=255)


class BadgeSerializer(StrictSerializer):
    url = serializers.URLField(max_length=2000)


class BrandingUpdateSerializer(StrictSerializer):
    appName = serializers.CharField(max_length=255, required=False, allow_blank=True)
    appUrl = serializers.URLField(max_length=2000, required=False, allow_blank=True)
    brandColor = serializers.CharField(max_length=64, required=False)
    font = serializers.ChoiceField(choices=FontFamily.choices, required=False)
    logo = BadgeSerializer(required=False, allow_null=True)
    appIcon = BadgeSerializer(required=False, allow_null=True)

    def validate_brandColor(self, value: str) -> str:
        if not domain.brand_color_valid(value):
            raise serializers.ValidationError(domain.BRAND_COLOR_RULE)
        return value


class ExperimentationUpdateSerializer(StrictSerializer):
    controlRatio = serializers.IntegerField(
        min_value=domain.CONTROL_RATIO.lower, max_value=domain.CONTROL_RATIO.upper, required=False
    )
    userActivationWindow = serializers.IntegerField(
        min_value=domain.ACTIVATION_WINDOW_DAYS.lower,
        max_value=domain.ACTIVATION_WINDOW_DAYS.upper,
        required=False,
    )


class SettingsUpdateSerializer(StrictSerializer):
    branding = BrandingUpdateSerializer(required=False)
    experimentation = ExperimentationUpdateSerializer(required=False)
    aggregationPeriod = serializers.ChoiceField(choices=AggregationPeriod.choices, required=False)

    @classmethod
    def service_kwargs(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """settings_update's arguments: experimentation's settings stand on their own, and the
        branding images are URLs (null removes one)."""
        kwargs: dict[str, Any] = {
            snake_case(key): value for key, value in data.get("experimentation", {}).items()
        }
        if "aggregationPeriod" in data:
            kwargs["aggregation_period"] = data["aggregationPeriod"]
        if "branding" in data:
            kwargs["branding"] = {
                _BRANDING_ARGUMENT.get(key, snake_case(key)): value["url"]
                if key in _BRANDING_ARGUMENT and value is not None
                else value
                for key, value in data["branding"].items()
            }
        return kwargs


_BRANDING_ARGUMENT = {"logo": "logo_url", "appIcon": "app_icon_url"}


# --- responses: each shape documents a body, its render function writes it ----------------


class AdminTenant(Shape):
    id = serializers.UUIDField()
    customerId = serializers.CharField(
        help_text="Your identifier of the tenant, unique in the environment; the value of "
        "the Tenant-ID header."
    )
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=TenantStatus.choices)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


@renders(AdminTenant)
def admin_tenant_render(tenant: Tenant) -> dict[str, Any]:
    return {
        "id": str(tenant.public_id),
        "customerId": tenant.customer_id or "",
        "name": tenant.name,
        "status": tenant.status,
        "created": tenant.created,
        "updated": tenant.updated,
    }


class CreatedApplicationKey(Shape):
    id = serializers.UUIDField(help_text="The key's id, for deletion.")
    userId = serializers.CharField(help_text="The user the key is bound to.")
    key = serializers.CharField(help_text="The full key. Returned only once, at creation.")
    prefix = serializers.CharField()


@renders(CreatedApplicationKey)
def created_application_key_render(api_key: ApiKey, full_key: str) -> dict[str, Any]:
    return {
        "id": str(api_key.public_id),
        "userId": api_key.user_id,
        "key": full_key,
        "prefix": api_key.prefix,
    }


class AdminEnvironment(Shape):
    name = serializers.CharField()
    key = serializers.CharField()
    priority = serializers.IntegerField(help_text="Lower wins; production is 1.")


@renders(AdminEnvironment)
def admin_environment_render(environment: Environment) -> dict[str, Any]:
    return {"name": environment.name, "key": environment.key, "priority": environment.priority}


class AdminSettingsBranding(Shape):
    # What the tenant's branding sets, or the default.

    appName = serializers.CharField(help_text="The tenant's name when unset.")
    appUrl = serializers.CharField(help_text='A URL, or "" when unset.')
    brandColor = serializers.CharField(
        help_text=f"#RGB, #RRGGBB, rgb() or rgba(); {domain.BRAND_COLOR_DEFAULT} when unset."
    )
    font = serializers.ChoiceField(choices=FontFamily.choices)
    logo = Badge(allow_null=True, help_text="Shown in emails.")
    appIcon = Badge(allow_null=True, help_text="Shown in push notification previews.")


@renders(AdminSettingsBranding)
def admin_settings_branding_render(tenant: Tenant) -> dict[str, Any]:
    branding = tenant.branding
    return {
        "appName": domain.app_name(branding, tenant.name),
        "appUrl": branding.get("appUrl", ""),
        "brandColor": domain.brand_color(branding),
        "font": branding.get("font", FontFamily.MODERN_SANS.value),
        "logo": branding.get("logo"),
        "appIcon": branding.get("appIcon"),
    }


class AdminSettingsExperimentation(Shape):
    controlRatio = serializers.IntegerField(
        help_text="Percentage of new users put in the control group."
    )
    userActivationWindow = serializers.IntegerField(
        help_text="Days after a user's first event used for retention and early engagement."
    )


@renders(AdminSettingsExperimentation)
def admin_settings_experimentation_render(tenant: Tenant) -> dict[str, Any]:
    return {
        "controlRatio": tenant.control_ratio,
        "userActivationWindow": tenant.user_activation_window,
    }


class AdminSettings(Shape):
    branding = AdminSettingsBranding()
    experimentation = AdminSettingsExperimentation()
    aggregationPeriod = serializers.ChoiceField(choices=AggregationPeriod.choices)


@renders(AdminSettings)
def admin_settings_render(tenant: Tenant) -> dict[str, Any]:
    """A tenant's settings."""
    return {
        "branding": admin_settings_branding_render(tenant),
        "experimentation": admin_settings_experimentation_render(tenant),
        "aggregationPeriod": tenant.aggregation_period,
    }
