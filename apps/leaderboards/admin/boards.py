"""The leaderboard pages: the list, the settings page (written through leaderboard_create and
leaderboard_update, as the admin API writes; status changes, such as activating or scheduling,
are the same `status` setting), the live rankings, and a delete confirmation that counts what
goes."""

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.config_pages import ConfigAdmin, Section, View
from apps.core.guards import Impact
from apps.core.wording import counted
from apps.leaderboards import configuration, dashboard_reads, selectors
from apps.leaderboards.admin.display import (
    dates_text,
    ranked_on,
    runs_text,
    window_text,
)
from apps.leaderboards.admin.forms import LeaderboardForm
from apps.leaderboards.admin.rankings import rankings_context
from apps.leaderboards.choices import Status
from apps.leaderboards.models import Leaderboard, LeaderboardEntry, LeaderboardSnapshot
from apps.users.choices import AttributeType
from apps.users.selectors import attribute_definitions

RANKINGS_TEMPLATE = "admin/leaderboards/leaderboard/rankings.html"
DELETE_TEMPLATE = "admin/leaderboards/leaderboard/delete_confirmation.html"
RANKINGS_MEDIA = forms.Media(
    css={"all": ("leaderboards/leaderboards.css",)}, js=("leaderboards/rankings.js",)
)


@admin.register(Leaderboard)
class LeaderboardAdmin(ConfigAdmin):
    config_form = LeaderboardForm
    list_display = (
        "name",
        "key",
        "status",
        "ranked_on",
        "dates",
        "runs",
        "rankings_link",
    )
    list_display_links = ("name",)
    list_select_related = ("metric", "points_system")
    list_filter = ("status", "rank_by")
    search_fields = ("key", "name")
    ordering = ("key",)

    class Media:
        css = {"all": ("leaderboards/leaderboards.css",)}
        js = ("leaderboards/board-form.js",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Leaderboard]:
        # Replaces list_select_related on the list (Django skips it once a queryset selects).
        return super().get_queryset(request).select_related(*self.list_select_related)

    def form_sections(self, obj: Leaderboard | None) -> list[Section]:
        return [
            (None, ["name", "key", "status", "description"]),
            ("What it ranks", ["rank_by", "metric", "points_system", "max_participants"]),
            ("When", [("start", "end"), ("start_time", "end_time")]),
            ("Runs", [("run_interval", "run_unit")]),
            ("Who takes part", ["user_attributes", "breakdown_attributes"]),
        ]

    def create(self, request: HttpRequest, form: LeaderboardForm) -> Leaderboard:
        return configuration.leaderboard_create(form.valid_tenant, form.valid_settings)

    def update(self, request: HttpRequest, obj: Leaderboard, form: LeaderboardForm) -> None:
        configuration.leaderboard_update(obj.tenant, obj, form.valid_settings)

    def remove(self, request: HttpRequest, obj: Leaderboard) -> None:
        configuration.leaderboard_delete(obj.tenant, obj, confirm=self.typed_key(request, obj))

    def deletion_impact(self, obj: Leaderboard) -> Impact:
        return selectors.leaderboard_deletion_impact(obj.tenant, obj)

    def deletion_alternative(self, obj: Leaderboard) -> str:
        if obj.status == Status.INACTIVE:
            return ""
        return format_html(
            'Instead, <a href="{}#id_status">deactivate it</a> (status Inactive): it leaves '
            "the application API and keeps its rankings, and may go live again.",
            self.url("change", obj),
        )

    def deletion_counts(self, objs: list[Any]) -> dict[str, int]:
        counts = dashboard_reads.board_record_counts(objs)
        return {
            "ranking entries": counts["entries"],
            "daily rank snapshots": counts["snapshots"],
            "runs": counts["runs"],
        }

    # --- list columns ------------------------------------------------------------------------

    @admin.display(description="Ranked on")
    def ranked_on(self, obj: Leaderboard) -> str:
        return ranked_on(obj)

    @admin.display(description="Dates", ordering="start")
    def dates(self, obj: Leaderboard) -> str:
        return dates_text(obj)

    @admin.display(description="Runs")
    def runs(self, obj: Leaderboard) -> str:
        return runs_text(obj)

    @admin.display(description="Rankings")
    def rankings_link(self, obj: Leaderboard) -> SafeString:
        return format_html('<a href="{}">Live rankings</a>', self._rankings_url(obj))

    # --- pages -------------------------------------------------------------------------------

    def object_views(self) -> dict[str, View]:
        return {"rankings": self.rankings_view}

    def _rankings_url(self, obj: Leaderboard) -> str:
        return self.url("rankings", obj)

    def rankings_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        # object_or_404 reads the scoped queryset: another tenant's board is not found.
        board = self.object_or_404(request, object_id, change=False)
        definition = selectors.board_definitions(board.tenant).get(board.key)
        if definition is None:
            raise Http404("No such leaderboard")
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Rankings of {board.name}",
            "original": board,
            "media": RANKINGS_MEDIA,
            "change_url": self.url("change", board),
            "has_change_permission": self.has_change_permission(request, board),
            "summary": _summary(board),
            "live": board.status == Status.ACTIVE,
            "entries_url": _records_url(LeaderboardEntry, board),
            "snapshots_url": _records_url(LeaderboardSnapshot, board),
            **rankings_context(request, board, definition),
        }
        return TemplateResponse(request, RANKINGS_TEMPLATE, context)

    def page_context(self, request: HttpRequest, obj: Leaderboard | None) -> dict[str, Any]:
        if obj is None:
            return {}
        return {"rankings_url": self._rankings_url(obj), "summary": _summary(obj)}

    def delete_page(self, request: HttpRequest, object_id: str) -> HttpResponse:
        response = super().delete_page(request, object_id)
        if isinstance(response, TemplateResponse):  # the confirmation: what goes, in words
            context: Any = response.context_data
            counts = dashboard_reads.board_record_counts([context["object"]])
            context["removal"] = _removal_text(counts)
            response.template_name = DELETE_TEMPLATE
        return response


