"""Support's list of the streaks lost lately: who lost how long a streak and when, what their
streak is now, and a one-click restore. The restore is the end-user page's own action (its URL,
its service, its message, its log entry): the button posts the list's form there, with the list
as the page to come back to."""

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.base import PageRowsChangeList, ReadOnlyAdmin
from apps.accounts.staff import selected_tenant
from apps.core.shown_time import date_shown, moment_shown
from apps.core.wording import counted
from apps.streaks.domain import unit_of
from apps.streaks.models import StreakLoss
from apps.streaks.selectors import StreakView, streak_losses_since, streak_views_of
from apps.users.end_user_rows import EndUserRowsMixin

# What the list covers: losses support can still act on while the user remembers the streak.
RECENT_DAYS = 7
# The end-user page's actions take the change permission on end-users
# (apps/pipeline/dashboard_user/actions.py); the button is offered to those who have it.
RESTORE_PERMISSION = "users.change_enduser"


@dataclass(frozen=True)
class _Row:
    """What a row of the page shows besides the loss (StreakLossAdmin.page_rows_load)."""

    view: StreakView | None  # the user's streak now
    may_restore: bool
    back: str  # the list, to come back to after a restore


_ROW = "support_row"


def _row(obj: StreakLoss) -> _Row:
    return getattr(obj, _ROW, _Row(None, False, ""))


@admin.register(StreakLoss)
class StreakLossAdmin(EndUserRowsMixin, ReadOnlyAdmin):
    list_display = ("user_link", "length_column", "lost_column", "now_column", "restore_column")

    list_display_links = None
    list_title = True  # the page says its window (changelist_view): base_site.html shows it
    list_select_related = ("user",)
    list_filter = ("frequency",)
    ordering = ("-lost_at", "-pk")
    list_per_page = 50
    search_help_text = (
        f"Search by exact end-user id. Streaks lost in the last {RECENT_DAYS} days, newest "
        "first; a restore sets the streak to the longest length inside the restore window."
    )
    actions = None
    fields = ("user", "frequency", "length", "missed_period", "lost_at", "restored_at")
    readonly_fields = fields

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[PageRowsChangeList]:
        return PageRowsChangeList

    def get_queryset(self, request: HttpRequest) -> QuerySet[StreakLoss]:
        tenant = selected_tenant(request)
        if tenant is None:
            return StreakLoss.objects.none()
        since = timezone.now() - dt.timedelta(days=RECENT_DAYS)
        return streak_losses_since(tenant, since)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        title = f"Streaks lost in the last {RECENT_DAYS} days"
        return super().changelist_view(request, {"title": title, **(extra_context or {})})

    def page_rows_load(self, request: HttpRequest, rows: list[StreakLoss]) -> None:
        """Each row's user's streak now (two queries for the page), and whether staff may
        restore it."""
        tenant = selected_tenant(request)
        users = list({row.user_id: row.user for row in rows}.values())
        views = streak_views_of(tenant, users, timezone.now()) if tenant is not None else {}
        may_restore = request.user.has_perm(RESTORE_PERMISSION)
        for row in rows:
            # On the rows, not the admin: one admin object serves every request at once.
            setattr(row, _ROW, _Row(views.get(row.user_id), may_restore, request.get_full_path()))

    @admin.display(description="Length lost", ordering="length")
    def length_column(self, obj: StreakLoss) -> str:
        return counted(obj.length, unit_of(obj.frequency))

    @admin.display(description="When", ordering="lost_at")
    def lost_column(self, obj: StreakLoss) -> SafeString:
        # The instant the period that nothing kept ended; within the last 7 days, the year goes
        # without saying.
        return format_html(
            '<span title="{} was the first {} nothing kept">{}</span>',
            date_shown(obj.missed_period),
            unit_of(obj.frequency),
            moment_shown(obj.lost_at),
        )

    @admin.display(description="Now")
    def now_column(self, obj: StreakLoss) -> str:
        view = _row(obj).view
        if view is None:
            return "-"
        return counted(view.length, unit_of(view.config.frequency))

    @admin.display(description="")
    def restore_column(self, obj: StreakLoss) -> SafeString | str:
        if obj.restored_at is not None:
            return format_html('<span title="{}">restored</span>', moment_shown(obj.restored_at))
        view = _row(obj).view
        if view is not None and view.length >= obj.length:
            return "back at its length"
        if not _row(obj).may_restore:
            return "-"
        # The changelist is one form (with its CSRF token): the button posts it to the end-user
        # page's restore action, which comes back here.
        url = reverse("admin:users_enduser_streak_restore", args=[obj.user_id])
        return format_html(
            '<button type="submit" class="button streak-restore" formaction="{}" '
            'formmethod="post" name="next" value="{}">Restore</button>',
            url,
            _row(obj).back,
        )
