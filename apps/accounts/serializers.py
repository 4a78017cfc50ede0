"""Input shapes of the accounts admin endpoints, and renderers of their output."""

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.accounts import domain
from apps.accounts.choices import AggregationPeriod, FontFamily
from apps.accounts.models import ApiKey, Environment, Tenant
from apps.core.api.fields import StrictSerializer, snake_case


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


def tenant_render(tenant: Tenant) -> dict[str, Any]:
    return {
        "id": str(tenant.public_id),
        "customerId": tenant.customer_id or "",
        "name": tenant.name,
        "status": tenant.status,
        "created": tenant.created,
        "updated": tenant.updated,
    }


def environment_render(environment: Environment) -> dict[str, Any]:
    return {"name": environment.name, "key": environment.key, "priority": environment.priority}


def application_key_render(api_key: ApiKey, full_key: str) -> dict[str, Any]:
    return {
        "id": str(api_key.public_id),
        "userId": api_key.user_id,
        "key": full_key,
        "prefix": api_key.prefix,
    }
