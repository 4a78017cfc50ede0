"""The points system's page: its settings, and its triggers, levels and boosts as inline rows,
every write through the configuration functions the admin API uses. Deleting a system archives
it, after a confirmation that counts what it leaves behind."""

from typing import Any, ClassVar, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import SafeString

from apps.accounts.admin.base import (
    ServiceAdmin,
    ServiceForm,
    html_table,
    key_rules,
    range_rules,
    text_rules,
)
from apps.accounts.models import Tenant
from apps.core.errors import ApplicationError
from apps.core.wording import counted
from apps.points import configuration, domain
from apps.points.admin.forms import badge_rule
from apps.points.admin.parts import (
    ROW_REFUSALS,
    BoostInline,
    LevelInline,
    RowRefused,
    TriggerInline,
    boost_audience,
    trigger_condition,
)
from apps.points.choices import SystemStatus, TriggerStatus
from apps.points.models import (
    PointsAward,
    PointsBoost,
    PointsLevel,
    PointsSystem,
    PointsTotal,
    PointsTrigger,
)

ARCHIVE_TEMPLATE = "admin/points/pointssystem/archive_confirmation.html"


class SystemForm(ServiceForm):
    key = forms.CharField(
        strip=False, label="Key", help_text="How the API names the system; set for good."
    )
    name = forms.CharField(label="Name")
    description = forms.CharField(
        label="Description", required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    badge_url = forms.CharField(required=False, label="Badge URL")
    max_points = forms.IntegerField(
        required=False, label="Maximum points", help_text="Empty: no maximum."
    )

    rules: ClassVar[dict[str, list[Any]]] = {
        "key": key_rules(),
        "name": text_rules(255),
        "description": text_rules(2000),
        "badge_url": [badge_rule],
        "max_points": range_rules(1, domain.MAX_POINTS),
    }

    class Meta:
        model = PointsSystem
        fields = ("tenant",)

    def config_tenant(self) -> Tenant | None:
        return self.instance.tenant if self.instance.pk else self.cleaned_data.get("tenant")

    def initial_from(self, obj: PointsSystem) -> dict[str, Any]:
        return {
            "name": obj.name,
            "description": obj.description,
            "badge_url": obj.badge_url or "",
            "max_points": obj.max_points,
        }

    def service_kwargs(self) -> dict[str, Any]:
        cleaned = self.cleaned_data
        kwargs: dict[str, Any] = {
            name: cleaned[name]
            for name in ("key", "name", "description", "max_points")
            if name in self.fields
        }
        return {**kwargs, "badge_url": cleaned["badge_url"] or None}


def archive_counts(systems: list[PointsSystem]) -> dict[str, int]:
    """What archiving leaves behind, for the confirmation: the ledger is kept, the
    configuration stays, read-only."""
    return {
        "awards": PointsAward.objects.filter(system__in=systems).count(),
        "totals": PointsTotal.objects.filter(system__in=systems).count(),
        "triggers": PointsTrigger.objects.filter(system__in=systems).count(),
        "active_triggers": PointsTrigger.objects.filter(
            system__in=systems, status=TriggerStatus.ACTIVE
        ).count(),
        "levels": PointsLevel.objects.filter(system__in=systems).count(),
        "boosts": PointsBoost.objects.filter(system__in=systems).count(),
    }


@admin.register(PointsSystem)
class PointsSystemAdmin(ServiceAdmin):
    form = SystemForm
    list_display = ("key", "name", "status", "max_points", "created")
    list_filter = ("status",)
    search_fields = ("key", "name")
    actions = ["archive_selected"]
    inlines = (TriggerInline, LevelInline, BoostInline)
    delete_confirmation_template = ARCHIVE_TEMPLATE
    settings = ("name", "description", "badge_url", "max_points")
    head = ("key", "status", "public_id", "created")
    tables = ("triggers_table", "levels_table", "boosts_table")

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        # Systems are archived, never deleted: the site-wide delete would say otherwise.
        actions.pop("delete_selected", None)
        return actions

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        if obj is None:
            return [(None, {"fields": ("tenant", "key", *self.settings)})]
        fieldsets: list[tuple[Any, Any]] = [
            (None, {"fields": (self.head,)}),
            ("Settings", {"fields": self.settings}),
        ]
        if obj.status == SystemStatus.ARCHIVED:
            fieldsets += [
                (
                    "Triggers, levels and boosts",
                    {
                        "fields": self.tables,
                        "description": "Archived: the system no longer awards points and has "
                        "left the API. Its ledger and configuration are kept, read-only.",
                    },
                )
            ]
        return fieldsets

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return () if obj is None else (*self.head, *self.tables)

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        kwargs["fields"] = ("tenant",) if obj is None else ()
        return super().get_form(request, obj, change, **kwargs)

    def get_inline_instances(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        # Parts are added on the system's page once it exists; an archived system's are shown
        # as tables (the admin API no longer reaches them either).
        if obj is None or obj.status == SystemStatus.ARCHIVED:
            return []
        return super().get_inline_instances(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.status == SystemStatus.ARCHIVED:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.status == SystemStatus.ARCHIVED:
            return False
        return super().has_delete_permission(request, obj)

    # Writes

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> PointsSystem:
        tenant = form.cleaned_data["tenant"]
        system, _ = configuration.points_system_create(tenant, **_kwargs(form))
        return system

    def service_update(
        self, request: HttpRequest, current: PointsSystem, form: forms.ModelForm
    ) -> None:
        configuration.points_system_update(current.tenant, current, **_kwargs(form))

    def service_delete(self, request: HttpRequest, obj: PointsSystem) -> None:
        configuration.points_system_archive(obj.tenant, obj)

    def save_model(
        self, request: HttpRequest, obj: Any, form: forms.ModelForm, change: bool
    ) -> None:
        # Saving only rows of the page leaves the system's settings, and its version, alone.
        if change and not form.has_changed():
            return
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """Each added, changed or deleted row through its configuration function, inside the
        admin's transaction: a refused row rolls back the whole save (changeform_view)."""
        for formset in formsets:
            formset.save_through_services(form.instance.tenant)

    def refusal_keep(self, request: HttpRequest, exc: ApplicationError) -> None:
        if not isinstance(exc, RowRefused):
            super().refusal_keep(request, exc)
            return
        # The transaction is rolled back; the page runs again with the refusal on its row,
        # which then fails validation, so nothing is written twice.
        setattr(request, ROW_REFUSALS, {exc.prefix: exc.refused})

    def response_add(
        self, request: HttpRequest, obj: PointsSystem, post_url_continue: str | None = None
    ) -> HttpResponse:
        response = super().response_add(request, obj, post_url_continue)
        if "_addanother" in request.POST:
            return response
        self.message_user(request, "Now add its triggers, levels and boosts.", messages.INFO)
        return HttpResponseRedirect(reverse("admin:points_pointssystem_change", args=[obj.pk]))

    @admin.action(permissions=["delete"], description="Archive selected points systems")
    def archive_selected(
        self, request: HttpRequest, queryset: QuerySet[PointsSystem]
    ) -> HttpResponse | None:
        """A confirmation with counts, then each system archived by the configuration function."""
        systems = list(
            queryset.filter(status=SystemStatus.ACTIVE).select_related("tenant").order_by("key")
        )
        if not systems:
            self.message_user(request, "The selected systems are archived already.")
            return None
        if request.POST.get("post"):
            with transaction.atomic():
                for system in systems:
                    configuration.points_system_archive(system.tenant, system)
            self.message_user(
                request, f"Archived {counted(len(systems), 'points system')}.", messages.SUCCESS
            )
            return None
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Archive points systems?",
            "systems": systems,
            "counts": archive_counts(systems),
            "action_name": "archive_selected",
            "selected": [system.pk for system in systems],
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, ARCHIVE_TEMPLATE, context)

    # Archiving (the delete view)

    def get_deleted_objects(
        self, objs: Any, request: HttpRequest
    ) -> tuple[list[Any], dict[str, int], set[str], list[str]]:
        systems = list(objs)
        return [str(system) for system in systems], archive_counts(systems), set(), []

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        context = {**(extra_context or {}), "title": "Archive the points system?"}
        return super().delete_view(request, object_id, context)

    def render_delete_form(self, request: HttpRequest, context: dict[str, Any]) -> HttpResponse:
        obj = context["object"]
        context.update(systems=[obj], counts=dict(context["model_count"]))
        return super().render_delete_form(request, context)

    def response_delete(self, request: HttpRequest, obj_display: str, obj_id: Any) -> HttpResponse:
        # Not Django's "deleted successfully": say what happened.
        self.message_user(
            request,
            f"The points system “{obj_display}” was archived: its ledger is kept.",
            messages.SUCCESS,
        )
        return HttpResponseRedirect(reverse("admin:points_pointssystem_changelist"))

    # Tables of an archived system

    @admin.display(description="Triggers")
    def triggers_table(self, obj: PointsSystem) -> SafeString:
        triggers = obj.triggers.select_related("metric", "achievement").order_by("created", "pk")
        rows = [(t.type, t.points, t.status, trigger_condition(t)) for t in triggers]
        return html_table(("Type", "Points", "Status", "When"), rows)

    @admin.display(description="Levels")
    def levels_table(self, obj: PointsSystem) -> SafeString:
        levels = obj.levels.order_by("points", "pk")
        return html_table(
            ("Key", "Name", "Points"), [(lv.key, lv.name, lv.points) for lv in levels]
        )

    @admin.display(description="Boosts")
    def boosts_table(self, obj: PointsSystem) -> SafeString:
        boosts = obj.boosts.select_related("user").order_by("start", "pk")
        rows = [
            (b.name, b.multiplier.normalize(), b.start, b.end, boost_audience(b)) for b in boosts
        ]
        return html_table(("Name", "Multiplier", "Start", "End", "For"), rows)


def _kwargs(form: forms.ModelForm) -> dict[str, Any]:
    return cast(SystemForm, form).kwargs
