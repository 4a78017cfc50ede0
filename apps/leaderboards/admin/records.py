"""Ranking entries and daily rank snapshots, read-only: only the pipeline and the snapshot job
write them. The live rankings page shows them ranked; these lists are for searching."""

from decimal import Decimal
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.base import ReadOnlyAdmin, ScopedFilter
from apps.leaderboards.admin.display import value_text
from apps.leaderboards.choices import RankBy
from apps.leaderboards.domain import rank_order_by
from apps.leaderboards.models import Leaderboard, LeaderboardEntry, LeaderboardSnapshot
from apps.streaks.selectors import streak_config
from apps.users.end_user_rows import EndUserRowsMixin

# Each row names its board and formats its value with the board's metric or points system.
BOARD_RELATED = ("leaderboard__metric", "leaderboard__points_system", "user")


class RecordColumnsMixin(EndUserRowsMixin):
    """The columns of a board's rows, which belong to the tenant of their board."""

    tenant_lookup: str | None = "leaderboard__tenant"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).select_related(*BOARD_RELATED, "leaderboard__tenant")

    @admin.display(description="Leaderboard", ordering="leaderboard__key")
    def board_column(self, obj: Any) -> SafeString:
        url = reverse("admin:leaderboards_leaderboard_rankings", args=[obj.leaderboard_id])
        return format_html('<a href="{}">{}</a>', url, obj.leaderboard.name)

    @admin.display(description="Value", ordering="value")
    def value_column(self, obj: Any) -> str:
        if obj.value is None:
            return "-"
        board: Leaderboard = obj.leaderboard
        frequency = ""
        if board.rank_by == RankBy.STREAK:
            # Cached per tenant and configuration version: one read for the whole page.
            frequency = streak_config(board.tenant).frequency
        return value_text(board, Decimal(obj.value), frequency)


class BoardFilter(ScopedFilter):
    """The selected tenant's boards."""

    ordering = ("name",)

    def label(self, row: Leaderboard) -> str:
        return f"{row.name} ({row.key})"


@admin.register(LeaderboardEntry)
class LeaderboardEntryAdmin(RecordColumnsMixin, ReadOnlyAdmin):
    list_display = ("board_column", "run_start", "group", "user_link", "value_column", "reached_at")
    list_display_links = ("reached_at",)
    list_filter = (("leaderboard", BoardFilter), "run_start")
    # Rank order within each run and group (the rank index).
    ordering = ("leaderboard_id", "-run_start", "group", *rank_order_by())
    fields = ("board_column", "run_start", "group", "user_link", "value_column", "reached_at")
    readonly_fields = fields


@admin.register(LeaderboardSnapshot)
class LeaderboardSnapshotAdmin(RecordColumnsMixin, ReadOnlyAdmin):
    list_display = ("board_column", "run_start", "user_link", "date", "rank", "value_column")
    list_display_links = ("date",)
    list_filter = (("leaderboard", BoardFilter), "date")
    fields = ("board_column", "run_start", "user_link", "date", "rank", "value_column")
    readonly_fields = fields
