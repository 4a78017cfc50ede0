"""Dashboard pages for organizations and their environments (config_pages.py): neither lives in a
tenant, so each page lists, and finds, what the staff member's organizations hold (`scope`)."""

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.api_keys import ShowsNewKey, key_show_once
from apps.accounts.admin.base import admin_link, dashboard_choices
from apps.accounts.admin.config_pages import ConfigAdmin, ConfigForm, Section
from apps.accounts.admin.forms import key_field
from apps.accounts.models import Environment, Organization
from apps.accounts.services import (
    environment_create,
    environment_update,
    organization_create,
    organization_staff_set,
    organization_update,
)
from apps.accounts.staff import visible_organizations

TEXT = forms.TextInput(attrs={"class": "vTextField"})


class Shown(forms.Widget):
    """A value shown, not edited, as the admin shows a read-only field."""

    def render(self, name: str, value: Any, attrs: Any = None, renderer: Any = None) -> SafeString:
        return format_html('<div class="readonly">{}</div>', value or "-")


class StaffWidget(FilteredSelectMultiple):
    """The two boxes of Django's filter_horizontal, in the wrapper its script lays them out in."""

    def render(self, name: str, value: Any, attrs: Any = None, renderer: Any = None) -> SafeString:
        boxes = super().render(name, value, attrs, renderer)
        return format_html('<div class="related-widget-wrapper">{}</div>', boxes)


class OrganizationForm(ConfigForm):
    """The arguments of organization_create and organization_update; who belongs to it
    (organization_staff_set) is an input of a superuser's change page only."""

    tenant_required = False
    name = forms.CharField(max_length=255, widget=TEXT)
    staff = forms.ModelMultipleChoiceField(
        get_user_model().objects.filter(is_staff=True).order_by("username"),
        required=False,
        widget=StaffWidget("staff", is_stacked=False),
        help_text="Staff users who may see and configure this organization's tenants. Hold down "
        "“Control”, or “Command” on a Mac, to select more than one.",
    )

    def __init__(self, *args: Any, staff_editable: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is None:
            del self.fields["staff"]
        elif not staff_editable:  # shown, never posted
            names = ", ".join(user.get_username() for user in self.initial["staff"])
            self.fields["staff"] = forms.CharField(disabled=True, required=False, widget=Shown)
            self.initial["staff"] = names

    def initial_from(self, obj: Organization) -> dict[str, Any]:
        return {"name": obj.name, "staff": list(obj.staff.order_by("username"))}


@admin.register(Organization)
class OrganizationAdmin(ShowsNewKey, ConfigAdmin):
    config_form = OrganizationForm
    list_display = ("name", "public_id", "created")
    search_fields = ("name",)

    def scope(self, queryset: QuerySet, request: HttpRequest) -> QuerySet:
        return queryset.filter(pk__in=visible_organizations(request.user))

    def form_kwargs(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        # Who may see an organization is decided by superusers, not by its own staff.
        staff_editable = getattr(request.user, "is_superuser", False)
        return {**super().form_kwargs(request, obj), "staff_editable": staff_editable}

    def form_sections(self, obj: Organization | None) -> list[Section]:
        if obj is None:
            return [(None, ["name"])]
        return [(None, ["name", "staff", "public_id", "created"])]

    def page_context(self, request: HttpRequest, obj: Organization | None) -> dict[str, Any]:
        context = super().page_context(request, obj)
        if obj is not None:
            context["environments"] = obj.environments.order_by("priority", "pk")
        return context

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # No service removes a customer with all its data; that is not a click in a dashboard.
        return False

    def create(self, request: HttpRequest, form: OrganizationForm) -> Organization:
        created = organization_create(form.cleaned_data["name"])
        key_show_once(request, created.organization, created.api_key, created.full_key)
        return created.organization

    def update(self, request: HttpRequest, obj: Organization, form: OrganizationForm) -> None:
        changes = form.changes()
        if "name" in changes:
            organization_update(obj, name=changes["name"])
        if "staff" in changes:
            organization_staff_set(obj, changes["staff"])


class EnvironmentForm(ConfigForm):
    """The arguments of environment_create and environment_update: clients and the admin API know
    an environment by its key, so it, and its organization, are given once, when adding."""

    tenant_required = False
    organization = forms.ModelChoiceField(Organization.objects.none())
    name = forms.CharField(max_length=255, widget=TEXT)
    key = key_field(64)
    # The column's range (a PositiveIntegerField), as the ModelForm this replaced took it.
    priority = forms.IntegerField(
        min_value=0,
        max_value=2_147_483_647,
        initial=1,
        widget=forms.NumberInput(attrs={"class": "vIntegerField"}),
    )

    def __init__(self, *args: Any, organizations: QuerySet[Organization], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is not None:
            del self.fields["organization"], self.fields["key"]
        else:
            self.fields["organization"].queryset = organizations  # type: ignore[attr-defined]

    def initial_from(self, obj: Environment) -> dict[str, Any]:
        return {"name": obj.name, "priority": obj.priority}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if self.instance is None and not self.errors:
            # The model's own rule: one key per organization.
            Environment(**cleaned).validate_constraints()
        return cleaned


@admin.register(Environment)
class EnvironmentAdmin(ConfigAdmin):
    config_form = EnvironmentForm
    list_display = ("__str__", "key", "priority", "created")
    list_select_related = ("organization",)
    search_fields = ("name", "key", "organization__name")

    def scope(self, queryset: QuerySet, request: HttpRequest) -> QuerySet:
        return queryset.filter(organization__in=visible_organizations(request.user))

    def form_kwargs(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        organizations = dashboard_choices(Organization, request)
        return {**super().form_kwargs(request, obj), "organizations": organizations}

    def form_sections(self, obj: Environment | None) -> list[Section]:
        if obj is None:
            return [(None, ["organization", "name", "key", "priority"])]
        return [(None, ["organization_link", "name", "key", "priority", "public_id", "created"])]

    @admin.display(description="organization")
    def organization_link(self, obj: Environment) -> SafeString:
        return admin_link(obj.organization)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting would cascade through its keys, tenants and every end-user; no service does it.
        return False

    def create(self, request: HttpRequest, form: EnvironmentForm) -> Environment:
        return environment_create(**form.cleaned_data)

    def update(self, request: HttpRequest, obj: Environment, form: EnvironmentForm) -> None:
        environment_update(obj, **form.changes())
