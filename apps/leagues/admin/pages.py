"""The league pages: the list, the league's page (its settings with its tiers and rewards as
rows, written through league_create and league_update as the admin API writes; status changes
are the same `status` setting), its weeks in numbers, this week's cohorts with their live
standings, and a delete that a league with history cannot pass (it is archived instead)."""

import datetime as dt
from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import construct_change_message
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.config_pages import ConfigAdmin, Heading, Section, View
from apps.core.wording import counted
from apps.leagues import configuration, selectors
from apps.leagues.admin.display import (
    scored_on,
    summary,
    tier_name,
    units,
    week_end_text,
    week_of,
    week_text,
)
from apps.leagues.admin.forms import LeagueForm
from apps.leagues.admin.standings import cohorts_context, cohorts_url, week_param
from apps.leagues.models import League

COHORTS_TEMPLATE = "admin/leagues/league/cohorts.html"
# The league page's table of weeks: this week and the ones before it.
WEEKS_SHOWN = 8


@admin.register(League)
class LeagueAdmin(ConfigAdmin):
    config_form = LeagueForm
    list_display = (
        "name",
        "key",
        "status",
        "scored_column",
        "week_end_column",
        "tiers_column",
        "cohort_size",
        "cohorts_link",
    )
    list_display_links = ("name",)
    list_select_related = ("tenant", "metric", "points_system")
    list_filter = ("status", "score_by")
    search_fields = ("key", "name")
    ordering = ("key",)

    class Media:
        css = {"all": ("leagues/leagues.css",)}
        # Django's script of inline rows ("Add another"), after the jQuery it runs on.
        js = (
            "admin/js/vendor/jquery/jquery.js",
            "admin/js/jquery.init.js",
            "admin/js/inlines.js",
            "leagues/league-form.js",
        )

    def get_queryset(self, request: HttpRequest) -> QuerySet[League]:
        # Replaces list_select_related on the list (Django skips it once a queryset selects).
        return super().get_queryset(request).select_related(*self.list_select_related)

    def form_sections(self, obj: League | None) -> list[Section]:
        week = Heading(
            "The week",
            description="One moment for every user, stated in the tenant's reporting time "
            "zone. Set for good once the league is active, as what is scored and its key.",
        )
        return [
            (None, ["name", "key", "status", "description"]),
            ("What is scored", ["score_by", "metric_id", "points_system_id"]),
            (week, [("week_ends_on", "week_ends_at"), "cohort_size"]),
            ("Who takes part", ["user_attributes"]),
            ("Moving up and down", ["zone_unit", "idle", "absent"]),
        ]

    def form_kwargs(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        editable = obj is None or self.has_change_permission(request, obj)
        return {**super().form_kwargs(request, obj), "editable": editable}

    # --- writes --------------------------------------------------------------------------------

    def create(self, request: HttpRequest, form: LeagueForm) -> League:
        return configuration.league_create(form.valid_tenant, form.valid_settings)

    def update(self, request: HttpRequest, obj: League, form: LeagueForm) -> None:
        configuration.league_update(obj.tenant, obj, form.valid_settings)

    def remove(self, request: HttpRequest, obj: League) -> None:
        configuration.league_delete(obj.tenant, obj)

    def _save(self, request: HttpRequest, form: Any, obj: Any) -> Any:
        """As any page, and a change of the tiers or rewards rows alone is a change too: the
        service is given the whole league once, and the history names the rows."""
        if obj is None:
            return super()._save(request, form, obj)
        changed_rows = [rows.heading for rows in form.row_sets if rows.has_changed()]
        if not form.changed_data and not changed_rows:
            return obj
        self.update(request, obj, form)
        message = construct_change_message(form, [], False)
        if changed_rows and message:
            message[0]["changed"]["fields"] += changed_rows
        elif changed_rows:
            message = [{"changed": {"fields": changed_rows}}]
        self.log_change(request, obj, message)
        return obj

    def deletion_protected(self, objs: list[Any]) -> list[Any]:
        # The service refuses to delete a league anyone took part in: its history stays.
        return [
            format_html("{}: it has weeks of history", obj)
            for obj in objs
            if selectors.league_has_history(obj.tenant, obj.pk)
        ]

    # --- list columns --------------------------------------------------------------------------

    @admin.display(description="Scores")
    def scored_column(self, obj: League) -> str:
        return scored_on(obj)

    @admin.display(description="Week ends")
    def week_end_column(self, obj: League) -> str:
        return week_end_text(obj)

    @admin.display(description="Tiers")
    def tiers_column(self, obj: League) -> int:
        return len(obj.tiers)

    @admin.display(description="This week")
    def cohorts_link(self, obj: League) -> SafeString:
        return format_html('<a href="{}">Cohorts</a>', self.url("cohorts", obj))

    # --- pages ---------------------------------------------------------------------------------

    def object_views(self) -> dict[str, View]:
        return {"cohorts": self.cohorts_view}

    def cohorts_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        # object_or_404 reads the scoped queryset: another tenant's league is not found.
        league = self.object_or_404(request, object_id, change=False)
        url = self.url("cohorts", league)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Cohorts of {league.name}",
            "subtitle": None,
            "original": league,
            "media": self.media,
            "change_url": self.url("change", league),
            "has_change_permission": self.has_change_permission(request, league),
            "units": units(league),
            **cohorts_context(request, league, url),
        }
        return TemplateResponse(request, COHORTS_TEMPLATE, context)

    def page_context(self, request: HttpRequest, obj: League | None) -> dict[str, Any]:
        if obj is None:
            return {}
        now = timezone.now()
        current = week_of(obj, now)
        since = current.start - dt.timedelta(weeks=WEEKS_SHOWN - 1)
        url = self.url("cohorts", obj)
        weeks = [
            (
                week,
                week_text(obj, week.week_start, week.week_end),
                cohorts_url(
                    url,
                    week=None if week.week_start == current.start else week_param(week.week_start),
                ),
            )
            for week in selectors.league_week_counts(obj.tenant, obj.pk, since=since)
        ]
        counts = selectors.week_tier_counts(obj.tenant, obj.pk, current.start)
        this_week = [
            (tier_name(obj, index), counts[index].members if index in counts else 0)
            for index in reversed(range(len(obj.tiers)))
        ]
        users = sum(members for _, members in this_week)
        return {
            "cohorts_url": url,
            "summary": summary(
                obj,
                this_week=f"{counted(users, 'user')}, {week_text(obj, current.start, current.end)}",
            ),
            "weeks": weeks,
            "weeks_shown": WEEKS_SHOWN,
            "this_week_tiers": this_week,
            "this_week_users": users,
        }
