"""Dashboard pages for organizations and their environments."""

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.accounts.admin.api_keys import ShowsNewKey, key_show_once
from apps.accounts.admin.base import ServiceAdmin, key_field
from apps.accounts.models import Environment, Organization
from apps.accounts.services import (
    environment_create,
    environment_update,
    organization_create,
    organization_staff_set,
    organization_update,
)
from apps.accounts.staff import visible_organizations


class EnvironmentInline(admin.TabularInline):
    model = Environment
    fields = ("name", "key", "priority", "created")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Organization)
class OrganizationAdmin(ShowsNewKey, ServiceAdmin):
    list_display = ("name", "public_id", "created")
    search_fields = ("name",)
    fields = ("name", "staff", "public_id", "created")
    readonly_fields = ("public_id", "created")
    filter_horizontal = ("staff",)
    inlines = [EnvironmentInline]

    def get_inlines(self, request: HttpRequest, obj: Any) -> list:
        return self.inlines if obj is not None else []

    def scope(self, queryset: QuerySet, request: HttpRequest) -> QuerySet:
        return queryset.filter(pk__in=visible_organizations(request.user))

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.fields if obj is not None else ("name",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # Who may see an organization is decided by superusers, not by its own staff.
        if getattr(request.user, "is_superuser", False):
            return self.readonly_fields
        return ("staff", *self.readonly_fields)

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "staff":
            kwargs["queryset"] = get_user_model().objects.filter(is_staff=True).order_by("username")
            kwargs["help_text"] = (
                "Staff users who may see and configure this organization's tenants."
            )
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # No service removes a customer with all its data; that is not a click in a dashboard.
        return False

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> Organization:
        created = organization_create(form.cleaned_data["name"])
        key_show_once(request, created.organization, created.api_key, created.full_key)
        return created.organization

    def service_update(
        self, request: HttpRequest, current: Organization, form: forms.ModelForm
    ) -> None:
        organization_update(current, name=form.cleaned_data["name"])
        if "staff" in form.cleaned_data:
            organization_staff_set(current, form.cleaned_data["staff"])


class EnvironmentForm(forms.ModelForm):
    key = key_field(64)

    class Meta:
        model = Environment
        fields = ("organization", "name", "key", "priority")


@admin.register(Environment)
class EnvironmentAdmin(ServiceAdmin):
    form = EnvironmentForm
    list_display = ("__str__", "key", "priority", "created")
    list_select_related = ("organization",)
    search_fields = ("name", "key", "organization__name")
    fields = ("organization", "name", "key", "priority", "public_id", "created")

    def scope(self, queryset: QuerySet, request: HttpRequest) -> QuerySet:
        return queryset.filter(organization__in=visible_organizations(request.user))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # Clients and the admin API know an environment by its key.
        if obj is None:
            return ("public_id", "created")
        return ("organization", "key", "public_id", "created")

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.fields if obj is not None else EnvironmentForm.Meta.fields

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting would cascade through its keys, tenants and every end-user; no service does it.
        return False

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> Environment:
        data = form.cleaned_data
        return environment_create(
            data["organization"], name=data["name"], key=data["key"], priority=data["priority"]
        )

    def service_update(
        self, request: HttpRequest, current: Environment, form: forms.ModelForm
    ) -> None:
        data = form.cleaned_data
        environment_update(current, name=data["name"], priority=data["priority"])