def _records_url(model: type[Model], board: Leaderboard) -> str:
    opts = model._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
    return f"{url}?{urlencode({'leaderboard__id__exact': board.pk})}"


def _removal_text(counts: dict[str, int]) -> str:
    if not counts["entries"] and not counts["snapshots"]:
        return "it has no entries or snapshots yet"
    return (
        f"{counted(counts['entries'], 'ranking entry', 'ranking entries')} in "
        f"{counted(counts['runs'], 'run')} and "
        f"{counted(counts['snapshots'], 'daily rank snapshot')}"
    )


def _summary(board: Leaderboard) -> list[tuple[str, str]]:
    """The board in a few lines, above its settings and its rankings."""
    lines = [
        ("Status", board.get_status_display()),
        ("Ranks by", ranked_on(board)),
        ("Dates", dates_text(board)),
        ("Runs", runs_text(board)),
        ("Maximum participants", f"{board.max_participants:,}"),
    ]
    window = window_text(board)
    if window:
        lines.append(("Counts", f"Only {window}, in each end-user's time"))
    keys = {
        pid: key
        for (kind, key), pid in attribute_definitions(board.tenant).ids_by_type_key.items()
        if kind == AttributeType.USER
    }
    if board.user_attributes:
        filters = [
            f"{keys.get(ref['attributeId'], 'deleted attribute')} = {ref['attributeValue']}"
            for ref in board.user_attributes
        ]
        lines.append(("Takes part", "End-users with " + ", ".join(filters)))
    if board.breakdown_attributes:
        names = [keys.get(pid, "deleted attribute") for pid in board.breakdown_attributes]
        lines.append(("One ranking per", ", ".join(names)))
    return lines
