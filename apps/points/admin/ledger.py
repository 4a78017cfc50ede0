"""The award ledger and the totals (read-only: only the pipeline writes them)."""

from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ReadOnlyAdmin,
    TenantColumnMixin,
    TenantFilter,
)
from apps.points.admin.part_pages import SystemFilter
from apps.points.choices import SystemStatus
from apps.points.models import PointsAward, PointsTotal


def _link(obj: Any, text: Any) -> SafeString:
    opts = obj._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, text)


class LedgerColumnsMixin:
    """Needs "user" and "system" in list_select_related."""

    @admin.display(description="User", ordering="user__external_id")
    def user_link(self, obj: Any) -> SafeString:
        return _link(obj.user, obj.user.external_id)

    @admin.display(description="Points system", ordering="system__key")
    def system_key(self, obj: Any) -> str:
        if obj.system.status == SystemStatus.ARCHIVED:
            return f"{obj.system.key} (archived)"
        return str(obj.system.key)


def _trigger_type(award: PointsAward) -> str:
    # The snapshot, not the trigger: a deleted trigger's awards keep what it was.
    return str((award.trigger_snapshot or {}).get("type", "-"))


def _multiplier(value: Any) -> str:
    # Multipliers are kept as JSON numbers: 2.0 reads as 2.
    try:
        return format(Decimal(str(value)).normalize(), "f")
    except InvalidOperation:
        return str(value)


def _boosts(award: PointsAward) -> str:
    return (
        ", ".join(f"{b.get('name')} x{_multiplier(b.get('multiplier'))}" for b in award.boosts)
        or "-"
    )


@admin.register(PointsAward)
class PointsAwardAdmin(LedgerColumnsMixin, TenantColumnMixin, ReadOnlyAdmin):
    list_display = (
        "created",
        "user_link",
        "system_key",
        "awarded",
        "total_after",
        "trigger_type",
        "boosts_column",
        "tenant_column",
    )
    list_select_related = ("user", "system", TENANT_RELATED)
    list_filter = (
        ("system", SystemFilter),
        ("created", admin.DateFieldListFilter),
        ("tenant", TenantFilter),
    )
    search_fields = ("=user__external_id",)
    search_help_text = "Search by exact end-user id."
    # Awards are inserted as they are paid, so the primary key follows time and its index
    # serves the newest-first list without sorting the whole ledger.
    ordering = ("-pk",)
    show_full_result_count = False
    fields = (
        "public_id",
        "tenant_column",
        "user_link",
        "system_key",
        "awarded",
        "total_after",
        "trigger_type",
        "boosts_column",
        "created",
        "local_date",
        "dedupe_key",
        "trigger_snapshot",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsAward]:
        return super().get_queryset(request).select_related("user", "system", TENANT_RELATED)

    @admin.display(description="Trigger type")
    def trigger_type(self, obj: PointsAward) -> str:
        return _trigger_type(obj)

    @admin.display(description="Boosts")
    def boosts_column(self, obj: PointsAward) -> str:
        return _boosts(obj)


@admin.register(PointsTotal)
class PointsTotalAdmin(LedgerColumnsMixin, TenantColumnMixin, ReadOnlyAdmin):
    list_display = ("user_link", "system_key", "total", "level_column", "tenant_column")
    # The user column links to the end-user; the total opens the row.
    list_display_links = ("total",)
    list_select_related = ("user", "system", "level", TENANT_RELATED)
    list_filter = (("system", SystemFilter), ("tenant", TenantFilter))
    search_fields = ("=user__external_id",)
    search_help_text = "Search by exact end-user id."
    ordering = ("-pk",)
    show_full_result_count = False
    fields = (
        "tenant_column",
        "user_link",
        "system_key",
        "total",
        "level_column",
        "first_activity_at",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[PointsTotal]:
        return (
            super().get_queryset(request).select_related("user", "system", "level", TENANT_RELATED)
        )

    @admin.display(description="Level", ordering="level__points")
    def level_column(self, obj: PointsTotal) -> str:
        return f"{obj.level.key} ({obj.level.name})" if obj.level is not None else "-"
