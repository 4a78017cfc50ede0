"""Dashboard plumbing shared by every app's admin module: the tenant scope of every page
(`DashboardAdmin`, on which the configuration pages of config_pages.py build), read-only pages,
tenant labels, columns and filters, and the small read-only tables of detail pages.

accounts is the lowest app with dashboard pages, so every other app's admin may import this module
without breaking the layers of docs/architecture.md §2.
"""

import datetime as dt
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any, Protocol, cast
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import display_for_value
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models import QuerySet
from django.forms.models import ModelChoiceField
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import NoReverseMatch, reverse
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.safestring import SafeString
from unfold.admin import ModelAdmin as ThemedModelAdmin

from apps.accounts.choices import TenantStatus
from apps.accounts.models import Environment, Organization, Tenant
from apps.accounts.staff import (
    selected_tenant,
    tenant_label,
    visible_organizations,
    visible_tenants,
)
from apps.core.replicas import lag_tolerant_page
from apps.core.shown_time import date_shown, moment_shown

# Tenant labels read the environment and organization: every query that shows tenants loads them.
TENANT_RELATED = "tenant__environment__organization"


def dashboard_choices(model: type[models.Model], request: HttpRequest) -> QuerySet:
    """What a dashboard choice list or list filter may offer of `model`: what the staff member's
    pages list of it (docs/architecture.md §3). Organizations, environments and tenants are those
    of the organizations they belong to; rows of a tenant are those of the selected tenant; any
    other model offers nothing unless its page names its choices itself."""
    organizations = visible_organizations(request.user)
    if model is Organization:
        return organizations.order_by("name")
    if model is Environment:
        return (
            Environment.objects.select_related("organization")
            .filter(organization__in=organizations)
            .order_by("organization__name", "priority")
        )
    if model is Tenant:
        return visible_tenants(request.user)
    lookup = _tenant_lookup(model)
    if lookup is None:
        return model._default_manager.none()
    return scoped(model._default_manager.all(), request, lookup)


class ScopedFilter(admin.RelatedFieldListFilter):
    """A list filter by a related object that offers only what dashboard_choices does, in one
    query: Django's own would list every organization's rows, one query per label."""

    ordering: tuple[str, ...] = ()
    related: tuple[str, ...] = ()  # what label() reads

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list:
        rows = dashboard_choices(field.related_model, request)
        if self.related:
            rows = rows.select_related(*self.related)
        if self.ordering:
            rows = rows.order_by(*self.ordering)
        return [(row.pk, self.label(row)) for row in rows]

    def label(self, row: Any) -> str:
        return str(row)

    def has_output(self) -> bool:
        # Django ignores the filter of a list that offers a single choice; one chosen in an
        # address (another tenant's row, before a switch) still applies, and finds nothing.
        return bool(super().has_output() or self.lookup_val is not None)


class TenantFilter(ScopedFilter):
    def label(self, row: Any) -> str:
        return tenant_label(row)


class EnvironmentFilter(ScopedFilter):
    pass


class TenantColumnMixin:
    """Needs TENANT_RELATED in list_select_related."""

    @admin.display(description="tenant", ordering="tenant_id")
    def tenant_column(self, obj: Any) -> str:
        return tenant_label(obj.tenant) if obj.tenant_id else "-"


def scoped(queryset: QuerySet, request: HttpRequest, lookup: str | None) -> QuerySet:
    """Rows of the tenant selected in the dashboard header: `lookup` leads from the model to its
    tenant ("tenant", "system__tenant"). Nothing when the staff member can see no tenant."""
    if lookup is None:
        return queryset
    tenant = selected_tenant(request)
    if tenant is None:
        return queryset.none()
    return queryset.filter(**{lookup: tenant})


def admin_link(obj: models.Model) -> SafeString:
    """A link to the object's dashboard page, or its name when it has none."""
    opts = obj._meta
    try:
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
    except NoReverseMatch:
        return conditional_escape(str(obj))
    return format_html('<a href="{}">{}</a>', url, str(obj))


def admin_links(objs: Iterable[models.Model]) -> SafeString:
    return format_html_join(", ", "{}", ((admin_link(obj),) for obj in objs))


def _tenant_lookup(model: type[models.Model]) -> str | None:
    names = {field.name for field in model._meta.get_fields()}
    return "tenant" if "tenant" in names else None


def moment_column(name: str, description: str) -> Callable[[Any], str]:
    """A list column or read-only field showing the moment (or date) `name` as every dashboard
    page writes them: in the page's zone (the selected tenant's reporting zone), with the zone
    named, in the staff member's formats (apps/core/shown_time.py); Django's own would show a
    moment in UTC, without its zone, and both in the server's formats."""

    @admin.display(description=description, ordering=name)
    def column(obj: Any) -> str:
        value = getattr(obj, name)
        if value is None:
            return "-"
        return moment_shown(value) if isinstance(value, dt.datetime) else date_shown(value)

    column.__name__ = name
    return column


# Models whose "History" button shows the configuration's change history (model label -> kind),
# filled by apps/changes when Django starts; the others keep Django's own history page.
CONFIGURATION_MODELS: dict[str, str] = {}


