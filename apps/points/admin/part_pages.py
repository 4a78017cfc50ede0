"""Levels, boosts and triggers on pages of their own, with the same forms as their rows on the
system's page; saving returns to the system's page."""

from typing import Any, ClassVar

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.forms.models import ModelChoiceField
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.base import ScopedFilter, ServiceAdmin, selected_tenant
from apps.points.admin.part_forms import BoostForm, LevelForm
from apps.points.admin.parts import (
    WRITES,
    TriggerInline,
    _kwargs,
    active_systems,
    boost_audience,
    trigger_condition,
)
from apps.points.admin.trigger_form import TriggerForm
from apps.points.choices import SystemStatus
from apps.points.models import PointsBoost, PointsLevel, PointsSystem, PointsTrigger


class SystemFilter(ScopedFilter):
    """The selected tenant's systems, by key."""

    ordering = ("key",)

    def label(self, row: PointsSystem) -> str:
        return row.key


class SystemPartAdmin(ServiceAdmin):
    """A level, boost or trigger on a page of its own, with the same form as its row on the
    system's page; saving returns to the system's page."""

    tenant_lookup = "system__tenant"
    list_select_related: ClassVar[tuple[str, ...]] = ("system",)
    list_filter: ClassVar[tuple[Any, ...]] = (("system", SystemFilter),)
    head: ClassVar[tuple[str, ...]] = ("system_link", "public_id")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).select_related("system__tenant")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return () if obj is None else self.head

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        kwargs["fields"] = ("system",) if obj is None else ()
        form = super().get_form(request, obj, change, **kwargs)
        # The add page offers the selected tenant's systems: its metrics and attributes too.
        tenant = selected_tenant(request)
        return type(form.__name__, (form,), {"page_tenant": tenant})

    def formfield_for_foreignkey(
        self, db_field: Any, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        if db_field.name == "system":
            kwargs["queryset"] = active_systems(selected_tenant(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> Any:
        system = form.cleaned_data["system"]
        writes = WRITES[self.model]
        return writes.create(system.tenant, system, **_kwargs(form))

    def service_update(self, request: HttpRequest, current: Any, form: forms.ModelForm) -> None:
        # The function refuses a part of an archived system, as the admin API cannot reach one.
        writes = WRITES[self.model]
        writes.update(current.system.tenant, current, **_kwargs(form))

    def service_delete(self, request: HttpRequest, obj: Any) -> None:
        WRITES[self.model].delete(obj.system.tenant, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.system.status == SystemStatus.ARCHIVED:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.system.status == SystemStatus.ARCHIVED:
            return False
        return super().has_delete_permission(request, obj)

    @admin.display(description="Points system", ordering="system__key")
    def system_link(self, obj: Any) -> SafeString:
        url = reverse("admin:points_pointssystem_change", args=[obj.system_id])
        return format_html('<a href="{}">{}</a>', url, obj.system.key)

    # Back to the system's page, where the part is one row among the others.

    def _system_page(self, system_id: int) -> HttpResponseRedirect:
        return HttpResponseRedirect(reverse("admin:points_pointssystem_change", args=[system_id]))

    def response_add(self, request: HttpRequest, obj: Any, post_url_continue: Any = None) -> Any:
        response = super().response_add(request, obj, post_url_continue)
        if "_continue" in request.POST or "_addanother" in request.POST:
            return response
        return self._system_page(obj.system_id)

    def response_change(self, request: HttpRequest, obj: Any) -> HttpResponse:
        response = super().response_change(request, obj)
        if "_continue" in request.POST or "_addanother" in request.POST:
            return response
        return self._system_page(obj.system_id)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        super().delete_model(request, obj)
        request._points_deleted_from = obj.system_id  # type: ignore[attr-defined]

    def response_delete(self, request: HttpRequest, obj_display: str, obj_id: Any) -> HttpResponse:
        response = super().response_delete(request, obj_display, obj_id)
        system_id = getattr(request, "_points_deleted_from", None)
        return self._system_page(system_id) if system_id is not None else response


@admin.register(PointsLevel)
class PointsLevelAdmin(SystemPartAdmin):
    form = LevelForm
    list_display = ("key", "name", "points", "system_link")
    search_fields = ("key", "name")
    ordering = ("system_id", "points", "pk")

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        fields = ("key", "name", "points", "description", "badge_url")
        return ("system", *fields) if obj is None else (*self.head, *fields)


@admin.register(PointsBoost)
class PointsBoostAdmin(SystemPartAdmin):
    form = BoostForm
    list_display = ("name", "multiplier", "rounding", "start", "end", "audience", "system_link")
    list_select_related = ("system", "user")
    search_fields = ("name",)
    ordering = ("-start", "-pk")

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsBoost]:
        return super().get_queryset(request).select_related("user")

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[Any, ...]:
        fields = (("name", "multiplier", "rounding"), ("start", "end"), "user_id")
        head = ("system",) if obj is None else self.head
        return (*head, *fields, "user_attributes")

    @admin.display(description="For")
    def audience(self, obj: PointsBoost) -> str:
        return boost_audience(obj)


@admin.register(PointsTrigger)
class PointsTriggerAdmin(SystemPartAdmin):
    form = TriggerForm
    list_display = ("type", "points", "status", "condition", "system_link", "created")
    list_select_related = ("system", "metric", "achievement")
    list_filter = ("type", "status", ("system", SystemFilter))
    ordering = ("-pk",)
    head = ("system_link", "public_id", "created", "updated")

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsTrigger]:
        return super().get_queryset(request).select_related("metric", "achievement")

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        inline = TriggerInline.fieldsets[0][1]["fields"]
        return [
            (None, {"fields": ("system",) if obj is None else self.head}),
            ("Trigger", {"fields": inline}),
        ]

    @admin.display(description="When")
    def condition(self, obj: PointsTrigger) -> str:
        return trigger_condition(obj)
