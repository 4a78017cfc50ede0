"""The points system's page: its settings, and its triggers, levels and boosts as rows, every
write through the configuration functions the admin API uses. Deleting a system archives it,
after a confirmation that counts what it leaves behind."""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import construct_change_message
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.utils.safestring import SafeString

from apps.accounts.admin.base import html_table
from apps.accounts.admin.config_pages import ConfigAdmin, Heading, Section
from apps.accounts.admin.declared import declared_form, own_input
from apps.core.errors import ApplicationError
from apps.core.guards import Impact
from apps.core.wording import counted
from apps.points import configuration, selectors
from apps.points.admin.forms import badge_rule
from apps.points.admin.part_forms import PartChoices
from apps.points.admin.parts import ROWS, PartRows, RowRefused, boost_audience, trigger_condition
from apps.points.choices import SystemStatus, TriggerStatus
from apps.points.domain import PointsSystemSettings
from apps.points.models import (
    PointsAward,
    PointsBoost,
    PointsLevel,
    PointsSystem,
    PointsTotal,
    PointsTrigger,
)

ARCHIVE_TEMPLATE = "admin/points/pointssystem/archive_confirmation.html"
SETTINGS = ["name", "description", "badge_url", "max_points"]


_Declared: Any = declared_form(PointsSystemSettings, skip=("badge_url",))


