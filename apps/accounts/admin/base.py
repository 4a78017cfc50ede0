"""Dashboard plumbing shared by every app's admin module: service-backed and read-only pages,
tenant labels, columns and filters.

accounts is the lowest app with dashboard pages, so every other app's admin may import this module
without breaking the layers of ARCHITECTURE.md §2.
"""

import re
from collections.abc import Iterable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import actions as django_actions
from django.db import models, transaction
from django.db.models import QuerySet
from django.forms.models import ModelChoiceField
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from apps.accounts.choices import TenantStatus
from apps.accounts.models import Environment, Tenant
from apps.core.api.fields import KEY_PATTERN
from apps.core.errors import ApplicationError

# Set on the request when a service refused a write; see ServiceAdmin.changeform_view.
_SERVICE_ERROR = "_dashboard_service_error"

# Tenant labels read the environment and organization: every query that shows tenants loads them.
TENANT_RELATED = "tenant__environment__organization"


def key_field(max_length: int) -> forms.RegexField:
    """Keys typed in the dashboard follow the same rule as keys sent to the admin API. ASCII:
    Python's \\d alone also matches other scripts' digits, such as Arabic-Indic ones."""
    return forms.RegexField(
        re.compile(KEY_PATTERN, re.ASCII),
        max_length=max_length,
        # A key with stray spaces is refused rather than silently trimmed into another key.
        strip=False,
        error_messages={"invalid": "must contain only letters, digits, - and _"},
    )


def tenant_label(tenant: Tenant) -> str:
    """Customer ids are unique only within one environment, so the dashboard names the path."""
    return f"{tenant.environment} / {tenant.customer_id or 'default tenant'}"


def tenant_choices() -> QuerySet[Tenant]:
    return Tenant.objects.select_related("environment__organization").order_by(
        "environment__organization__name", "environment__priority", "-is_default", "customer_id"
    )


class TenantFilter(admin.RelatedFieldListFilter):
    """Django's filter calls str() on each tenant, one query per default tenant; this loads the
    labels in a single query."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list:
        return [(tenant.pk, tenant_label(tenant)) for tenant in tenant_choices()]


class EnvironmentFilter(admin.RelatedFieldListFilter):
    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list:
        environments = Environment.objects.select_related("organization").order_by(
            "organization__name", "priority"
        )
        return [(environment.pk, str(environment)) for environment in environments]


class TenantColumnMixin:
    """Needs TENANT_RELATED in list_select_related."""

    @admin.display(description="tenant", ordering="tenant_id")
    def tenant_column(self, obj: Any) -> str:
        return tenant_label(obj.tenant) if obj.tenant_id else "-"


class DashboardAdmin(admin.ModelAdmin):
    """Foreign-key dropdowns show full tenant and environment labels without N+1 queries, and
    only active tenants can be chosen for new configuration."""

    def formfield_for_foreignkey(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        if db_field.related_model is Tenant:
            kwargs["queryset"] = tenant_choices().filter(status=TenantStatus.ACTIVE)
        elif db_field.related_model is Environment:
            kwargs["queryset"] = Environment.objects.select_related("organization")
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and db_field.related_model is Tenant:
            field.label_from_instance = tenant_label  # type: ignore[assignment]
        return field


@admin.action(permissions=["delete"], description=_("Delete selected %(verbose_name_plural)s"))
def delete_selected(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet
) -> HttpResponse | None:
    """Django's bulk delete, run in one transaction: when a service refuses one object, the
    whole batch is rolled back and the refusal is shown instead of a 500."""
    try:
        with transaction.atomic():
            return django_actions.delete_selected(modeladmin, request, queryset)
    except ApplicationError as exc:
        modeladmin.message_user(request, exc.message, messages.ERROR)
        return None


class ServiceAdmin(DashboardAdmin):
    """A dashboard page whose writes go through services (STYLE.md principle 2).

    Subclasses implement service_create, service_update and service_delete. When a service
    raises an ApplicationError, the admin's transaction has rolled the attempt back; the view then
    runs once more with a form that fails validation with the service's message, so the staff
    member sees the error next to their input instead of a 500.
    """

    actions = [delete_selected]

    # A page that does not name a service for a write refuses it, with a message on the form.
    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> models.Model:
        raise ApplicationError(f"{self.model._meta.verbose_name} cannot be created here")

    def service_update(self, request: HttpRequest, current: Any, form: forms.ModelForm) -> None:
        raise ApplicationError(f"{self.model._meta.verbose_name} cannot be changed here")

    def service_delete(self, request: HttpRequest, obj: Any) -> None:
        raise ApplicationError(f"{self.model._meta.verbose_name} cannot be deleted here")

    def deletion_counts(self, objs: list[Any]) -> dict[str, int]:
        """Rows that deleting `objs` removes with them, per kind, for the confirmation page."""
        return {}

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ApplicationError as exc:
            setattr(request, _SERVICE_ERROR, exc.message)
            return super().changeform_view(request, object_id, form_url, extra_context)

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        form = super().get_form(request, obj, change, **kwargs)
        message: str | None = getattr(request, _SERVICE_ERROR, None)
        if message is None:
            return form
        error: str = message

        class ServiceErrorForm(form):  # type: ignore[valid-type,misc]
            def clean(self) -> dict[str, Any]:
                super().clean()
                raise forms.ValidationError(error)

        return ServiceErrorForm

    def save_model(
        self, request: HttpRequest, obj: Any, form: forms.ModelForm, change: bool
    ) -> None:
        if change:
            # The form has already copied its input onto `obj`; services compare against the
            # stored row (e.g. "did the customer id change?"), so they get a fresh copy.
            self.service_update(request, self.model._default_manager.get(pk=obj.pk), form)
            return
        created = self.service_create(request, form)
        # The admin goes on with the form's instance (history entry, redirect): point it at
        # the row the service made.
        obj.pk = created.pk
        obj.refresh_from_db()

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        # Inlines on these pages are read-only and no model has many-to-many fields. commit=False
        # still lets the history entry see that nothing changed, without a write that bypasses
        # the services.
        for formset in formsets:
            formset.save(commit=False)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.service_delete(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for obj in queryset:
            self.service_delete(request, obj)

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        try:
            return super().delete_view(request, object_id, extra_context)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            opts = self.opts
            return HttpResponseRedirect(
                reverse(
                    f"admin:{opts.app_label}_{opts.model_name}_change",
                    args=[object_id],
                    current_app=self.admin_site.name,
                )
            )

    def get_deleted_objects(
        self, objs: Iterable[Any], request: HttpRequest
    ) -> tuple[list[str], dict[str, int], set[str], list[str]]:
        """Django's confirmation page lists every cascaded row, which for a metric or a tenant
        means loading every event; list the objects and count the rest instead. Permissions are
        those of this page only: the service, not the cascade, decides what goes."""
        objs = list(objs)
        name = str(self.opts.verbose_name).capitalize()
        to_delete = [f"{name}: {obj}" for obj in objs]
        counts = {str(self.opts.verbose_name_plural): len(objs), **self.deletion_counts(objs)}
        return to_delete, counts, set(), []


class ReadOnlyAdmin(DashboardAdmin):
    """State recorded by the pipeline: staff may look, never write (ARCHITECTURE.md §5)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
