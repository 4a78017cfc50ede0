"""The leaderboard pages: the list, the settings page (written through leaderboard_create and
leaderboard_update, as the admin API writes; status changes, such as activating or scheduling,
are the same `status` setting), the live rankings, and a delete confirmation that counts what
goes."""

from typing import Any, cast
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.base import ChangeViewContextMixin, ServiceAdmin, selected_tenant
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
from apps.leaderboards.selectors import BoardDef
from apps.users.choices import AttributeType
from apps.users.selectors import attribute_definitions

RANKINGS_TEMPLATE = "admin/leaderboards/leaderboard/rankings.html"
RANKINGS_MEDIA = forms.Media(
    css={"all": ("leaderboards/leaderboards.css",)}, js=("leaderboards/rankings.js",)
)


@admin.register(Leaderboard)
class LeaderboardAdmin(ChangeViewContextMixin, ServiceAdmin):
    form = LeaderboardForm
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
    delete_confirmation_template = "admin/leaderboards/leaderboard/delete_confirmation.html"

    class Media:
        css = {"all": ("leaderboards/leaderboards.css",)}
        js = ("leaderboards/board-form.js",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Leaderboard]:
        # Replaces list_select_related on the list (Django skips it once a queryset selects).
        return super().get_queryset(request).select_related(*self.list_select_related)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        head = ("tenant",) if obj is None else ()
        return [
            (None, {"fields": (*head, "name", "key", "status", "description")}),
            (
                "What it ranks",
                {"fields": ("rank_by", "metric", "points_system", "max_participants")},
            ),
            ("When", {"fields": (("start", "end"), ("start_time", "end_time"))}),
            ("Runs", {"fields": (("run_interval", "run_unit"),)}),
            ("Who takes part", {"fields": ("user_attributes", "breakdown_attributes")}),
        ]

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        # Only the tenant is the row's; the rest is the service's arguments.
        kwargs["fields"] = ("tenant",) if obj is None else ()
        form = super().get_form(request, obj, change, **kwargs)
        tenant = obj.tenant if obj is not None else selected_tenant(request)
        return cast(type[forms.ModelForm], type(form.__name__, (form,), {"page_tenant": tenant}))

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> Leaderboard:
        board_form = cast(LeaderboardForm, form)
        tenant = form.cleaned_data["tenant"]
        return configuration.leaderboard_create(tenant, **board_form.kwargs)

    def service_update(
        self, request: HttpRequest, current: Leaderboard, form: forms.ModelForm
    ) -> None:
        board_form = cast(LeaderboardForm, form)
        configuration.leaderboard_update(current.tenant, current, **board_form.kwargs)

    def service_delete(self, request: HttpRequest, obj: Leaderboard) -> None:
        configuration.leaderboard_delete(obj.tenant, obj)

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

    def get_urls(self) -> list[URLPattern]:
        name = f"{self.opts.app_label}_{self.opts.model_name}_rankings"
        # Before Django's own: its "<object_id>/" catch-all would swallow it.
        return [
            path(
                "<path:object_id>/rankings/",
                self.admin_site.admin_view(self.rankings_view),
                name=name,
            ),
            *super().get_urls(),
        ]

    def _rankings_url(self, obj: Leaderboard) -> str:
        return reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_rankings",
            args=[obj.pk],
            current_app=self.admin_site.name,
        )

    def _board(self, request: HttpRequest, object_id: str) -> tuple[Leaderboard, BoardDef]:
        # get_object reads the scoped queryset: another tenant's board is not found.
        board = self.get_object(request, unquote(object_id))
        if board is None:
            raise Http404("No such leaderboard")
        if not self.has_view_or_change_permission(request, board):
            raise PermissionDenied
        definition = selectors.board_definitions(board.tenant).get(board.key)
        if definition is None:
            raise Http404("No such leaderboard")
        return cast(Leaderboard, board), definition

    def rankings_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        board, definition = self._board(request, object_id)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Rankings of {board.name}",
            "original": board,
            "media": RANKINGS_MEDIA,
            "change_url": reverse(
                f"admin:{self.opts.app_label}_{self.opts.model_name}_change",
                args=[board.pk],
                current_app=self.admin_site.name,
            ),
            "has_change_permission": self.has_change_permission(request, board),
            "summary": _summary(board),
            "live": board.status == Status.ACTIVE,
            "entries_url": _records_url(LeaderboardEntry, board),
            "snapshots_url": _records_url(LeaderboardSnapshot, board),
            **rankings_context(request, board, definition),
        }
        return TemplateResponse(request, RANKINGS_TEMPLATE, context)

    def change_view_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        return {"rankings_url": self._rankings_url(obj), "summary": _summary(obj)}

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        board = self.get_object(request, unquote(object_id))
        if board is not None:
            extra_context = {
                **(extra_context or {}),
                "removal": _removal_text(dashboard_reads.board_record_counts([board])),
            }
        return super().delete_view(request, object_id, extra_context)


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
