"""Dashboard pages for tenants and their settings."""

from collections.abc import Iterable
from typing import Any, cast

from django import forms
from django.contrib import admin
from django.core import validators
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.accounts import domain
from apps.accounts.admin.base import EnvironmentFilter, ServiceAdmin, tenant_label
from apps.accounts.choices import FontFamily, TenantStatus
from apps.accounts.models import Tenant
from apps.accounts.services import (
    settings_update,
    tenant_archive,
    tenant_create,
    tenant_update,
)
from apps.accounts.staff import visible_tenants

# Branding form fields -> their key in the stored branding (as GET /settings shows it). Logo and
# app icon are URLs here and images ({"url": ...}) there; settings_update takes them as URLs.
BRANDING_FIELDS = {
    "app_name": "appName",
    "app_url": "appUrl",
    "brand_color": "brandColor",
    "font": "font",
    "logo": "logo",
    "app_icon": "appIcon",
}
_IMAGES = {"logo", "app_icon"}
_ARGUMENT = {"logo": "logo_url", "app_icon": "app_icon_url"}
SETTINGS = ("control_ratio", "user_activation_window", "aggregation_period")


def _branding_shown(branding: dict[str, Any]) -> dict[str, Any]:
    """Stored branding as the form's inputs."""
    shown = {field: branding.get(key) for field, key in BRANDING_FIELDS.items()}
    return {
        field: value["url"] if field in _IMAGES and value else value
        for field, value in shown.items()
    }


def _in_range(value: int | None, limits: domain.Range) -> int | None:
    if value is not None:
        validators.MinValueValidator(limits.lower)(value)
        validators.MaxValueValidator(limits.upper)(value)
    return value


class TenantForm(forms.ModelForm):
    """A tenant and its settings, as PATCH /settings sets them (their limits and formats come
    from apps/accounts/domain.py). Branding is one input per setting."""

    app_name = forms.CharField(
        label="App name",
        required=False,
        max_length=255,
        help_text="The tenant's name when empty.",
    )
    app_url = forms.URLField(
        label="App URL", required=False, max_length=2000, assume_scheme="https"
    )
    brand_color = forms.CharField(
        label="Brand color",
        required=False,
        max_length=64,
        help_text=(
            f"#RGB, #RRGGBB, rgb() or rgba(); used in emails. {domain.BRAND_COLOR_DEFAULT} when "
            "empty."
        ),
        widget=forms.TextInput(attrs={"placeholder": domain.BRAND_COLOR_DEFAULT, "size": 12}),
    )
    font = forms.ChoiceField(
        label="Font", required=False, choices=[("", "Default"), *FontFamily.choices]
    )
    logo = forms.URLField(
        label="Logo URL",
        required=False,
        max_length=2000,
        help_text="Shown in emails.",
        assume_scheme="https",
    )
    app_icon = forms.URLField(
        label="App icon URL",
        required=False,
        max_length=2000,
        help_text="Shown in push previews.",
        assume_scheme="https",
    )

    class Meta:
        model = Tenant
        fields = (
            "environment",
            "customer_id",
            "name",
            "control_ratio",
            "user_activation_window",
            "aggregation_period",
        )
        labels = {
            "customer_id": "Customer ID",
            "control_ratio": "Control group (%)",
            "user_activation_window": "User activation window (days)",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "customer_id" in self.fields:
            self.fields["customer_id"].required = True
        self.initial.update(_branding_shown(self.instance.branding if self.instance.pk else {}))

    def clean_control_ratio(self) -> int | None:
        return _in_range(self.cleaned_data.get("control_ratio"), domain.CONTROL_RATIO)

    def clean_user_activation_window(self) -> int | None:
        return _in_range(
            self.cleaned_data.get("user_activation_window"), domain.ACTIVATION_WINDOW_DAYS
        )

    def clean_brand_color(self) -> str:
        value: str = self.cleaned_data.get("brand_color", "")
        if value and not domain.brand_color_valid(value):
            raise forms.ValidationError(domain.BRAND_COLOR_RULE)
        return value

    def settings_changes(self, tenant: Tenant) -> dict[str, Any]:
        """settings_update's arguments for what differs from the stored settings: branding
        changes per setting, so an input cleared in the form removes its setting."""
        cleaned = self.cleaned_data
        changes: dict[str, Any] = {
            field: cleaned[field]
            for field in SETTINGS
            if cleaned.get(field) not in (None, "") and cleaned[field] != getattr(tenant, field)
        }
        stored = _branding_shown(tenant.branding)
        branding = {
            _ARGUMENT.get(field, field): cleaned.get(field) or None
            for field in BRANDING_FIELDS
            if (cleaned.get(field) or None) != (stored.get(field) or None)
        }
        if branding:
            changes["branding"] = branding
        return changes


@admin.register(Tenant)
class TenantAdmin(ServiceAdmin):
    form = TenantForm
    list_display = (
        "label",
        "name",
        "customer_id",
        "status",
        "is_default",
        "config_version",
        "created",
    )
    list_select_related = ("environment__organization",)
    list_filter = ("status", "is_default", ("environment", EnvironmentFilter))
    search_fields = ("name", "customer_id")
    readonly_fields = ("public_id", "status", "is_default", "config_version", "created", "updated")
    show_full_result_count = False

    @admin.display(description="tenant", ordering="environment")
    def label(self, obj: Tenant) -> str:
        return tenant_label(obj)

    def scope(self, queryset: QuerySet, request: HttpRequest) -> QuerySet:
        # Every tenant the staff member may switch to, not only the selected one.
        return queryset.filter(pk__in=visible_tenants(request.user))

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list:
        if obj is None:
            return [(None, {"fields": ("environment", "customer_id", "name")})]
        identity = ["environment", "public_id", "customer_id", "name", "status", "is_default"]
        if obj.is_default:
            identity.remove("customer_id")
        settings = (
            "control_ratio",
            "user_activation_window",
            "aggregation_period",
            "config_version",
        )
        return [
            (None, {"fields": identity}),
            ("Settings", {"fields": settings}),
            ("Branding", {"fields": tuple(BRANDING_FIELDS)}),
            ("History", {"fields": ("created", "updated")}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is None:
            return self.readonly_fields
        return ("environment", *self.readonly_fields)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and (obj.is_default or obj.status == TenantStatus.ARCHIVED):
            return False
        return super().has_delete_permission(request, obj)

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> Tenant:
        data = form.cleaned_data
        return tenant_create(
            data["environment"], customer_id=data["customer_id"], name=data["name"]
        )

    def service_update(self, request: HttpRequest, current: Tenant, form: forms.ModelForm) -> None:
        data, changed = form.cleaned_data, form.changed_data
        if "customer_id" in changed or "name" in changed:
            tenant_update(
                current,
                customer_id=data["customer_id"] if "customer_id" in changed else None,
                name=data["name"] if "name" in changed else None,
            )
        changes = cast(TenantForm, form).settings_changes(current)
        if changes:
            # settings_update bumps config_version, which invalidates the configuration cache.
            settings_update(current, **changes)

    def service_delete(self, request: HttpRequest, obj: Tenant) -> None:
        tenant_archive(obj)

    def get_deleted_objects(
        self, objs: Iterable[Any], request: HttpRequest
    ) -> tuple[list[str], dict[str, int], set[str], list[str]]:
        objs = list(objs)
        to_delete = [f"Tenant: {tenant_label(t)} (archived: its data is kept)" for t in objs]
        return to_delete, {"tenants archived": len(objs)}, set(), []