class SystemForm(_Declared):
    """The system's settings (`settings`), and on an active system's page the rows of its
    triggers, levels and boosts (`row_sets`), each row a part's form."""

    badge_url = own_input(
        PointsSystemSettings, "badge_url", forms.CharField, validators=[badge_rule]
    )

    def __init__(self, *args: Any, editable: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        system = self.instance
        self.row_sets: dict[str, PartRows] = {}
        if system is not None:
            del self.fields["key"]  # set for good
        if system is not None and system.status != SystemStatus.ARCHIVED:
            choices = PartChoices.of(system.tenant)
            data = args[0] if args else None
            self.row_sets = {
                prefix: rows(data, system=system, choices=choices, editable=editable)
                for prefix, rows in ROWS.items()
            }

    @property
    def media(self) -> forms.Media:
        media = super().media
        for rows in self.row_sets.values():
            media += rows.media
        return media

    def is_valid(self) -> bool:
        valid = super().is_valid()
        return all([valid, *(rows.is_valid() for rows in self.row_sets.values())])

    @property
    def rows_have_errors(self) -> bool:
        return (
            any(rows.non_form_errors() or any(rows.errors) for rows in self.row_sets.values())
            if self.is_bound
            else False
        )

    @property
    def settings(self) -> PointsSystemSettings:
        """The settings to create the system with, or those changed (an update)."""
        return PointsSystemSettings(**self.declared_values(changed_only=True))

    def refuse(self, exc: ApplicationError) -> None:
        if isinstance(exc, RowRefused):  # on its row
            exc.form.refuse(exc.refused)
        else:
            super().refuse(exc)


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


def _active(queryset: QuerySet[PointsSystem]) -> list[PointsSystem]:
    return list(
        queryset.all().filter(status=SystemStatus.ACTIVE).select_related("tenant").order_by("key")
    )


@admin.register(PointsSystem)
class PointsSystemAdmin(ConfigAdmin):
    config_form = SystemForm
    list_display = ("key", "name", "status", "max_points", "created")
    list_filter = ("status",)
    search_fields = ("key", "name")
    actions = ["archive_selected"]

    class Media:
        css = {"all": ("points/points.css",)}
        # Django's script of inline rows ("Add another"), after the jQuery it runs on.
        js = ("admin/js/vendor/jquery/jquery.js", "admin/js/jquery.init.js", "admin/js/inlines.js")

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        # Systems are archived, never deleted: the site-wide delete would say otherwise.
        actions.pop("delete_selected", None)
        return actions

    def form_sections(self, obj: PointsSystem | None) -> list[Section]:
        if obj is None:
            return [(None, ["key", *SETTINGS])]
        sections: list[Section] = [
            (None, [("key", "status", "public_id", "created")]),
            ("Settings", SETTINGS),
        ]
        if obj.status == SystemStatus.ARCHIVED:
            heading = Heading(
                "Triggers, levels and boosts",
                description="Archived: the system no longer awards points and has left the "
                "API. Its ledger and configuration are kept, read-only.",
            )
            sections.append((heading, ["triggers_table", "levels_table", "boosts_table"]))
        return sections

    def form_kwargs(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        editable = obj is None or self.has_change_permission(request, obj)
        return {**super().form_kwargs(request, obj), "editable": editable}

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.status == SystemStatus.ARCHIVED:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.status == SystemStatus.ARCHIVED:
            return False
        return super().has_delete_permission(request, obj)

    # --- writes --------------------------------------------------------------------------------

    def create(self, request: HttpRequest, form: SystemForm) -> PointsSystem:
        system, _ = configuration.points_system_create(form.valid_tenant, form.settings)
        return system

    def update(self, request: HttpRequest, obj: PointsSystem, form: SystemForm) -> None:
        configuration.points_system_update(obj.tenant, obj, form.settings)

    def remove(self, request: HttpRequest, obj: PointsSystem) -> None:
        configuration.points_system_archive(
            obj.tenant,
            obj,
            confirm=self.typed_key(request, obj),
            deactivate_dependants=request.POST.get("deactivate_dependants") == "yes",
        )

    def deletion_impact(self, obj: PointsSystem) -> Impact:
        return selectors.points_system_archive_impact(obj.tenant, obj)

    def _archive_context(self, systems: list[PointsSystem]) -> dict[str, Any]:
        """The guard rails of the archive confirmation: what users lose, the key to type, and
        the live leaderboards and leagues that rank by the systems, which the same step may
        deactivate when staff tick it (the service refuses otherwise)."""
        impacts = [self.deletion_impact(system) for system in systems]
        guarded = [
            {"object": system, "impact": impact, "alternative": ""}
            for system, impact in zip(systems, impacts, strict=True)
            if impact.losses
        ]
        dependants = [c for impact in impacts for c in impact.stuck(resolve=False)]
        return {"guarded": guarded, "dependants": dependants}

    def _save(self, request: HttpRequest, form: Any, obj: Any) -> Any:
        """The settings if they changed, then each added, changed or deleted row through its
        configuration function, in the page's one transaction: a refused row rolls back the
        whole save and is shown on its row (SystemForm.refuse). One history entry says it all."""
        if obj is None:
            return super()._save(request, form, obj)
        if form.changed_data:
            self.update(request, obj, form)
        row_sets = list(form.row_sets.values())
        for rows in row_sets:
            rows.save()
        if form.changed_data or any(
            rows.new_objects or rows.changed_objects or rows.deleted_objects for rows in row_sets
        ):
            self.log_change(request, obj, construct_change_message(form, row_sets, False))
        return obj

    def _saved(self, request: HttpRequest, obj: Any, *, added: bool) -> HttpResponse:
        response = super()._saved(request, obj, added=added)
        if not added or "_addanother" in request.POST:
            return response
        # Its triggers, levels and boosts are rows of its page.
        self.message_user(request, "Now add its triggers, levels and boosts.", messages.INFO)
        return HttpResponseRedirect(self.url("change", obj))

    # --- archiving (the delete page and the list's action) -------------------------------------

    def delete_page(self, request: HttpRequest, object_id: str) -> HttpResponse:
        system = self.object_or_404(request, object_id, change=False)
        if not self.has_delete_permission(request, system):
            raise PermissionDenied
        key_error = ""
        if request.method == "POST":
            try:
                self._remove_all(request, [system])
            except ApplicationError as exc:
                if exc.code != "unconfirmed":
                    self.message_user(request, exc.message, messages.ERROR)
                    return HttpResponseRedirect(self.url("delete", system))
                key_error = "The key you typed does not match: nothing was archived."
                system = self.object_or_404(request, object_id, change=False)  # as stored
            else:
                message = f"The points system “{system}” was archived: its ledger is kept."
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(self.url("changelist"))
        context = {
            **self._archive_context([system]),
            "key_error": key_error,
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Archive the points system?",
            "subtitle": None,
            "object": system,
            "systems": [system],
            "counts": archive_counts([system]),
        }
        return TemplateResponse(request, ARCHIVE_TEMPLATE, context)

    @admin.action(permissions=["delete"], description="Archive selected points systems")
    def archive_selected(
        self, request: HttpRequest, queryset: QuerySet[PointsSystem]
    ) -> HttpResponse | None:
        """A confirmation with counts, then each system archived by the configuration function."""
        systems = _active(queryset)
        if not systems:
            self.message_user(request, "The selected systems are archived already.")
            return None
        key_error = ""
        if request.POST.get("post"):
            try:
                with transaction.atomic():
                    for system in systems:
                        self.remove(request, system)
            except ApplicationError as exc:
                if exc.code != "unconfirmed":
                    self.message_user(request, exc.message, messages.ERROR)
                    return None
                key_error = "A key you typed does not match: nothing was archived."
                systems = _active(queryset)  # as stored: the rolled back archives changed them
            else:
                archived = counted(len(systems), "points system")
                self.message_user(request, f"Archived {archived}.", messages.SUCCESS)
                return None
        context = {
            **self._archive_context(systems),
            "key_error": key_error,
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

    # --- tables of an archived system ----------------------------------------------------------

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
