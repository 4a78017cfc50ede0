"""Wire shapes of the accounts admin endpoints: input serializers, and the response shapes that
render and document their output (apps/core/api/shapes.py)."""

from collections.abc import Callable, Mapping
from typing import Any

from rest_framework import serializers

from apps.accounts import domain
from apps.accounts.choices import AggregationPeriod, FontFamily, TenantStatus
from apps.accounts.models import Tenant
from apps.core.api.fields import StrictSerializer, snake_case
from apps.core.api.shapes import Getter, Shape, out
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


# --- responses: each shape renders (Shape.render) and documents itself ------------------


class AdminTenant(Shape):
    id = out(serializers.UUIDField(), lambda tenant, _: str(tenant.public_id))
    customerId = out(
        serializers.CharField(
            help_text="Your identifier of the tenant, unique in the environment; the value of "
            "the Tenant-ID header."
        ),
        lambda tenant, _: tenant.customer_id or "",
    )
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=TenantStatus.choices)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class CreatedApplicationKey(Shape):
    # Renders the ApiKey with, as context, the full key: `render(api_key, full_key)`.

    id = out(
        serializers.UUIDField(help_text="The key's id, for deletion."),
        lambda api_key, _: str(api_key.public_id),
    )
    userId = out(serializers.CharField(help_text="The user the key is bound to."), "user_id")
    key = out(
        serializers.CharField(help_text="The full key. Returned only once, at creation."),
        lambda _, full_key: full_key,
    )
    prefix = serializers.CharField()


class AdminEnvironment(Shape):
    name = serializers.CharField()
    key = serializers.CharField()
    priority = serializers.IntegerField(help_text="Lower wins; production is 1.")


def _branding(key: str, default: Callable[[Tenant], Any]) -> Getter:
    return lambda tenant, _: tenant.branding.get(key, default(tenant))


class AdminSettingsBranding(Shape):
    # Renders the tenant: what its branding sets, or the default.

    appName = out(
        serializers.CharField(help_text="The tenant's name when unset."),
        lambda tenant, _: domain.app_name(tenant.branding, tenant.name),
    )
    appUrl = out(
        serializers.CharField(help_text='A URL, or "" when unset.'),
        _branding("appUrl", lambda _: ""),
    )
    brandColor = out(
        serializers.CharField(
            help_text=f"#RGB, #RRGGBB, rgb() or rgba(); {domain.BRAND_COLOR_DEFAULT} when unset."
        ),
        lambda tenant, _: domain.brand_color(tenant.branding),
    )
    font = out(
        serializers.ChoiceField(choices=FontFamily.choices),
        _branding("font", lambda _: FontFamily.MODERN_SANS.value),
    )
    logo = out(
        Badge(allow_null=True, help_text="Shown in emails."), _branding("logo", lambda _: None)
    )
    appIcon = out(
        Badge(allow_null=True, help_text="Shown in push notification previews."),
        _branding("appIcon", lambda _: None),
    )


class AdminSettingsExperimentation(Shape):
    # Renders the tenant.

    controlRatio = serializers.IntegerField(
        help_text="Percentage of new users put in the control group."
    )
    userActivationWindow = serializers.IntegerField(
        help_text="Days after a user's first event used for retention and early engagement."
    )


class AdminSettings(Shape):
    # A tenant's settings, rendered from the tenant.

    branding = out(AdminSettingsBranding(), lambda tenant, _: AdminSettingsBranding.render(tenant))
    experimentation = out(
        AdminSettingsExperimentation(),
        lambda tenant, _: AdminSettingsExperimentation.render(tenant),
    )
    aggregationPeriod = serializers.ChoiceField(choices=AggregationPeriod.choices)
