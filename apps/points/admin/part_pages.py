"""Levels, boosts and triggers on pages of their own, with the same forms as their rows on the
system's page; saving returns to the system's page."""

from typing import Any, ClassVar

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.base import ScopedFilter
from apps.accounts.admin.config_pages import ConfigAdmin, Section
from apps.points.admin.part_forms import BoostForm, LevelForm, PartForm
from apps.points.admin.parts import KIND_OF, Kind, boost_audience, trigger_condition
from apps.points.admin.trigger_form import TRIGGER_ROWS, TriggerForm
from apps.points.choices import SystemStatus
from apps.points.models import PointsBoost, PointsLevel, PointsSystem, PointsTrigger


class SystemFilter(ScopedFilter):
    """The selected tenant's systems, by key."""

    ordering = ("key",)

    def label(self, row: PointsSystem) -> str:
        return row.key


class SystemPartAdmin(ConfigAdmin):
    """A level, boost or trigger on a page of its own, with the same form as its row on the
    system's page; saving returns to the system's page."""

    tenant_lookup = "system__tenant"
    list_select_related: ClassVar[tuple[str, ...]] = ("system",)
    list_filter: ClassVar[tuple[Any, ...]] = (("system", SystemFilter),)
    head: ClassVar[tuple[str, ...]] = ("system_link", "public_id")
    rows: ClassVar[list[str | tuple[str, ...]]]

    @property
    def kind(self) -> Kind:
        return KIND_OF[self.model]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).select_related("system__tenant")

    def form_sections(self, obj: Any) -> list[Section]:
        return [(None, [*(["system"] if obj is None else self.head), *self.rows])]

    # --- writes --------------------------------------------------------------------------------

    def create(self, request: HttpRequest, form: PartForm) -> Any:
        system = form.valid_system
        return self.kind.create(system.tenant, system, **form.arguments)

    def update(self, request: HttpRequest, obj: Any, form: PartForm) -> None:
        # The function refuses a part of an archived system, as the admin API cannot reach one.
        self.kind.update(obj.system.tenant, obj, **form.arguments)

    def remove(self, request: HttpRequest, obj: Any) -> None:
        self.kind.delete(obj.system.tenant, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.system.status == SystemStatus.ARCHIVED:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.system.status == SystemStatus.ARCHIVED:
            return False
        return super().has_delete_permission(request, obj)

    @admin.display(description="Points system", ordering="system__name")
    def system_link(self, obj: Any) -> SafeString:
        return format_html('<a href="{}">{}</a>', _system_url(obj.system_id), str(obj.system))

    # --- back to the system's page, where the part is one row among the others ----------------

    def _saved(self, request: HttpRequest, obj: Any, *, added: bool) -> HttpResponse:
        response = super()._saved(request, obj, added=added)
        if "_continue" in request.POST or "_addanother" in request.POST:
            return response
        return HttpResponseRedirect(_system_url(obj.system_id))

    def delete_page(self, request: HttpRequest, object_id: str) -> HttpResponse:
        part = self.object_or_404(request, object_id, change=False)
        response = super().delete_page(request, object_id)
        if request.method == "POST" and response["Location"] == self.url("changelist"):
            return HttpResponseRedirect(_system_url(part.system_id))
        return response


def _system_url(system_id: int) -> str:
    return reverse("admin:points_pointssystem_change", args=[system_id])


@admin.register(PointsLevel)
class PointsLevelAdmin(SystemPartAdmin):
    config_form = LevelForm
    list_display = ("key", "name", "points", "system_link")
    search_fields = ("key", "name")
    ordering = ("system_id", "points", "pk")
    rows = ["key", "name", "points", "description", "badge_url"]


@admin.register(PointsBoost)
class PointsBoostAdmin(SystemPartAdmin):
    config_form = BoostForm
    list_display = ("name", "multiplier", "rounding", "start", "end", "audience", "system_link")
    list_select_related = ("system", "user")
    search_fields = ("name",)
    ordering = ("-start", "-pk")
    rows = [("name", "multiplier", "rounding"), ("start", "end"), "user_id", "user_attributes"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsBoost]:
        return super().get_queryset(request).select_related("user")

    @admin.display(description="For")
    def audience(self, obj: PointsBoost) -> str:
        return boost_audience(obj)


@admin.register(PointsTrigger)
class PointsTriggerAdmin(SystemPartAdmin):
    config_form = TriggerForm
    list_display = ("type", "points", "status", "condition", "system_link", "created")
    list_select_related = ("system", "metric", "achievement")
    list_filter = ("type", "status", ("system", SystemFilter))
    ordering = ("-pk",)
    head = ("system_link", "public_id", "created", "updated")
    rows = TRIGGER_ROWS

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsTrigger]:
        return super().get_queryset(request).select_related("metric", "achievement")

    def form_sections(self, obj: Any) -> list[Section]:
        return [(None, ["system"] if obj is None else self.head), ("Trigger", self.rows)]

    @admin.display(description="When")
    def condition(self, obj: PointsTrigger) -> str:
        return trigger_condition(obj)
