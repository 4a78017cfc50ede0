"""Input shapes of the accounts admin endpoints, and renderers of their output."""

import re
from typing import Any

from rest_framework import serializers

from apps.accounts.choices import AggregationPeriod, FontFamily
from apps.accounts.models import ApiKey, Environment, Tenant
from apps.core.api.fields import StrictSerializer

_BYTE = r"\s*\d{1,3}\s*"
_ALPHA = r"\s*(?:0|1|0?\.\d+|1\.0+)\s*"
_COLOR = re.compile(
    rf"^(?:#[0-9a-fA-F]{{3}}|#[0-9a-fA-F]{{6}}|rgb\({_BYTE},{_BYTE},{_BYTE}\)"
    rf"|rgba\({_BYTE},{_BYTE},{_BYTE},{_ALPHA}\))\Z"
)


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
        if not _COLOR.match(value):
            raise serializers.ValidationError("must be #RGB, #RRGGBB, rgb() or rgba()")
        return value


class ExperimentationUpdateSerializer(StrictSerializer):
    controlRatio = serializers.IntegerField(min_value=0, max_value=100, required=False)
    userActivationWindow = serializers.IntegerField(min_value=1, max_value=365, required=False)


class SettingsUpdateSerializer(StrictSerializer):
    branding = BrandingUpdateSerializer(required=False)
    experimentation = ExperimentationUpdateSerializer(required=False)
    aggregationPeriod = serializers.ChoiceField(choices=AggregationPeriod.choices, required=False)


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
