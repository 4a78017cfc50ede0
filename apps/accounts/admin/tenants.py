"""Dashboard pages for tenants and their settings."""

from collections.abc import Iterable, Iterator
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.accounts.admin.base import EnvironmentFilter, ServiceAdmin, tenant_label
from apps.accounts.choices import FontFamily, TenantStatus
from apps.accounts.models import Tenant
from apps.accounts.serializers import SettingsUpdateSerializer
from apps.accounts.services import (
    settings_update,
    tenant_archive,
    tenant_create,
    tenant_update,
)
from apps.accounts.staff import visible_tenants

# Tenant settings fields -> their place in a PATCH /settings body.
_EXPERIMENTATION = {
    "control_ratio": "controlRatio",
    "user_activation_window": "userActivationWindow",
}
_SETTINGS_FIELD = {"aggregationPeriod": "aggregation_period"} | {
    wire: field for field, wire in _EXPERIMENTATION.items()
}


def _error_messages(errors: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(errors, dict):
        for key, value in errors.items():
            yield from _error_messages(value, f"{prefix}{key}: ")
    elif isinstance(errors, list):
        for value in errors:
            yield from _error_messages(value, prefix)
    else:
        yield f"{prefix}{errors}"


# Branding form fields -> their key in the settings' branding object. Logo and app icon are
# badges ({"url": ...}) on the wire and a URL in the form.
BRANDING_FIELDS = {
    "app_name": "appName",
    "app_url": "appUrl",
    "brand_color": "brandColor",
    "font": "font",
    "logo": "logo",
    "app_icon": "appIcon",
}
_BADGES = {"logo", "appIcon"}


class TenantForm(forms.ModelForm):
    """Settings are validated by the admin API's settings serializer, so the dashboard cannot
    store what PATCH /settings would refuse. Branding is one input per setting."""

    app_name = forms.CharField(label="App name", required=False, max_length=255)
    app_url = forms.URLField(
        label="App URL", required=False, max_length=2000, assume_scheme="https"
    )
    brand_color = forms.CharField(
        label="Brand color",
        required=False,
        max_length=64,
        help_text="#RGB, #RRGGBB, rgb() or rgba(); used in emails.",
        widget=forms.TextInput(attrs={"placeholder": "#1F6FEB", "size": 12}),
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
        self.validated_settings: dict[str, Any] = {}
        if "customer_id" in self.fields:
            self.fields["customer_id"].required = True
        branding = self.instance.branding if self.instance.pk else {}
        for field, wire in BRANDING_FIELDS.items():
            value = branding.get(wire)
            self.initial[field] = value["url"] if wire in _BADGES and value else value

    def branding(self) -> dict[str, Any]:
        cleaned = self.cleaned_data
        branding: dict[str, Any] = {}
        for field, wire in BRANDING_FIELDS.items():
            value = cleaned.get(field)
            if value:
                branding[wire] = {"url": value} if wire in _BADGES else value
        return branding

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if "app_name" not in self.fields or self.instance.pk is None:
            return cleaned
        body: dict[str, Any] = {"branding": self.branding(), "experimentation": {}}
        for field, wire in _EXPERIMENTATION.items():
            if cleaned.get(field) is not None:
                body["experimentation"][wire] = cleaned[field]
        if cleaned.get("aggregation_period"):
            body["aggregationPeriod"] = cleaned["aggregation_period"]
        serializer = SettingsUpdateSerializer(data=body)
        if serializer.is_valid():
            self.validated_settings = serializer.validated_data
            return cleaned
        for group, errors in serializer.errors.items():
            if isinstance(errors, dict) and group in ("experimentation", "branding"):
                for wire, inner in errors.items():
                    target = _SETTINGS_FIELD.get(wire, _BRANDING_FIELD.get(wire))
                    for message in _error_messages(inner):
                        self.add_error(target, message)
            else:
                for message in _error_messages(errors):
                    self.add_error(_SETTINGS_FIELD.get(group), message)
        return cleaned


_BRANDING_FIELD = {wire: field for field, wire in BRANDING_FIELDS.items()}


def settings_changes(tenant: Tenant, validated: dict[str, Any]) -> dict[str, Any]:
    """The difference between the stored settings and the form's, as a PATCH /settings body:
    settings_update merges branding per key, so a key removed in the form is sent as null."""
    body: dict[str, Any] = {}
    experimentation = {
        wire: value
        for wire, value in validated.get("experimentation", {}).items()
        if getattr(tenant, _SETTINGS_FIELD[wire]) != value
    }
    if experimentation:
        body["experimentation"] = experimentation
    period = validated.get("aggregationPeriod")
    if period is not None and period != tenant.aggregation_period:
        body["aggregationPeriod"] = period
    new = dict(validated.get("branding", {}))
    old = tenant.branding
    branding = {key: None for key in old if key not in new}
    branding.update({key: value for key, value in new.items() if old.get(key) != value})
    if branding:
        body["branding"] = branding
    return body


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
        return tenant_create(data["environment"], data["customer_id"], data["name"])

    def service_update(self, request: HttpRequest, current: Tenant, form: forms.ModelForm) -> None:
        data, changed = form.cleaned_data, form.changed_data
        if "customer_id" in changed or "name" in changed:
            tenant_update(
                current,
                customer_id=data["customer_id"] if "customer_id" in changed else None,
                name=data["name"] if "name" in changed else None,
            )
        body = settings_changes(current, form.validated_settings)  # type: ignore[attr-defined]
        if body:
            # settings_update bumps config_version, which invalidates the configuration cache.
            settings_update(current, body)

    def service_delete(self, request: HttpRequest, obj: Tenant) -> None:
        tenant_archive(obj)

    def get_deleted_objects(
        self, objs: Iterable[Any], request: HttpRequest
    ) -> tuple[list[str], dict[str, int], set[str], list[str]]:
        objs = list(objs)
        to_delete = [f"Tenant: {tenant_label(t)} (archived: its data is kept)" for t in objs]
        return to_delete, {"tenants archived": len(objs)}, set(), []
