"""Dashboard pages for API keys (config_pages.py): created and revoked here, never edited."""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_permission_codename
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.safestring import SafeString

from apps.accounts.admin.base import (
    TENANT_RELATED,
    TenantColumnMixin,
    admin_link,
    dashboard_choices,
    tenant_label,
)
from apps.accounts.admin.config_pages import ConfigAdmin, ConfigForm, Section
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


class ShowsNewKey(ConfigAdmin):
    """After an add, the new object's page shows the key made with it, once, with a Copy
    button (templates/admin/accounts/new_key.html, included by the page's form.html)."""

    def page_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        return {"new_key": None if obj is None else key_take(request, obj)}

    def after_add_url(self, obj: Any) -> str:
        return self.url("change", obj)


class ApiKeyForm(ConfigForm):
    """The arguments of api_key_create_admin or application_key_create. A key is made in the
    environment the list shows: one made in another would never be listed, nor would its secret,
    which only its page shows, once."""

    kind = forms.ChoiceField(choices=[("", "---------"), *ApiKeyKind.choices])
    environment = forms.ModelChoiceField(Environment.objects.none())
    name = forms.CharField(
        max_length=255,
        required=False,
        widget=forms.TextInput(attrs={"class": "vTextField"}),
        help_text="Admin keys only: a label for the dashboard.",
    )
    user_id = forms.CharField(
        max_length=255,
        required=False,
        label="User id",
        widget=forms.TextInput(attrs={"class": "vTextField"}),
        help_text="Application keys only: the end-user's id; the key acts only for them.",
    )

    def __init__(
        self,
        *args: Any,
        environments: QuerySet[Environment],
        tenants: QuerySet[Tenant],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is not None:  # a stored key is shown, never edited
            self.fields.clear()
            return
        environment: Any = self.fields["environment"]
        environment.queryset = environments
        environment.initial = self.tenant.environment_id if self.tenant is not None else None
        # Made here: as a declared field, `tenant` would shadow the form's own (ConfigForm).
        tenant = forms.ModelChoiceField(
            tenants,
            required=False,
            label="tenant",
            help_text="Application keys only: the tenant of the end-user.",
        )
        tenant.label_from_instance = tenant_label  # type: ignore[assignment]
        self.fields["tenant"] = tenant
        self.order_fields(["kind", "environment", "name", "tenant", "user_id"])

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
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
class ApiKeyAdmin(ShowsNewKey, TenantColumnMixin, ConfigAdmin):
    """Keys are created and revoked here, never edited; the secret hash is never shown."""

    config_form = ApiKeyForm
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
    actions = ["delete_selected", "revoke"]

    def scope(self, queryset: QuerySet, request: HttpRequest) -> QuerySet:
        # Keys belong to an environment: those of the selected tenant's environment.
        tenant = selected_tenant(request)
        if tenant is None:
            return queryset.none()
        return queryset.filter(environment_id=tenant.environment_id)

    def form_kwargs(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        # The environment the list shows, and its tenants (admin keys have none).
        kwargs = super().form_kwargs(request, obj)
        selected = kwargs["tenant"]
        listed = [selected.environment_id] if selected is not None else []
        return {
            **kwargs,
            "environments": dashboard_choices(Environment, request).filter(pk__in=listed),
            "tenants": visible_tenants(request.user).filter(environment_id__in=listed),
        }

    def form_sections(self, obj: ApiKey | None) -> list[Section]:
        if obj is None:
            return [(None, ["kind", "environment", "name", "tenant", "user_id"])]
        return [
            (
                None,
                ["prefix", "kind", "name", "environment_link", "tenant_link", "user_id",
                 "is_active", "last_used_at", "public_id", "created"],
            )
        ]  # fmt: skip

    @admin.display(description="environment")
    def environment_link(self, obj: ApiKey) -> SafeString:
        return admin_link(obj.environment)

    @admin.display(description="tenant")
    def tenant_link(self, obj: ApiKey) -> SafeString | str:
        return "-" if obj.tenant is None else admin_link(obj.tenant)

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

    def create(self, request: HttpRequest, form: ApiKeyForm) -> ApiKey:
        data = form.cleaned_data
        if data["kind"] == ApiKeyKind.ADMIN:
            api_key, full_key = api_key_create_admin(data["environment"], name=data["name"])
        else:
            api_key, full_key = application_key_create(data["tenant"], user_id=data["user_id"])
        key_show_once(request, api_key, api_key, full_key)
        return api_key

    def remove(self, request: HttpRequest, obj: ApiKey) -> None:
        api_key_delete(obj)
