"""Dashboard pages for tenants and their settings (config_pages.py): the page lists and finds
every tenant the staff member may switch to, not only the selected one (`scope`)."""

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.safestring import SafeString

from apps.accounts import domain
from apps.accounts.admin.base import (
    EnvironmentFilter,
    admin_link,
    dashboard_choices,
    tenant_label,
)
from apps.accounts.admin.config_pages import ConfigAdmin, ConfigForm, Section
from apps.accounts.choices import AggregationPeriod, FontFamily, TenantStatus
from apps.accounts.models import Environment, Tenant
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
SETTINGS = ("control_ratio", "user_activation_window", "aggregation_period", "reporting_tz")
TEXT = forms.TextInput(attrs={"class": "vTextField"})
NUMBER = forms.NumberInput(attrs={"class": "vIntegerField"})


def _branding_shown(branding: dict[str, Any]) -> dict[str, Any]:
    """Stored branding as the form's inputs."""
    shown = {field: branding.get(key) for field, key in BRANDING_FIELDS.items()}
    return {
        field: value["url"] if field in _IMAGES and value else value
        for field, value in shown.items()
    }


class TenantForm(ConfigForm):
    """A tenant (tenant_create, tenant_update) and its settings, as PATCH /settings sets them
    (settings_update; their limits and formats come from apps/accounts/domain.py). Branding is
    one input per setting. The environment is given once, when adding; the default tenant has no
    customer ID."""

    tenant_required = False
    environment = forms.ModelChoiceField(Environment.objects.none())
    customer_id = forms.CharField(label="Customer ID", max_length=255, widget=TEXT)
    name = forms.CharField(max_length=255, widget=TEXT)
    control_ratio = forms.IntegerField(
        label="Control group (%)",
        min_value=domain.CONTROL_RATIO.lower,
        max_value=domain.CONTROL_RATIO.upper,
        widget=NUMBER,
    )
    user_activation_window = forms.IntegerField(
        label="User activation window (days)",
        min_value=domain.ACTIVATION_WINDOW_DAYS.lower,
        max_value=domain.ACTIVATION_WINDOW_DAYS.upper,
        widget=NUMBER,
    )
    aggregation_period = forms.ChoiceField(choices=AggregationPeriod.choices)
    reporting_tz = forms.ChoiceField(
        label="Reporting time zone",
        choices=[(zone, zone) for zone in domain.reporting_zones()],
        help_text="The zone of the tenant's calendar: league weeks end on their weekday and "
        "time in this zone.",
    )
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

    def __init__(self, *args: Any, environments: QuerySet[Environment], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is None:  # a tenant is added with its defaults
            for name in (*SETTINGS, *BRANDING_FIELDS):
                del self.fields[name]
            self.fields["environment"].queryset = environments  # type: ignore[attr-defined]
            return
        del self.fields["environment"]
        if self.instance.is_default:
            del self.fields["customer_id"]

    def initial_from(self, obj: Tenant) -> dict[str, Any]:
        return {
            "customer_id": obj.customer_id,
            "name": obj.name,
            **{field: getattr(obj, field) for field in SETTINGS},
            **_branding_shown(obj.branding),
        }

    def clean_brand_color(self) -> str:
        value: str = self.cleaned_data.get("brand_color", "")
        if value and not domain.brand_color_valid(value):
            raise forms.ValidationError(domain.BRAND_COLOR_RULE)
        return value

    def tenant_changes(self) -> dict[str, Any]:
        """tenant_update's arguments: the customer ID and name, if changed."""
        changes = self.changes()
        return {name: changes[name] for name in ("customer_id", "name") if name in changes}

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
class TenantAdmin(ConfigAdmin):
    config_form = TenantForm
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
    show_full_result_count = False

    @admin.display(description="tenant", ordering="environment")
    def label(self, obj: Tenant) -> str:
        return tenant_label(obj)

    def scope(self, queryset: QuerySet, request: HttpRequest) -> QuerySet:
        # Every tenant the staff member may switch to, not only the selected one.
        return queryset.filter(pk__in=visible_tenants(request.user))

    def form_kwargs(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        environments = dashboard_choices(Environment, request)
        return {**super().form_kwargs(request, obj), "environments": environments}

    def form_sections(self, obj: Tenant | None) -> list[Section]:
        if obj is None:
            return [(None, ["environment", "customer_id", "name"])]
        identity = ["environment_link", "public_id", "customer_id", "name", "status", "is_default"]
        if obj.is_default:
            identity.remove("customer_id")
        return [
            (None, identity),
            ("Settings", [*SETTINGS, "config_version"]),
            ("Branding", list(BRANDING_FIELDS)),
            ("History", ["created", "updated"]),
        ]

    @admin.display(description="environment")
    def environment_link(self, obj: Tenant) -> SafeString:
        return admin_link(obj.environment)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and (obj.is_default or obj.status == TenantStatus.ARCHIVED):
            return False
        return super().has_delete_permission(request, obj)

    def create(self, request: HttpRequest, form: TenantForm) -> Tenant:
        return tenant_create(**form.cleaned_data)

    def update(self, request: HttpRequest, obj: Tenant, form: TenantForm) -> None:
        if changes := form.tenant_changes():
            tenant_update(obj, **changes)
        if changes := form.settings_changes(obj):
            # settings_update bumps config_version, which invalidates the configuration cache.
            settings_update(obj, **changes)

    def remove(self, request: HttpRequest, obj: Tenant) -> None:
        tenant_archive(obj)

    def _deletion(self, objs: list[Any]) -> tuple[list[Any], dict[str, int]]:
        # Archived, not deleted: nothing goes with a tenant.
        listed = [f"Tenant: {tenant_label(tenant)} (archived: its data is kept)" for tenant in objs]
        return listed, {"tenants archived": len(objs)}
