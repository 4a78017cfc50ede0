"""Dashboard pages for API keys: created and revoked here, never edited."""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_permission_codename
from django.db.models import QuerySet
from django.forms.models import ModelChoiceField
from django.http import HttpRequest
from django.urls import reverse

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ChangeViewContextMixin,
    DashboardAdmin,
    ServiceAdmin,
    TenantColumnMixin,
    dashboard_choices,
    delete_selected,
    tenant_label,
)
from apps.accounts.choices import ApiKeyKind
from apps.accounts.models import ApiKey, Environment, Tenant
from apps.accounts.services import (
    api_key_create_admin,
    api_key_delete,
    api_key_revoke,
    application_key_create,
)
from apps.accounts.staff import selected_tenant, visible_tenants
from apps.core.show_once import once_keep, once_take
from apps.core.wording import counted

# A new key waits in the server-side session for the page that shows it once (core/show_once).
_NEW_KEY = "accounts.new_key"


def key_show_once(request: HttpRequest, page: Any, api_key: ApiKey, full_key: str) -> None:
    """Keeps the new key for the next view of `page` (the key's or its organization's)."""
    once_keep(request, _NEW_KEY, str(page.public_id), {"prefix": api_key.prefix, "key": full_key})


def key_take(request: HttpRequest, page: Any) -> dict[str, Any] | None:
    return once_take(request, _NEW_KEY, str(page.public_id))


class ShowsNewKey(ChangeViewContextMixin, DashboardAdmin):
    """After an add, the new object's page shows the key made with it, once, with a Copy
    button (templates/admin/accounts/new_key.html)."""

    def change_view_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        return {"new_key": key_take(request, obj)}

    def after_add_url(self, obj: Any) -> str:
        opts = self.opts
        return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])


class ApiKeyCreateForm(forms.ModelForm):
    class Meta:
        model = ApiKey
        fields = ("kind", "environment", "name", "tenant", "user_id")
        help_texts = {
            "name": "Admin keys only: a label for the dashboard.",
            "tenant": "Application keys only: the tenant of the end-user.",
            "user_id": "Application keys only: the end-user's id; the key acts only for them.",
        }

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        kind, tenant = cleaned.get("kind"), cleaned.get("tenant")
        environment, user_id = cleaned.get("environment"), cleaned.get("user_id")
        if kind == ApiKeyKind.ADMIN:
            if tenant is not None:
                self.add_error("tenant", "An admin key is not bound to a tenant.")
            if user_id:
                self.add_error("user_id", "An admin key is not bound to a user.")
        elif kind == ApiKeyKind.APPLICATION:
            if tenant is None:
                self.add_error("tenant", "An application key needs a tenant.")
            elif environment is not None and tenant.environment_id != environment.pk:
                self.add_error("tenant", "The tenant must belong to the key's environment.")
            if not user_id:
                self.add_error("user_id", "An application key needs a user id.")
        return cleaned


@admin.register(ApiKey)
class ApiKeyAdmin(ShowsNewKey, TenantColumnMixin, ServiceAdmin):
    """Keys are created and revoked here, never edited; the secret hash is never shown."""

    add_form = ApiKeyCreateForm
    tenant_column_shown = True
    list_display = (
        "prefix",
        "kind",
        "name",
        "environment",
        "tenant_column",
        "user_id",
        "last_used_at",
        "is_active",
        "created",
    )
    list_select_related = ("environment__organization", TENANT_RELATED)
    # One environment is listed (scope), so there is no filter by environment.
    list_filter = ("kind", "is_active")
    search_fields = ("prefix", "name", "user_id")
    exclude = ("secret_hash",)
    fields = (
        "prefix",
        "kind",
        "name",
        "environment",
        "tenant",
        "user_id",
        "is_active",
        "last_used_at",
        "public_id",
        "created",
    )
    readonly_fields = fields
    actions = [delete_selected, "revoke"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.fields if obj is not None else ApiKeyCreateForm.Meta.fields

    def scope(self, queryset: QuerySet, request: HttpRequest) -> QuerySet:
        # Keys belong to an environment: those of the selected tenant's environment.
        tenant = selected_tenant(request)
        if tenant is None:
            return queryset.none()
        return queryset.filter(environment_id=tenant.environment_id)

    def formfield_for_foreignkey(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        # A key is made in the environment this page lists: one made in another would never be
        # shown, nor would its secret, which only its page shows, once.
        selected = selected_tenant(request)
        listed = [selected.environment_id] if selected is not None else []
        if db_field.related_model is Tenant:
            # Optional here (admin keys have none): a tenant of that environment.
            field = forms.ModelChoiceField(
                visible_tenants(request.user).filter(environment_id__in=listed),
                required=False,
                label="tenant",
            )
            field.label_from_instance = tenant_label  # type: ignore[assignment]
            return field
        if db_field.related_model is Environment:
            kwargs["queryset"] = dashboard_choices(Environment, request).filter(pk__in=listed)
            kwargs["initial"] = listed[0] if listed else None
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.readonly_fields if obj is not None else ()

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        if obj is None:
            kwargs["form"] = self.add_form
        return super().get_form(request, obj, change, **kwargs)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        codename = get_permission_codename("change", self.opts)
        return request.user.has_perm(f"{self.opts.app_label}.{codename}")

    @admin.action(description="Revoke selected API keys", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        keys = list(queryset.filter(is_active=True))
        for api_key in keys:
            api_key_revoke(api_key)
        self.message_user(request, f"Revoked {counted(len(keys), 'API key')}.", messages.SUCCESS)

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> ApiKey:
        data = form.cleaned_data
        if data["kind"] == ApiKeyKind.ADMIN:
            api_key, full_key = api_key_create_admin(data["environment"], name=data["name"])
        else:
            api_key, full_key = application_key_create(data["tenant"], user_id=data["user_id"])
        key_show_once(request, api_key, api_key, full_key)
        return api_key

    def service_delete(self, request: HttpRequest, obj: ApiKey) -> None:
        api_key_delete(obj)
