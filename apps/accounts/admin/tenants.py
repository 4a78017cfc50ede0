"""Dashboard pages for tenants and their settings."""

from collections.abc import Iterable, Iterator
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.accounts.admin.base import EnvironmentFilter, ServiceAdmin, tenant_label
from apps.accounts.choices import TenantStatus
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
_SETTINGS_FIELD = {"aggregationPeriod": "aggregation_period", "branding": "branding"} | {
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


class TenantForm(forms.ModelForm):
    """Settings are validated by the admin API's settings serializer, so the dashboard cannot
    store what PATCH /settings would refuse."""

    class Meta:
        model = Tenant
        fields = (
            "environment",
            "customer_id",
            "name",
            "control_ratio",
            "user_activation_window",
            "aggregation_period",
            "branding",
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.validated_settings: dict[str, Any] = {}
        if "customer_id" in self.fields:
            self.fields["customer_id"].required = True

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if "branding" not in self.fields:
            return cleaned
        branding = cleaned.get("branding")
        if branding is None:
            cleaned["branding"] = branding = {}
        if not isinstance(branding, dict):
            self.add_error("branding", "must be a JSON object")
            return cleaned
        body: dict[str, Any] = {"branding": branding, "experimentation": {}}
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
            if isinstance(errors, dict) and group == "experimentation":
                for wire, inner in errors.items():
                    target = _SETTINGS_FIELD.get(wire)
                    for message in _error_messages(inner):
                        self.add_error(target, message)
            else:
                for message in _error_messages(errors):
                    self.add_error(_SETTINGS_FIELD.get(group), message)
        return cleaned


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
            "branding",
            "config_version",
        )
        return [
            (None, {"fields": identity}),
            ("Settings", {"fields": settings}),
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