class DashboardAdmin(ThemedModelAdmin):
    """Every page shows the tenant selected in the header only (scope.py); forms offer that
    tenant's objects and fill in the tenant itself, so no add form asks for it. Moments in its
    lists and read-only fields carry their zone (`moment_column`)."""

    # The path from this page's model to its tenant; pages of models without a `tenant` field
    # name theirs ("system__tenant") or scope their queryset themselves (organizations, keys).
    tenant_lookup: str | None = None
    # Pages listing rows of several tenants at once (API keys of an environment) keep the column.
    tenant_column_shown = False

    def get_tenant_lookup(self) -> str | None:
        return self.tenant_lookup or _tenant_lookup(self.model)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return self.scope(super().get_queryset(request), request)

    def scope(self, queryset: QuerySet, request: HttpRequest) -> QuerySet:
        return scoped(queryset, request, self.get_tenant_lookup())

    def get_list_display(self, request: HttpRequest) -> Any:
        # One tenant is shown at a time: a tenant column would repeat it on every row.
        columns = super().get_list_display(request)
        if not self.tenant_column_shown:
            columns = [name for name in columns if name != "tenant_column"]
        return self._moments_shown(columns)

    def get_list_display_links(self, request: HttpRequest, list_display: Any) -> Any:
        links = super().get_list_display_links(request, list_display)
        return self._moments_shown(links) if links else links

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # Only the read-only ones: an input stays an input.
        readonly = set(super().get_readonly_fields(request, obj))
        return self._moments_shown(super().get_fields(request, obj), only=readonly)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self._moments_shown(super().get_readonly_fields(request, obj))

    def _moments_shown(self, names: Any, only: set[Any] | None = None) -> list[Any]:
        """`names` with each of the model's moments and dates replaced by its `moment_column`
        (the dashboard's one format), one function per name (a read-only field is found by
        identity)."""
        columns: dict[str, Any] = self.__dict__.setdefault("_moment_columns", {})
        shown = []
        for name in names:
            shown_as_text = isinstance(name, str) and (only is None or name in only)
            field = self._model_field(name) if shown_as_text else None
            if isinstance(field, models.DateField):  # and DateTimeField, its subclass
                if name not in columns:
                    columns[name] = moment_column(name, str(field.verbose_name))
                name = columns[name]
            shown.append(name)
        return shown

    def _model_field(self, name: str) -> Any:
        try:
            return self.model._meta.get_field(name)
        except FieldDoesNotExist:
            return None

    def get_list_filter(self, request: HttpRequest) -> Any:
        # A filter by a related object offers what the staff member may see of it only.
        return [
            (item, ScopedFilter) if isinstance(item, str) and self._is_relation(item) else item
            for item in super().get_list_filter(request)
            if not (isinstance(item, tuple) and item[0] == "tenant")
        ]

    def _is_relation(self, name: str) -> bool:
        try:
            return bool(self.model._meta.get_field(name).is_relation)
        except FieldDoesNotExist:
            return False

    def formfield_for_foreignkey(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        related = db_field.related_model
        tenant = selected_tenant(request)
        if related is Tenant:
            # The selected tenant, filled in and hidden: configuration is created where the
            # staff member is looking.
            kwargs["queryset"] = Tenant.objects.filter(
                pk__in=[tenant.pk] if tenant else [], status=TenantStatus.ACTIVE
            )
            kwargs["initial"] = tenant
            kwargs["widget"] = forms.HiddenInput
        elif "queryset" not in kwargs:
            kwargs["queryset"] = dashboard_choices(related, request)
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and related is Tenant:
            field.label_from_instance = tenant_label
        return field

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if "queryset" not in kwargs:
            kwargs["queryset"] = dashboard_choices(db_field.related_model, request)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Any = None,
    ) -> HttpResponse:
        context.update(self.form_page_context(request, obj))
        return super().render_change_form(request, context, add, change, form_url, obj)

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """A configuration object's history is the change history's, filtered to it."""
        label = f"{self.model._meta.app_label}.{self.model._meta.model_name}"
        if label in CONFIGURATION_MODELS:
            query = urlencode({"model": label, "object": object_id})
            return HttpResponseRedirect(f"{reverse('admin:config-history')}?{query}")
        return super().history_view(request, object_id, extra_context)

    def form_page_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        """What the add or change page's template shows besides the form, whenever it renders
        the form (read-only detail pages: the end-user, a webhook delivery)."""
        return {}


class PageRowsChangeList(ChangeList):
    """A list whose columns show what other tables hold about each row: once the page's rows
    are known, the admin's `page_rows_load(request, rows)` reads it for all of them at once, so
    that a page costs the same queries whatever its length (a column reading per row would not)."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        rows = list(self.result_list)
        cast(_PageRowsAdmin, self.model_admin).page_rows_load(request, rows)
        self.result_list = rows


class _PageRowsAdmin(Protocol):
    def page_rows_load(self, request: HttpRequest, rows: list[Any]) -> None: ...


class ReadOnlyAdmin(DashboardAdmin):
    """State recorded by the pipeline: staff may look, never write (docs/architecture.md §5).
    Its lists may read a replica (apps/core/replicas.py): they show what events recorded, which
    a list a moment old shows as well."""

    @lag_tolerant_page
    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        return super().changelist_view(request, extra_context)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _cell(value: Any) -> str:
    if isinstance(value, Decimal):
        # Amounts are stored with 6 decimal places; 12.5 reads better than 12.500000.
        return format(value.normalize(), "f")
    if isinstance(value, dt.datetime):
        return moment_shown(value)
    if isinstance(value, dt.date):
        return date_shown(value)
    return str(display_for_value(value, "-"))


def html_table(headers: tuple[str, ...], rows: list[tuple[Any, ...]]) -> SafeString:
    """A small read-only table for a detail page; every cell is escaped."""
    if not rows:
        return format_html("{}", "-")
    head = format_html_join("", "<th>{}</th>", ((h,) for h in headers))
    cells = "<td>{}</td>" * len(headers)
    body = format_html_join("", f"<tr>{cells}</tr>", ([_cell(v) for v in row] for row in rows))
    return format_html("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, body)
